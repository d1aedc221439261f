/**
 * Capability gating: a call the server did not declare the capability for fails with
 * Unsupported before anything is sent.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"

/**
 * What a call may need the server to support.
 */
export type Feature =
  | "tools"
  | "resources"
  | "resources.subscribe"
  | "prompts"
  | "completions"
  | "logging"
  | "tasks.list"

/**
 * Whether a server that declared `capabilities` under `protocolVersion` supports `feature`.
 */
export const supports = (
  capabilities: McpSchema.ServerCapabilities,
  protocolVersion: McpSchema.Revision,
  feature: Feature
): boolean => {
  switch (feature) {
    case "resources.subscribe":
      return capabilities.resources?.subscribe === true
    case "tasks.list":
      return capabilities.tasks?.list !== undefined
    case "completions":
      // 2024-11-05 had no completions capability: completion came with prompts or resources.
      return capabilities.completions !== undefined ||
        (protocolVersion === "2024-11-05" &&
          (capabilities.prompts !== undefined || capabilities.resources !== undefined))
    default:
      return capabilities[feature] !== undefined
  }
}

/**
 * The failure of a call that needs `feature`.
 */
export const unsupported = (
  server: string,
  feature: Feature,
  action: string
): Effect.Effect<never, McpError.McpError> =>
  Effect.fail(McpError.unsupported(server, {
    message: `cannot ${action}: the server did not declare the '${feature}' capability`
  }))
