/**
 * One client session: the lifecycle (initialize, the revision, requests refused before it),
 * the Peer handlers made once per session from the built-in methods and the session's
 * `Handlers`, and what the session keeps (the client, its log level, its subscriptions;
 * the tasks it reaches are the server's: `tasks.ts`). A session never initialized answers
 * modern (2026-07-28) requests, each on its own (`stateless.ts`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import * as Scope from "effect/Scope"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type { Client, Handlers, ListKind, Options, Outbound, Session as PublicSession } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import type { Principal } from "../../ResourceServer.js"
import { traced } from "../traced.js"
import { Context, type SessionLink } from "./context.js"
import { discover } from "./discover.js"
import { McpServerError } from "./error.js"
import { internalError, invalidParams, invalidRequest, methodNotFound } from "./errors.js"
import { admits } from "./logging.js"
import * as Methods from "./methods.js"
import * as Stateless from "./stateless.js"
import type * as Tasks from "./tasks.js"

/** A revision the server speaks: the client's when it is one, else the latest. */
export const negotiate = (requested: unknown): string =>
  typeof requested === "string" && (McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(requested)
    ? requested
    : McpSchema.LATEST_PROTOCOL_VERSION

/** The state of one session, as the built-in methods and the contexts see it. */
export class Session implements SessionLink {
  client: Client | undefined = undefined
  initialized = false
  level: McpSchema.LoggingLevel | undefined = undefined
  handlers: Handlers | undefined
  readonly subscriptions = new Set<string>()
  /** The server's tasks (2025-11-25), when it runs tool calls as tasks. */
  tasks: Tasks.Tasks | undefined = undefined
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
    readonly outbound: Outbound,
    readonly modern: Stateless.Modern
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

  /** What initialize tells: the client, and this session's handlers once made for it. */
  readonly begin = (request: JsonRpc.Request): Effect.Effect<void, Peer.HandlerError> =>
    Effect.suspend(() => {
      if (this.initialized) return Effect.fail(invalidRequest("The session is already initialized"))
      const params = request.params
      if (!isRecord(params)) return Effect.fail(invalidParams("initialize needs params"))
      const client: Client = {
        protocolVersion: this.options.protocolVersion ?? negotiate(params.protocolVersion),
        capabilities: isRecord(params.capabilities) ? params.capabilities as McpSchema.ClientCapabilities : {},
        info: isRecord(params.clientInfo) ? params.clientInfo as unknown as McpSchema.Implementation : undefined
      }
      this.client = client
      const make = this.options.handlers
      if (typeof make !== "function" || this.handlers !== undefined) return Effect.void
      return Effect.map(Scope.extend(make(client, this.view), this.scope), (handlers) => {
        this.handlers = handlers
      })
    })
}

/** A method's answer in a session's context. */
export type Answer = (
  request: JsonRpc.Request,
  ctx: Context<Session>
) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>

// The answers of each handler by method, in their spans, made once: a span's definition
// costs (Effect.fn), and a modern HTTP request's session is made for it alone.
const answers = new WeakMap<Methods.Method, Map<string, Answer>>()

/** A method's handler in its span, made once per handler and method; a defect becomes -32603. */
export const spanned = (method: string, handler: Methods.Method): Answer => {
  let byMethod = answers.get(handler)
  if (byMethod === undefined) {
    byMethod = new Map()
    answers.set(handler, byMethod)
  }
  let answer = byMethod.get(method)
  if (answer === undefined) {
    answer = traced(`McpServer.${method}`)((request: JsonRpc.Request, ctx: Context<Session>) =>
      handler(request, ctx).pipe(
        Effect.catchAllDefect((defect) =>
          Effect.zipRight(
            Effect.logError(`MCP server: the handler of ${method} failed`, defect),
            Effect.fail(internalError)
          )
        )
      )
    )
    byMethod.set(method, answer)
  }
  return answer
}

// Each method's answer in a session; what a handler may not answer becomes -32603. Before
// initialize, a modern request is answered on its own; methods only the modern revision has
// are answered in no stateful session.
const guard = (session: Session, method: string, handler: Methods.Method): Peer.Handler => {
  const answer = spanned(method, handler)
  const stateful = (request: JsonRpc.Request) => answer(request, new Context(session, request))
  const beforeInitialize = (request: JsonRpc.Request) =>
    session.options.modern === true && Stateless.isModern(request)
      ? Stateless.answer(session, session.modern, request, (ctx) => answer(request, ctx))
      : Effect.fail(invalidRequest("The session is not initialized"))
  if (method === McpSchema.Method.Initialize) {
    return (request) =>
      session.options.modern === true && Stateless.isModern(request)
        ? beforeInitialize(request)
        : session.begin(request).pipe(
          Effect.zipRight(stateful(request)),
          Effect.tap((result) => {
            session.initialized = true
            session.declared = isRecord(result.capabilities) ? result.capabilities : {}
          })
        )
  }
  if (Stateless.modernOnly(method)) {
    return (request) => session.initialized ? Effect.fail(methodNotFound(method)) : beforeInitialize(request)
  }
  return (request) => session.initialized ? stateful(request) : beforeInitialize(request)
}

// ping: answered at any time in a session, and removed in the modern revision.
const ping = (modern: boolean): Peer.Handler => (request) =>
  modern && Stateless.isModern(request) ? Effect.fail(methodNotFound(request.method)) : Effect.succeed({})

// Answered by the tasks extension (stateless.ts); in the table for the Peer to route it.
const tasksUpdate: Methods.Method = (request) => Effect.fail(methodNotFound(request.method))

/** The methods only the modern revision has, for a server that answers it. */
export const modernMethods = (modern: Stateless.Modern): Record<string, Methods.Method> => ({
  [McpSchema.ModernMethod.Discover]: discover,
  [McpSchema.ModernMethod.SubscriptionsListen]: modern.listen,
  [McpSchema.ModernMethod.TasksUpdate]: tasksUpdate
})

/**
 * The Peer handlers of a session: ping, the built-in methods (the modern ones too, with
 * `Options.modern`), less
 * those `methods` replaces, and `methods`.
 */
export const peerHandlers = (session: Session): Record<string, Peer.Handler> => {
  const modern = session.options.modern === true
  const table: Record<string, Peer.Handler> = { [McpSchema.Method.Ping]: ping(modern) }
  const methods: Record<string, Methods.Method> = {
    ...Methods.builtIn,
    ...(modern ? modernMethods(session.modern) : {}),
    ...session.options.methods
  }
  for (const [method, handler] of Object.entries(methods)) {
    table[method] = guard(session, method, handler)
  }
  return table
}
