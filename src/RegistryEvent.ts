/**
 * What the fleet publishes as it changes: server state changes, catalog differences,
 * tools whose definition drifted from their pin, items holding hidden text, resource updates, server log messages and
 * the status of tasks its calls became.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Catalog from "./Catalog.js"
import type { McpError } from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import type { ServerState } from "./ServerState.js"
import type * as ToolPins from "./ToolPins.js"

/**
 * What changed in one of a server's lists; `changed` items are the new versions.
 *
 * @since 0.1.0
 */
export interface ListChange<A> {
  readonly server: string
  readonly added: ReadonlyArray<A>
  readonly removed: ReadonlyArray<A>
  readonly changed: ReadonlyArray<A>
}

/**
 * One change of the fleet.
 *
 * @since 0.1.0
 */
export type RegistryEvent = Data.TaggedEnum<{
  ServerStateChanged: { readonly server: string; readonly state: ServerState; readonly previous: ServerState }
  ToolsChanged: ListChange<McpSchema.Tool>
  ResourcesChanged: ListChange<McpSchema.Resource>
  ResourceTemplatesChanged: ListChange<McpSchema.ResourceTemplate>
  PromptsChanged: ListChange<McpSchema.Prompt>
  /**
   * A tool's definition differs from its pin (see ToolPins): `before` is the pinned one
   * (undefined for a tool new on a server whose tools were pinned), `after` the one the
   * server offers now. `quarantined` when the tool is held out of the
   * catalog until approved; otherwise it stays, with its new definition. Published once per
   * new definition.
   */
  ToolDrifted: {
    readonly server: string
    readonly tool: string
    readonly before: ToolPins.Pin | undefined
    readonly after: ToolPins.Pin
    readonly quarantined: boolean
  }
  /**
   * A tool, prompt, resource or template of the server holds hidden text in its name,
   * title or description (see `Catalog.SanitizeMode`): `action` says what the catalog shows
   * of it (`stripped`, `flagged`: made visible). Published once per item and finding.
   */
  ToolFlagged: {
    readonly server: string
    readonly kind: Catalog.Flagged["kind"]
    /** Its name on its server. */
    readonly name: string
    readonly fields: ReadonlyArray<string>
    readonly found: Catalog.Flagged["found"]
    readonly action: "stripped" | "flagged"
  }
  /** A re-list after list_changed failed; the last good list is kept. */
  RefreshFailed: { readonly server: string; readonly list: "tools" | "resources" | "prompts"; readonly error: McpError }
  ResourceUpdated: {
    readonly server: string
    readonly uri: string
    /** Whose instance of a `perPrincipal` server told it; none for a server shared by all. */
    readonly principal?: string | undefined
  }
  /**
   * A tool call routed through the fleet runs as a task (2025-11-25), and its status or
   * status message changed: published when created, and at each change seen by polling or
   * told by the server, up to its final status.
   */
  TaskStatusChanged: {
    readonly server: string
    readonly taskId: string
    readonly tool: string
    readonly status: McpSchema.Task["status"]
    readonly statusMessage: string | undefined
  }
  LogMessage: {
    readonly server: string
    readonly level: McpSchema.LoggingLevel
    readonly logger: string | undefined
    readonly data: unknown
    /**
     * Sent by a 2026-07-28 server for one of the fleet's requests (it sends log messages only
     * for requests that name a level); a call's were told to its `onLog` too. False for a
     * stateful server's.
     */
    readonly perRequest: boolean
  }
}>

/**
 * Constructors and matchers of RegistryEvent.
 *
 * @since 0.1.0
 */
export const RegistryEvent = Data.taggedEnum<RegistryEvent>()
