/**
 * `mcp-fleet/ai`: the fleet's tools as an `@effect/ai` toolkit, and an app's own toolkit as
 * MCP tools. Needs `@effect/ai` (an optional peer dependency); the main entry never loads it.
 *
 * @since 0.1.0
 */

/** The fleet's tools as a live @effect/ai toolkit, policy-aware; an app's toolkit as MCP tool items. */
export * as AiToolkit from "../AiToolkit.js"
