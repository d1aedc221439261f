/**
 * Capability gating: a call the server did not declare the capability for fails with
 * Unsupported before anything is sent. The one difference between revisions, a table: a
 * 2024-11-05 server had no completions capability.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"

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
  | "skills"

// The revisions whose servers complete arguments with the prompts or resources capability
// alone: 2024-11-05 had no completions capability.
const COMPLETION_WITH_PROMPTS: ReadonlySet<McpSchema.Revision> = new Set(["2024-11-05"])

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
    case "skills": {
      // An extension (SEP-2640), declared under `extensions`.
      const extensions = capabilities.extensions
      return typeof extensions === "object" && extensions !== null && McpSchema.SKILLS_EXTENSION in extensions
    }
    case "completions":
      // 2024-11-05 had no completions capability: completion came with prompts or resources.
      return capabilities.completions !== undefined ||
        (COMPLETION_WITH_PROMPTS.has(protocolVersion) &&
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

/**
 * A connection's gate: whether the server supports a feature, and an effect run only if it does.
 */
export interface Gate {
  readonly supported: (feature: Feature) => boolean
  readonly gate: <A>(
    feature: Feature,
    action: string,
    effect: Effect.Effect<A, McpError.McpError>
  ) => Effect.Effect<A, McpError.McpError>
}

/**
 * The gate of `server`, which declared `capabilities` under `protocolVersion`.
 */
export const makeGate = (
  server: string,
  capabilities: McpSchema.ServerCapabilities,
  protocolVersion: McpSchema.Revision
): Gate => {
  const supported = (feature: Feature) => supports(capabilities, protocolVersion, feature)
  return {
    supported,
    gate: (feature, action, effect) => supported(feature) ? effect : unsupported(server, feature, action)
  }
}
