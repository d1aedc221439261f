/**
 * The lifecycle of one server of the fleet, as a tagged union:
 * Pending → Connecting → Ready, and from there Failed (retrying or for good), Idle,
 * NeedsAuth, Disabled or Stopped.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type { McpError } from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * Where a server is in its lifecycle. Times are Clock milliseconds.
 *
 * - `Pending`: known, not started yet (or about to start again after a restart request).
 * - `Connecting`: starting and initializing, since `since`; `attempt` counts failures in a
 *   row plus one.
 * - `Ready`: initialized, lists fetched, taking calls.
 * - `Failed`: the last attempt failed; it starts again at `retryAt`, or never when that is
 *   undefined (the attempt limit was reached or the error cannot be fixed by retrying).
 * - `NeedsAuth`: the server wants credentials; it waits for a restart, or (OAuth) for
 *   `ServerRegistry.authorize`, with the `authorizationUrl` a person visits when known.
 * - `Idle`: stopped after its idle timeout, or (`lazy`) a lazy server not started; the next
 *   call starts it (again).
 * - `Disabled`: switched off by config or `disable`.
 * - `Stopped`: removed from the fleet or the fleet shut down.
 *
 * @since 0.1.0
 */
export type ServerState = Data.TaggedEnum<{
  Pending: {}
  Connecting: { readonly attempt: number; readonly since: number }
  Ready: {
    readonly protocolVersion: McpSchema.Revision
    readonly serverInfo: McpSchema.Implementation
    readonly since: number
  }
  Failed: { readonly error: McpError; readonly attempt: number; readonly retryAt: number | undefined }
  NeedsAuth: { readonly error: McpError; readonly authorizationUrl?: string | undefined }
  Idle: { readonly since: number; readonly lazy?: boolean | undefined }
  Disabled: {}
  Stopped: {}
}>

/**
 * Constructors and matchers of ServerState.
 *
 * @since 0.1.0
 */
export const ServerState = Data.taggedEnum<ServerState>()

/**
 * Whether waiting cannot make the server ready: only a restart, an enable or a new config can.
 *
 * @since 0.1.0
 */
export const isTerminal = (state: ServerState): boolean =>
  state._tag === "Disabled" || state._tag === "Stopped" || state._tag === "NeedsAuth" ||
  (state._tag === "Failed" && state.retryAt === undefined)

/**
 * Whether a change of state is a restart: a connection started again after one failed
 * (Failed, then Connecting), or a restart asked of a server that was up (Ready or Idle, then
 * Pending). `mcp_fleet.server.restarts` and the dashboard both count by this rule.
 *
 * @since 0.3.0
 */
export const isRestart = (previous: ServerState, next: ServerState): boolean =>
  (previous._tag === "Failed" && next._tag === "Connecting") ||
  ((previous._tag === "Ready" || previous._tag === "Idle") && next._tag === "Pending")

// A wait as a person reads it: "2.5 s", "31 s", "4 min 10 s".
const elapsed = (ms: number): string => {
  const seconds = ms / 1000
  if (seconds < 10) return `${seconds.toFixed(1)} s`
  if (seconds < 60) return `${Math.floor(seconds)} s`
  return `${Math.floor(seconds / 60)} min ${Math.floor(seconds % 60)} s`
}

/**
 * A short description for status lines and errors: "Failed (attempt 3, retry in 4000 ms)",
 * "Connecting for 31 s" (how long it has been at it, once that is a second or more).
 *
 * @since 0.1.0
 */
export const describe = (state: ServerState, now: number): string => {
  switch (state._tag) {
    case "Connecting": {
      const tag = state.attempt > 1 ? `Connecting (attempt ${state.attempt})` : "Connecting"
      return now - state.since >= 1000 ? `${tag} for ${elapsed(now - state.since)}` : tag
    }
    case "Failed":
      return state.retryAt === undefined
        ? `Failed after ${state.attempt} attempt${state.attempt === 1 ? "" : "s"}: ${state.error.message}`
        : `Failed (attempt ${state.attempt}, retry in ${Math.max(0, state.retryAt - now)} ms): ${state.error.message}`
    case "NeedsAuth": {
      // Said plainly: who, why, and what to do; the refusal's details stay in the error.
      const status = state.error.reason._tag === "Http" ? ` (it answered HTTP ${state.error.reason.status})` : ""
      const server = state.error.server ?? "the server"
      return `NeedsAuth: ${
        state.error.server === undefined ? server : `server '${server}'`
      } needs authorization${status}: run 'mcp-fleet auth ${server}'`
    }
    case "Idle":
      return state.lazy === true ? "Idle (lazy: starts on first use)" : "Idle"
    default:
      return state._tag
  }
}
