/**
 * One client session and what it keeps: the client, its log level, its subscriptions (the
 * tasks it reaches are the server's: `tasks.ts`), and the Peer handler every request it
 * receives goes through. That handler is where a request comes in: it chooses the request's
 * era once (`era.ts`: a stateful session's requests are legacy, a modern request before
 * initialize is modern) and the era answers it (`legacy.ts`, `modern.ts`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type { Client, Handlers, ListKind, Options, Outbound, Session as PublicSession } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import type { Principal } from "../../ResourceServer.js"
import type { SessionLink } from "./context.js"
import { choose, type Era } from "./era.js"
import { McpServerError } from "./error.js"
import { tooDeep } from "./errors.js"
import { admits } from "./logging.js"

/** The state of one session, as the built-in methods and the contexts see it. */
export class Session implements SessionLink {
  client: Client | undefined = undefined
  initialized = false
  level: McpSchema.LoggingLevel | undefined = undefined
  handlers: Handlers | undefined
  readonly subscriptions = new Set<string>()
  peer: Peer.Peer | undefined = undefined
  /** The capabilities initialize declared. */
  declared: McpSchema.ServerCapabilities = {}
  /** The session as its owner sees it, once its Peer runs. */
  view!: PublicSession
  /** Whether the session was made for one modern request alone (`alone.ts`), which may make it its own. */
  alone = false
  /** Whether the session has ended (its Scope closed): a task it followed waits for another. */
  ended = false

  constructor(
    readonly options: Options,
    readonly scope: Scope.Scope,
    readonly outbound: Outbound
  ) {
    this.handlers = typeof options.handlers === "function" ? undefined : options.handlers
  }

  get caller(): Principal | undefined {
    return this.outbound.caller
  }

  /** Whether a log message at `level` goes to the client: logging declared, and its level admits it. */
  admits(level: McpSchema.LoggingLevel): boolean {
    return this.declared.logging !== undefined && admits(this.level, level)
  }

  /** Whether the client was told that the list of `kind` may change. */
  announces(kind: ListKind): boolean {
    return this.declared[kind]?.listChanged === true
  }

  get pageSize(): number {
    return this.options.pageSize ?? 100
  }

  notify = (method: string, params: Record<string, unknown> | undefined, related?: JsonRpc.RequestId) =>
    this.outbound.notify !== undefined
      ? this.outbound.notify(method, params, related)
      : this.peer === undefined
      ? Effect.void
      : Effect.ignore(this.peer.notify(method, params))

  /** A request to the client, as part of request `related` when given. */
  send = (
    method: string,
    params?: Record<string, unknown> | undefined,
    related?: JsonRpc.RequestId | undefined,
    options?: Peer.RequestOptions | undefined
  ): Effect.Effect<Record<string, unknown>, McpError.McpError> =>
    Effect.suspend(() => {
      const send = this.peer!.request(method, params, options)
      return this.outbound.within === undefined || related === undefined ? send : this.outbound.within(related, send)
    })

  request = (
    related: JsonRpc.RequestId | undefined,
    method: string,
    params: Record<string, unknown> | undefined,
    options: Peer.RequestOptions | undefined
  ): Effect.Effect<Record<string, unknown>, McpServerError> =>
    this.send(method, params, related, options).pipe(
      Effect.mapError((error) => new McpServerError({ reason: "Client", method, message: error.message, cause: error }))
    )
}

/**
 * The Peer handlers of `session`: every method of its eras, each request answered by the era
 * `choose` gives it (`modern` when the server answers modern requests), under `served` (its
 * span and duration point).
 */
export const peerHandlers = (
  session: Session,
  legacy: Era,
  modern: Era | undefined,
  served: (request: JsonRpc.Request, answer: ReturnType<Peer.Handler>) => ReturnType<Peer.Handler>
): Record<string, Peer.Handler> => {
  const handler: Peer.Handler = (request) => {
    const refused = tooDeep(request)
    return served(
      request,
      refused !== undefined ? Effect.fail(refused) : choose(session, request, legacy, modern).answer(session, request)
    )
  }
  const table: Record<string, Peer.Handler> = {}
  for (const method of legacy.methods) table[method] = handler
  for (const method of modern?.methods ?? []) table[method] = handler
  return table
}
