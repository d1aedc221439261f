/**
 * What the fleet publishes as it changes: server state changes, catalog differences,
 * resource updates and server log messages.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type { McpError } from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import type { ServerState } from "./ServerState.js"

/**
 * One change of the fleet. List changes carry the items themselves; `changed` items are
 * the new versions.
 *
 * @since 0.1.0
 */
export type RegistryEvent = Data.TaggedEnum<{
  ServerStateChanged: { readonly server: string; readonly state: ServerState; readonly previous: ServerState }
  ToolsChanged: {
    readonly server: string
    readonly added: ReadonlyArray<McpSchema.Tool>
    readonly removed: ReadonlyArray<McpSchema.Tool>
    readonly changed: ReadonlyArray<McpSchema.Tool>
  }
  ResourcesChanged: {
    readonly server: string
    readonly added: ReadonlyArray<McpSchema.Resource>
    readonly removed: ReadonlyArray<McpSchema.Resource>
    readonly changed: ReadonlyArray<McpSchema.Resource>
  }
  ResourceTemplatesChanged: {
    readonly server: string
    readonly added: ReadonlyArray<McpSchema.ResourceTemplate>
    readonly removed: ReadonlyArray<McpSchema.ResourceTemplate>
    readonly changed: ReadonlyArray<McpSchema.ResourceTemplate>
  }
  PromptsChanged: {
    readonly server: string
    readonly added: ReadonlyArray<McpSchema.Prompt>
    readonly removed: ReadonlyArray<McpSchema.Prompt>
    readonly changed: ReadonlyArray<McpSchema.Prompt>
  }
  /** A re-list after list_changed failed; the last good list is kept. */
  RefreshFailed: { readonly server: string; readonly list: "tools" | "resources" | "prompts"; readonly error: McpError }
  ResourceUpdated: { readonly server: string; readonly uri: string }
  LogMessage: {
    readonly server: string
    readonly level: McpSchema.LoggingLevel
    readonly logger: string | undefined
    readonly data: unknown
  }
}>

/**
 * Constructors and matchers of RegistryEvent.
 *
 * @since 0.1.0
 */
export const RegistryEvent = Data.taggedEnum<RegistryEvent>()
