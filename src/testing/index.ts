/**
 * Test helpers for mcp-fleet users: an in-memory MCP server driven by the TestClock.
 *
 * @since 0.1.0
 */

/** An in-memory MCP server built from data and Effects. */
export * as FakeServer from "./FakeServer.js"
