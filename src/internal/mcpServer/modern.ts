/**
 * The modern era (2026-07-28): no initialize, no session; a request that carries the client
 * in its `_meta` is answered on its own, whatever session it arrives in, as long as that
 * session is not a stateful one (initialized), or in none (`alone.ts`). The client, its
 * capabilities and its log level come from the request; the handlers are the server's
 * (`modernHandlers`, the same for all, or made for this request alone); what the handler
 * asks of the client goes through an MRTR round (`mrtr.ts`); a tool call over HTTP has its
 * `Mcp-Param-*` headers checked against the tool it finds; a task tool's call may become a
 * task of the tasks extension (`tasksExtension.ts`); the result tells its `resultType`, the
 * server, and (lists, reads, discover) how long it may be cached. Changes are told on
 * `subscriptions/listen` streams (`listen.ts`); `server/discover` is `discover.ts`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import { isRecord } from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { Client, Handlers, Options } from "../../McpServer.js"
import * as Peer from "../../Peer.js"
import { randomBytes, utf8Bytes } from "../crypto.js"
import { Context } from "./context.js"
import { discover, SUPPORTED_VERSIONS } from "./discover.js"
import { type Era, LIST_CHANGED } from "./era.js"
import { invalidParams, methodNotFound } from "./errors.js"
import * as Headers from "./headers.js"
import { listen, type Listener, wantsList, wantsResource } from "./listen.js"
import { admits, isLevel } from "./logging.js"
import { type Method, shared, spanned } from "./methods.js"
import * as Mrtr from "./mrtr.js"
import type { Session } from "./session.js"
import * as TasksExtension from "./tasksExtension.js"

/** The modern era of a server: an `Era`, and what its requests share. */
export interface Modern extends Era {
  /** The key of `requestState` signatures. */
  readonly secret: Uint8Array
  /** The open `subscriptions/listen` streams. */
  readonly listeners: Set<Listener>
  /** The tasks of the tasks extension, when the server runs tool calls as tasks. */
  readonly tasks: TasksExtension.Table | undefined
}

// Methods of the legacy revisions that 2026-07-28 removed: `Options.methods` does not bring
// them back (tasks/get and tasks/cancel are the tasks extension's).
const REMOVED: ReadonlySet<string> = new Set([
  McpSchema.Method.Ping,
  McpSchema.Method.Initialize,
  McpSchema.Method.LoggingSetLevel,
  McpSchema.Method.ResourcesSubscribe,
  McpSchema.Method.ResourcesUnsubscribe,
  McpSchema.Method.TasksGet,
  McpSchema.Method.TasksResult,
  McpSchema.Method.TasksList,
  McpSchema.Method.TasksCancel
])

// The caching hint each cacheable method's result carries, by `Options.caching` key.
const CACHED: Readonly<Record<string, keyof NonNullable<Options["caching"]>>> = {
  [McpSchema.Method.ToolsList]: "tools",
  [McpSchema.Method.PromptsList]: "prompts",
  [McpSchema.Method.ResourcesList]: "resources",
  [McpSchema.Method.ResourcesTemplatesList]: "templates",
  [McpSchema.Method.ResourcesRead]: "read",
  [McpSchema.Method.SkillsList]: "skills",
  [McpSchema.Method.SkillsGet]: "skills",
  [McpSchema.ModernMethod.Discover]: "discover"
}

// Without a configured hint: stale at once, and never shared across authorization contexts.
const NO_CACHING: McpSchema.CacheHint = { ttlMs: 0, cacheScope: "private" }

const metaOf = (request: JsonRpc.Request): Record<string, unknown> | undefined => {
  const meta = request.params?._meta
  return isRecord(meta) ? meta : undefined
}

// A modern request's client, from its `_meta`.
interface RequestClient extends Client {
  readonly level: McpSchema.LoggingLevel | undefined
}

// -32022: the revision asked for is not served.
const unsupportedVersion = (requested: string): Peer.HandlerError =>
  new Peer.HandlerError({
    code: McpSchema.ModernErrorCode.UnsupportedProtocolVersion,
    message: "Unsupported protocol version",
    data: { supported: SUPPORTED_VERSIONS, requested }
  })

// The client a modern request declares, or -32602 (a required key missing) or -32022.
const clientOf = (request: JsonRpc.Request): Either.Either<RequestClient, Peer.HandlerError> => {
  const meta = metaOf(request)
  if (meta === undefined) return Either.left(invalidParams(`${request.method} needs _meta`))
  const version = meta[McpSchema.MetaKey.ProtocolVersion]
  if (typeof version !== "string") {
    return Either.left(invalidParams(`_meta needs a string '${McpSchema.MetaKey.ProtocolVersion}'`))
  }
  const capabilities = meta[McpSchema.MetaKey.ClientCapabilities]
  if (!isRecord(capabilities)) {
    return Either.left(invalidParams(`_meta needs an object '${McpSchema.MetaKey.ClientCapabilities}'`))
  }
  if (version !== McpSchema.MODERN_PROTOCOL_VERSION) return Either.left(unsupportedVersion(version))
  const info = meta[McpSchema.MetaKey.ClientInfo]
  const level = meta[McpSchema.MetaKey.LogLevel]
  return Either.right({
    protocolVersion: version,
    capabilities: capabilities as McpSchema.ClientCapabilities,
    info: isRecord(info) ? info as unknown as McpSchema.Implementation : undefined,
    level: isLevel(level) ? level : undefined
  })
}

// The handlers every modern request of `method` shares, if they do: `modernHandlers` (but for
// a subscriptions/listen, which keeps `handlers` for its life), or static `handlers`.
const sharedHandlers = (options: Options, method: string): Handlers | undefined => {
  if (options.modernHandlers !== undefined && method !== McpSchema.ModernMethod.SubscriptionsListen) {
    return options.modernHandlers
  }
  return typeof options.handlers === "function" ? undefined : options.handlers
}

// The handlers a modern request is served by: the server's, or made for it alone.
const handlersFor = (session: Session, client: Client): Effect.Effect<Handlers, never, Scope.Scope> => {
  const make = session.options.handlers
  return typeof make === "function" ? make(client, session.view) : Effect.succeed(make)
}

// A modern request's log level admits a message: none without a logLevel in its _meta.
function admitsOwnLevel(this: Session, level: McpSchema.LoggingLevel): boolean {
  return this.level !== undefined && admits(this.level, level)
}

// The session as one modern request sees it: the request's client, level and handlers over
// the session's own (its Peer, its outbound, its options), which the prototype lends. A
// session made for this request alone (`Session.alone`) is that view itself: made a
// prototype, a new object per request costs V8 more than the whole view.
const requestView = (session: Session, client: RequestClient, handlers: Handlers): Session => {
  const view: Session = session.alone ? session : Object.create(session)
  view.client = client
  view.level = client.level
  view.admits = admitsOwnLevel
  view.handlers = handlers
  view.initialized = true
  return view
}

// A modern result: its type, the server, and its caching hint (a handler's own wins).
const finish = (session: Session, method: string, result: Record<string, unknown>): Record<string, unknown> => {
  const cached = CACHED[method]
  const hint = cached === undefined ? undefined : session.options.caching?.[cached] ?? NO_CACHING
  const meta = isRecord(result._meta) ? result._meta : {}
  return {
    ...result,
    resultType: result.resultType ?? "complete",
    ...(hint === undefined
      ? {}
      : { ttlMs: result.ttlMs ?? hint.ttlMs, cacheScope: result.cacheScope ?? hint.cacheScope }),
    _meta: { ...meta, [McpSchema.MetaKey.ServerInfo]: session.options.serverInfo }
  }
}

// 2026-07-28 (SEP-2164): a resource nothing serves is -32602, with its URI (the request's,
// when a handler's error has no data).
const modernError = (request: JsonRpc.Request) => (error: Peer.HandlerError): Peer.HandlerError =>
  error.code === JsonRpc.ErrorCode.ResourceNotFound
    ? new Peer.HandlerError({
      code: JsonRpc.ErrorCode.InvalidParams,
      message: error.message,
      data: error.data ?? { uri: request.params?.uri }
    })
    : error

// The tool a modern tools/call names, from the list its handlers give (in process), looked up
// once for what needs it: the header check (over HTTP) and the tasks extension (its
// `taskSupport`). Undefined for another method, an unknown tool, or when neither needs it.
const calledTool = (
  session: Session,
  modern: Modern,
  request: JsonRpc.Request,
  handlers: Handlers,
  ctx: Context<Session>
): Effect.Effect<McpSchema.Tool | undefined, Peer.HandlerError> => {
  const tools = handlers.tools
  if (
    tools === undefined || request.method !== McpSchema.Method.ToolsCall ||
    (session.outbound.headers === undefined && modern.tasks === undefined)
  ) {
    return Effect.succeed(undefined)
  }
  const name = request.params?.name
  return Effect.map(tools.list(ctx), (listed) => listed.find((candidate) => candidate.name === name))
}

// A modern tools/call over HTTP: its Mcp-Param-* headers against the called tool's
// `x-mcp-header` annotations; -32020 when they disagree. An unknown tool is left to the call.
const checkToolHeaders = (
  session: Session,
  request: JsonRpc.Request,
  tool: McpSchema.Tool | undefined
): Peer.HandlerError | undefined => {
  const headers = session.outbound.headers
  if (headers === undefined || tool === undefined) return undefined
  const refused = Headers.checkToolParams(headers, request, tool.inputSchema)
  return refused === undefined ? undefined : new Peer.HandlerError(refused.body.error)
}

// Runs `use` with the handlers `make` makes in a Scope of their own, which ends with the
// request unless the request became a task: then with the task (tasksExtension.ts).
const inScope = (
  make: Effect.Effect<Handlers, never, Scope.Scope>,
  use: (handlers: Handlers, scope: Scope.CloseableScope) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> =>
  Effect.flatMap(Scope.make(), (scope) =>
    Scope.extend(make, scope).pipe(
      Effect.flatMap((handlers) => use(handlers, scope)),
      Effect.onExit((exit) =>
        Exit.isSuccess(exit) && exit.value.resultType === "task" ? Effect.void : Scope.close(scope, exit)
      )
    ))

// Answers a modern request in `session`: `run` is its method's handler, given the request's
// context (the MRTR round's, each time the tasks extension runs it again).
const answerIn = (
  modern: Modern,
  session: Session,
  request: JsonRpc.Request,
  run: (ctx: Context<Session>) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> => {
  const method = request.method
  const client = clientOf(request)
  if (Either.isLeft(client)) return Effect.fail(client.left)
  const round = Mrtr.INPUT_METHODS.has(method)
    ? Mrtr.begin(modern.secret, request)
    : Either.right(Mrtr.noInput(method))
  if (Either.isLeft(round)) return Effect.fail(round.left)
  // `scope`: the handlers' own, when they were made for this request (shared ones have none).
  const respond = (handlers: Handlers, scope: Scope.CloseableScope | undefined) => {
    const ctx = new Context(requestView(session, client.right, handlers), request, undefined, round.right)
    const plain = round.right instanceof Mrtr.Round
      ? Mrtr.run(modern.secret, request, round.right, run(ctx))
      : run(ctx)
    return Effect.flatMap(calledTool(session, modern, request, handlers, ctx), (tool) => {
      const refused = checkToolHeaders(session, request, tool)
      return refused === undefined
        ? TasksExtension.route(modern.tasks, ctx, round.right, scope, plain, run, tool)
        : Effect.fail(refused)
    })
  }
  const common = sharedHandlers(session.options, method)
  const answered = common !== undefined
    ? respond(common, undefined)
    : inScope(handlersFor(session, client.right), respond)
  return answered.pipe(
    Effect.map((result) => finish(session, method, result)),
    Effect.mapError(modernError(request))
  )
}

// Answered by the tasks extension (`TasksExtension.route`), before their handler would run.
const byExtension: Method = (request) => Effect.fail(methodNotFound(request.method))

// The methods of the modern revision: the shared built-ins, its own, and `Options.methods`
// but for those it removed.
const methodsOf = (options: Options, listeners: Set<Listener>): Record<string, Method> => {
  const added: Record<string, Method> = {}
  for (const [method, handler] of Object.entries(options.methods ?? {})) {
    if (!REMOVED.has(method)) added[method] = handler
  }
  return {
    ...shared,
    [McpSchema.ModernMethod.Discover]: discover,
    [McpSchema.ModernMethod.SubscriptionsListen]: listen(listeners),
    [McpSchema.Method.TasksGet]: byExtension,
    [McpSchema.Method.TasksCancel]: byExtension,
    [McpSchema.ModernMethod.TasksUpdate]: byExtension,
    ...added
  }
}

// Tells each listen stream that asked for it.
const tellListeners = (
  listeners: Set<Listener>,
  wants: (listener: Listener) => boolean,
  method: string,
  params?: Record<string, unknown>
) =>
  Effect.suspend(() =>
    Effect.all([...listeners].filter(wants).map((listener) => listener.tell(method, params)), { discard: true })
  )

/**
 * The modern era of a server with `options`: its `requestState` key (configured, or a
 * random one), its listen streams, its tasks extension when it runs tool calls as tasks.
 * Its log messages not related to a request go nowhere: a modern client gets those of its
 * requests, as far as each request's log level admits them.
 */
export const make = (options: Options): Effect.Effect<Modern, never, Scope.Scope> =>
  Effect.gen(function*() {
    const secret = options.stateSecret === undefined
      ? randomBytes(32)
      : utf8Bytes(Redacted.value(options.stateSecret))
    const tasks = options.tasks === undefined ? undefined : yield* TasksExtension.make(options.tasks, secret)
    const listeners = new Set<Listener>()
    // Listen streams outlive no server: once its Scope closes, nothing more is told to them.
    yield* Effect.addFinalizer(() => Effect.sync(() => listeners.clear()))
    const table = new Map(
      Object.entries(methodsOf(options, listeners)).map(([method, handler]) => [method, spanned(method, handler)])
    )
    const modern: Modern = {
      family: "modern",
      methods: new Set(table.keys()),
      answer: (session, request) =>
        Effect.suspend(() => {
          const run = table.get(request.method)
          return run === undefined
            ? Effect.fail(methodNotFound(request.method))
            : answerIn(modern, session, request, (ctx) => run(request, ctx))
        }),
      secret,
      listeners,
      tasks,
      listChanged: (kind) => tellListeners(listeners, (listener) => wantsList(listener, kind), LIST_CHANGED[kind]),
      resourceUpdated: (uri) =>
        tellListeners(listeners, (listener) => wantsResource(listener, uri), McpSchema.Method.ResourcesUpdated, {
          uri
        }),
      log: () => Effect.void
    }
    return modern
  })
