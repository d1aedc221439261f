/**
 * `mcp-fleet/ai`: the fleet's tools as an `@effect/ai` toolkit. Needs `@effect/ai` (an
 * optional peer dependency); the main entry never loads it.
 *
 * @since 0.1.0
 */

/** The fleet's tools as a live @effect/ai toolkit, policy-aware. */
export * as AiToolkit from "../AiToolkit.js"
