/**
 * `mcp-fleet/ai-sdk`: the fleet's tools as an AI SDK ToolSet. Needs `ai` (an optional peer
 * dependency); the main entry never loads it.
 *
 * @since 0.1.0
 */

/** The fleet's tools as an AI SDK ToolSet (`toAiSdkTools`), policy-aware. */
export * as AiSdk from "../AiSdk.js"
