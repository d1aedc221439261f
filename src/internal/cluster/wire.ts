/**
 * A server's status and lists as JSON for `mcp_fleet_servers`, and back. Errors go through
 * McpError's Schema (their messages are masked by the actor already); the connection facts
 * (process ids and the like) stay on the runner.
 *
 * @since 0.3.0
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Catalog from "../../Catalog.js"
import * as McpError from "../../McpError.js"
import * as McpErrorSchema from "../../McpErrorSchema.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import { ServerState } from "../../ServerState.js"
import type * as Store from "./store.js"

const encodeError = Schema.encodeSync(McpErrorSchema.McpError)
const decodeError = Schema.decodeUnknownOption(McpErrorSchema.McpError)

type Json = Record<string, unknown>

const errorOut = (error: McpError.McpError | undefined): unknown =>
  error === undefined ? undefined : encodeError(new McpError.McpError({ ...error, cause: undefined }))

const errorIn = (value: unknown): McpError.McpError | undefined =>
  value === undefined || value === null ? undefined : Option.getOrUndefined(decodeError(value))

const stateOut = (state: ServerState): Json =>
  "error" in state ? { ...state, error: errorOut(state.error) } : { ...state }

// A row written by another version may hold an error this one cannot read: it becomes a
// Failed state with a Config error that says so, never a crash.
const stateIn = (value: Json): ServerState => {
  if (value.error === undefined) return value as unknown as ServerState
  const error = errorIn(value.error) ??
    McpError.config(undefined, { message: "the runner's error could not be read" })
  return { ...value, error } as unknown as ServerState
}

/** A status as stored. */
export const statusOut = (status: ServerRegistry.ServerStatus): Json => ({
  ...status,
  state: stateOut(status.state),
  lastError: errorOut(status.lastError),
  connection: undefined
})

/** A stored status as the `ServerStatus` a replica shows; Pending while no runner wrote one. */
export const statusIn = (name: string, value: unknown): ServerRegistry.ServerStatus => {
  if (value === null || typeof value !== "object") {
    return {
      name,
      state: ServerState.Pending(),
      transport: "stdio",
      required: false,
      protocolVersion: undefined,
      serverInfo: undefined,
      counts: { tools: 0, resources: 0, templates: 0, prompts: 0 },
      lastError: undefined,
      connection: undefined,
      tasks: []
    }
  }
  const json = value as Json
  return {
    ...(json as unknown as ServerRegistry.ServerStatus),
    name,
    state: stateIn(json.state as Json),
    lastError: errorIn(json.lastError),
    connection: undefined,
    tasks: Array.isArray(json.tasks) ? json.tasks as ReadonlyArray<ServerRegistry.TaskInFlight> : []
  }
}

/** Stored lists as the catalog's; empty when none were written. */
export const listsIn = (value: unknown): Catalog.ServerLists => {
  const json = value !== null && typeof value === "object" ? value as Partial<Catalog.ServerLists> : {}
  return {
    tools: json.tools ?? [],
    resources: json.resources ?? [],
    templates: json.templates ?? [],
    prompts: json.prompts ?? []
  }
}

/** One server's lists, as its runner's catalog offers them (sanitized and pinned there). */
export const listsOf = (catalog: Catalog.Catalog, server: string): Catalog.ServerLists => ({
  tools: catalog.tools.filter((entry) => entry.server === server).map((entry) => entry.tool),
  resources: catalog.resources.filter((entry) => entry.server === server).map((entry) => entry.resource),
  templates: catalog.templates.filter((entry) => entry.server === server).map((entry) => entry.template),
  prompts: catalog.prompts.filter((entry) => entry.server === server).map((entry) => entry.prompt)
})

/** The per-principal instances' rows, by server (in their order). */
export const instancesIn = (
  rows: ReadonlyArray<Store.InstanceRow>
): ReadonlyMap<string, ReadonlyArray<ServerRegistry.PrincipalInstance>> => {
  const byServer = new Map<string, Array<ServerRegistry.PrincipalInstance>>()
  for (const row of rows) {
    const instance = { principal: row.principal, runner: row.runner, state: row.state as ServerState["_tag"] }
    byServer.set(row.server, [...(byServer.get(row.server) ?? []), instance])
  }
  return byServer
}
