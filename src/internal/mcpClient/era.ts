/**
 * The seam between the two revision families a connection may speak: legacy (2024-11-05 …
 * 2025-11-25: the initialize handshake, a session, the server's state of us) and modern
 * (2026-07-28: `server/discover`, every request carrying our `_meta`, no session). An `Era`
 * owns everything that differs between them — how a request is sent and its result given
 * back, caching, which listed tools are kept, what the host tells the server, tool calls and
 * their tasks, taking a task up again, notifications and subscriptions, and the operations
 * one family does its own way — and has exactly two implementations, `legacy.ts` and
 * `modern.ts`.
 *
 * The era is chosen once per connection, by `chooseEra`, right after the handshake
 * (`handshake.ts`) agreed on a revision: a `server/discover` answer makes it modern, and the
 * fallback to initialize (a server that predates 2026-07-28, or a legacy revision asked for)
 * makes it legacy. From then on `McpClient.make` and the other files of this folder never
 * ask which revision they are in: they call the era. (Capability gating per revision is the
 * table in `capabilities.ts`.) What can be decided once per connection is decided when the
 * era is made, so a call pays for none of it.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as JsonRpc from "../../JsonRpc.js"
import type { CallToolOptions, FollowTaskOptions, McpClient } from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import type { Connection } from "./connection.js"
import type { Agreed } from "./handshake.js"
import { makeLegacy } from "./legacy.js"
import { makeModern } from "./modern.js"
import type { Operations, Parts } from "./operations.js"
import type { TaskOptions } from "./tasks.js"

/**
 * How a tool call reaches the server and its result comes back, before the outputSchema
 * check: `params` and `requestOptions` as the call built them, and the call's own options
 * for what the era reads of them (`task`, `onTask`, `onInput`, `onLog`).
 */
export type SendCall = (
  name: string,
  params: Record<string, unknown>,
  requestOptions: TaskOptions,
  options: CallToolOptions | undefined
) => Effect.Effect<Record<string, unknown>, McpError.McpError>

/**
 * What one revision family does its own way, made once per connection.
 */
export interface Era {
  /** The Peer as this family's requests need it (modern: our `_meta` on each). */
  readonly wire: Peer.Peer
  /** A host notification (a roots change): legacy tells the server; modern has no session to tell. */
  readonly notify: (method: string, params?: Record<string, unknown>) => Effect.Effect<void, McpError.McpError>
  /** `McpClient.request`: sent, answered, decoded (modern: through the ttl cache, without the envelope). */
  readonly request: McpClient["request"]
  /** The tools of a listing that the connection keeps (modern: not those the transport refuses). */
  readonly accepted: (tools: ReadonlyArray<McpSchema.Tool>) => Effect.Effect<ReadonlyArray<McpSchema.Tool>>
  /**
   * Makes, once, the sender of tool calls; `requiresTask` says which listed tools must run as
   * a task (legacy: 2025-11-25 task-augmented calls; modern: the tasks extension and `onLog`).
   */
  readonly sendCall: (requiresTask: (name: string) => boolean) => SendCall
  /**
   * A tool call that is one request whose result is the call's (legacy, without task-augmented
   * calls), so a call with no options can have its result checked as it is read
   * (`Peer.RequestOptions.onAnswer`); undefined where a call may take more (input rounds, tasks).
   */
  readonly plainCall:
    | ((params: Record<string, unknown>, requestOptions: Peer.RequestOptions) => Effect.Effect<
      Record<string, unknown>,
      McpError.McpError
    >)
    | undefined
  /** Takes a task up again by its id, to the raw result of the call it was made of. */
  readonly followTask: (
    taskId: string,
    options: FollowTaskOptions | undefined
  ) => Effect.Effect<Record<string, unknown>, McpError.McpError>
  /** `McpClient.subscribe`, undecoded (modern: a listen stream held for the list changes). */
  readonly subscribe: Effect.Effect<Queue.Dequeue<JsonRpc.Notification>, never, Scope.Scope>
  /** The server's notifications, undecoded, as `subscribe` gives them. */
  readonly notifications: Stream.Stream<JsonRpc.Notification>
  /** The operations besides tools (modern: logging level, ping and resource subscriptions its own way). */
  readonly operations: (parts: Parts) => Operations
}

/**
 * Chooses the era of a connection once the handshake agreed on `agreed`, and tells the
 * connection (its host's notifications wait for it). `relist` lists the tools again, as the
 * connection lists them (modern: after a HeaderMismatch).
 */
export const chooseEra = (
  connection: Connection,
  agreed: Agreed,
  relist: Effect.Effect<unknown, McpError.McpError>
): Effect.Effect<Era, never, Scope.Scope> =>
  Effect.tap(
    McpSchema.isModernVersion(agreed.protocolVersion)
      ? makeModern(connection, agreed, agreed.protocolVersion, relist)
      : Effect.succeed(makeLegacy(connection, agreed)),
    (era) => Deferred.succeed(connection.chosen, era)
  )
