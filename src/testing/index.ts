/**
 * The test kit for mcp-fleet users (`mcp-fleet/testing`): an in-memory MCP server driven by
 * the TestClock, usable alone or as a server of a fleet (`FakeServer.spec`), and helpers to
 * make and read outcomes. Platform-neutral; temp folders and fixture processes, which need
 * Node, are in `mcp-fleet/testing/node`.
 *
 * @since 0.1.0
 */

/** An in-memory MCP server built from data and Effects, alone or as a fleet's server. */
export * as FakeServer from "./FakeServer.js"

/** Tool results of one text block, and reading results, failures and error reasons. */
export * as Results from "./Results.js"
