/**
 * The server side of MCP, the counterpart of `McpClient`: tools, resources (templates and
 * subscriptions), prompts, completion and logging served from Effect handlers over any
 * Transport (stdio, Streamable HTTP, memory), in every stateful revision
 * (`McpSchema.SUPPORTED_PROTOCOL_VERSIONS`) and, unless `modern: false`, in the modern one (2026-07-28): a request
 * that carries its client in `_meta` instead of a session's initialize is answered on its
 * own (`server/discover`, `subscriptions/listen`, caching hints), and what its handler asks
 * of the client comes back as an `InputRequiredResult` the client answers by retrying
 * (the handler runs again; see `InputOptions`). One server serves both kinds of client; over
 * Streamable HTTP a modern request is a POST without Mcp-Session-Id, answered on its own.
 *
 * Two forms. The low-level one is `make` with `Handlers`, asked per client session (so a
 * gateway can give each client its own view, with per-session state in the session's
 * Scope). The data form, `fromItems`, is built on it: tools, resources, templates and
 * prompts given as values (`tool`, `resource`, `resourceTemplate`, `prompt`), changeable at
 * run time, a tool's arguments decoded with its Effect Schema before its handler runs.
 *
 * Every handler gets a `RequestContext`: the request, the client's revision and
 * capabilities (per request, not only per session: a modern request's come from its `_meta`), progress and log messages related to the request, and the
 * requests a handler may send its client (sampling, elicitation, roots), all through one
 * function of the context (`requestClient`), so a transport with a stream per request can
 * carry them on that request's stream (`Outbound.within`).
 *
 * Streamable HTTP serving is the server's too: `toWebHandler` serves it as
 * `(Request) => Promise<Response>` at any path, and `NodeMcpServer` (`mcp-fleet/node`) mounts
 * it in a node:http app (`toNodeHandler`) or on a listener of its own (`serveHttp`); each HTTP
 * session is a `connect` whose `Outbound` puts what belongs to a request on that request's
 * stream.
 *
 * The per-request path stays lean: each revision family's methods made once per server, one
 * small context object per request, no decoding of results; params are checked by hand
 * where a handler needs them. A modern request outside a session needs none at all
 * (`McpServer.answerModern`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { McpServerError } from "./internal/mcpServer/error.js"
import * as Http from "./internal/mcpServer/http/http.js"
import * as Web from "./internal/mcpServer/http/web.js"
import * as Items from "./internal/mcpServer/items.js"
import { page } from "./internal/mcpServer/paging.js"
import * as Server from "./internal/mcpServer/server.js"
import * as Skills from "./internal/mcpServer/skills.js"
import type * as JsonRpc from "./JsonRpc.js"
import type * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import type * as Memory from "./Memory.js"
import type * as Peer from "./Peer.js"
import type * as ResourceServer from "./ResourceServer.js"
import type { Transport } from "./Transport.js"

export {
  /**
   * A failure of what a handler asked of the client: `NotDeclared` when the client did not
   * declare the capability the request needs (nothing was sent), `Client` when the request
   * failed (the client's error, a timeout, the connection gone; the McpError is the
   * `cause`), `InvalidAnswer` when the client's answer does not match its schema.
   *
   * @since 0.1.0
   * @category errors
   */
  McpServerError
} from "./internal/mcpServer/error.js"

/**
 * The client of a session as a request sees it: the revision agreed on, what it declared,
 * and who it says it is.
 *
 * @since 0.1.0
 * @category models
 */
export interface Client {
  readonly protocolVersion: string
  readonly capabilities: McpSchema.ClientCapabilities
  readonly info?: McpSchema.Implementation | undefined
}

/**
 * What a handler knows and can do while it answers one request. Its functions are methods
 * of the context: call them on it (`ctx.progress(1)`), do not take them apart.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestContext {
  /** The request as received. */
  readonly request: JsonRpc.Request
  /** The client, as of this request. */
  readonly client: Client
  /** Who the client is, as its transport authenticated it (`Outbound.caller`), if it did. */
  readonly caller: ResourceServer.Principal | undefined
  /**
   * Whether the request runs as a task (2025-11-25 `task` param), or runs as one or may still
   * become one (the tasks extension: see `TaskOptions`).
   */
  readonly asTask?: boolean | undefined
  /** Reports progress on this request; does nothing when the client gave no progressToken. */
  progress(progress: number, total?: number, message?: string): Effect.Effect<void>
  /**
   * Sends a log message related to this request, when the session's level (logging/setLevel)
   * admits it; before any setLevel, every level is admitted.
   */
  log(level: McpSchema.LoggingLevel, data: unknown, logger?: string): Effect.Effect<void>
  /**
   * Sends any notification related to this request (on its stream, over Streamable HTTP),
   * whatever the client's log level: for what `progress` and `log` do not cover, such as a
   * gateway passing on what its servers sent.
   */
  notify(method: string, params: Record<string, unknown>): Effect.Effect<void>
  /** Sets the task's `statusMessage` when the request runs as a task; does nothing otherwise. */
  status(message: string): Effect.Effect<void>
  /**
   * (The tasks extension) Runs `effect` without the call becoming a task for waiting on it:
   * while it runs, a call that may still become a task stays inline until it asks for input
   * (without `beforeTask`), calls `becomeTask` or ends — for work that decides by itself
   * whether it goes async (a gateway's routed call). Elsewhere, just `effect`.
   */
  keepInline<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R>
  /** (The tasks extension) Makes a call that may still become a task its task now; does nothing otherwise. */
  becomeTask(): Effect.Effect<void>
  /**
   * Sends any request to the client as part of this one. The one way out for requests to
   * the client: `sample`, `elicit` and `listRoots` go through it.
   */
  requestClient(
    method: string,
    params?: Record<string, unknown> | undefined,
    options?: RequestClientOptions | undefined
  ): Effect.Effect<Record<string, unknown>, McpServerError>
  /** Asks the client's model for a message; fails with `NotDeclared` when it did not declare sampling. */
  sample(
    params: McpSchema.CreateMessageRequestParams,
    options?: InputOptions | undefined
  ): Effect.Effect<McpSchema.CreateMessageResult, McpServerError>
  /**
   * Asks the user for input, by a form or (2025-11-25) by a URL; fails with `NotDeclared`
   * when the client did not declare elicitation in that mode.
   */
  elicit(
    params: McpSchema.ElicitRequestParams,
    options?: InputOptions | undefined
  ): Effect.Effect<McpSchema.ElicitResult, McpServerError>
  /** The client's roots; fails with `NotDeclared` when it did not declare roots. */
  listRoots(options?: InputOptions | undefined): Effect.Effect<McpSchema.ListRootsResult, McpServerError>
}

/**
 * How a request to the client is named in a modern (2026-07-28) request, which cannot send
 * it: the handler's run ends with an `InputRequiredResult` asking for it under `key`, and
 * runs again from the start when the client retries with the answers (each request, in
 * order, then takes its answer). Requests asked at once (`Effect.all` with concurrency) are
 * asked in the same round. Ignored in a stateful session.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputOptions {
  /** The key of the request in `inputRequests`. Default: `input-<n>`, its place in the run. */
  readonly key?: string | undefined
  /**
   * (The tasks extension) Asks by an `InputRequiredResult` on the call itself, before the
   * call becomes a task: for input the tool needs before it goes async (to decide whether to
   * proceed). Without it, a call that may become a task becomes one when it asks, and asks
   * through the task (`tasks/get`, `tasks/update`). Once the call is a task, it asks through
   * the task either way. Ignored everywhere else.
   */
  readonly beforeTask?: boolean | undefined
}

/**
 * The options of `RequestContext.requestClient`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestClientOptions extends Peer.RequestOptions, InputOptions {}

/**
 * Serves tools: the list a client sees, and calls. An unknown name fails with -32602
 * (`unknownTool`); a tool's own failure is a result with `isError: true`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolHandlers {
  readonly list: (ctx: RequestContext) => Effect.Effect<ReadonlyArray<McpSchema.Tool>>
  readonly call: (
    name: string,
    args: Record<string, unknown>,
    ctx: RequestContext
  ) => Effect.Effect<McpSchema.CallToolResult, Peer.HandlerError>
}

/**
 * Serves skills (the skills extension, SEP-2640): `skills/list` pages what `list` gives,
 * `skills/get` answers one entry by the URI of its `SKILL.md` (an unknown one: -32602). The
 * skills' files are served as resources (`ResourceHandlers`).
 *
 * @since 0.4.0
 * @category models
 */
export interface SkillHandlers {
  readonly list: (ctx: RequestContext) => Effect.Effect<ReadonlyArray<McpSchema.Skill>>
  /** One skill's entry, undefined when unknown. Default: the listed entry of that URI. */
  readonly get?:
    | ((uri: string, ctx: RequestContext) => Effect.Effect<McpSchema.Skill | undefined, Peer.HandlerError>)
    | undefined
}

/**
 * Serves resources. A URI nothing serves fails with -32002 (`resourceNotFound`).
 * Subscriptions are kept per session by the server; `subscribe`/`unsubscribe` are told of
 * them, and may refuse.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceHandlers {
  readonly list: (ctx: RequestContext) => Effect.Effect<ReadonlyArray<McpSchema.Resource>>
  readonly templates?: ((ctx: RequestContext) => Effect.Effect<ReadonlyArray<McpSchema.ResourceTemplate>>) | undefined
  readonly read: (uri: string, ctx: RequestContext) => Effect.Effect<McpSchema.ReadResourceResult, Peer.HandlerError>
  readonly subscribe?: ((uri: string, ctx: RequestContext) => Effect.Effect<void, Peer.HandlerError>) | undefined
  readonly unsubscribe?: ((uri: string, ctx: RequestContext) => Effect.Effect<void, Peer.HandlerError>) | undefined
}

/**
 * Serves prompts. An unknown name fails with -32602.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptHandlers {
  readonly list: (ctx: RequestContext) => Effect.Effect<ReadonlyArray<McpSchema.Prompt>>
  readonly get: (
    name: string,
    args: Readonly<Record<string, string>>,
    ctx: RequestContext
  ) => Effect.Effect<McpSchema.GetPromptResult, Peer.HandlerError>
}

/**
 * A handler of any method, given the request and its context.
 *
 * @since 0.1.0
 * @category models
 */
export type MethodHandler = (
  request: JsonRpc.Request,
  ctx: RequestContext
) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>

/**
 * What a session serves. Each part is optional; what is absent is neither declared nor
 * answered (-32601). Methods of its own are `Options.methods`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handlers {
  readonly tools?: ToolHandlers | undefined
  readonly resources?: ResourceHandlers | undefined
  readonly prompts?: PromptHandlers | undefined
  /** The skills extension (SEP-2640), declared when present; its files are `resources`. */
  readonly skills?: SkillHandlers | undefined
  /** completion/complete, for prompt arguments and resource template variables. */
  readonly complete?:
    | ((
      params: McpSchema.CompleteRequestParams,
      ctx: RequestContext
    ) => Effect.Effect<McpSchema.CompleteResult, Peer.HandlerError>)
    | undefined
}

/**
 * Task-augmented tool calls (2025-11-25): a tool whose `execution.taskSupport` is
 * `optional` or `required` runs as a task when the call carries `task`. The task is the
 * server's, not its session's: it runs on when the session ends, and another session takes
 * it up by its id (`tasks/get`, `tasks/result`, `tasks/cancel`); what it sends (progress
 * with the call's token, log messages, requests to the client) then goes to the session that
 * last asked about it. It is kept for the `ttl` the call asks (at most `ttlMs`).
 *
 * Who may reach a task (both eras): a task started by a caller with an authorization
 * context (`Outbound.caller`: with OAuth, the access token's principal — issuer, subject,
 * client) is bound to it, and a request from another context is answered as for an unknown
 * task (-32602); without one, its id, a random UUID, is all it takes, so keep ids as secret
 * as results. `tasks/list` (2025-11-25) lists the caller's context's tasks, or, without a
 * context, the tasks the asking session started (a session is then the only requestor the
 * server can tell apart; listing only what it started exposes no one else's tasks).
 *
 * For modern requests (the `io.modelcontextprotocol/tasks` extension, SEP-2663) the server
 * decides: a call of such a tool from a request that declares the extension always ends as a
 * task (`required` without the extension: -32021; `optional`: answered inline). Its handler
 * starts inline, in the request, and the call becomes a task (answered with a
 * `CreateTaskResult`; the handler runs on in the server's Scope) at the first of:
 * - it asks the client for input (the request then waits in the task: `tasks/get` shows it,
 *   `tasks/update` answers it);
 * - it waits on anything else (a timer, I/O): it neither finished nor asked while the
 *   scheduler turned a few times, so its work is not instant — except while it waits in
 *   `RequestContext.keepInline` (work that decides by itself whether it goes async, such as
 *   a gateway's routed call), which only `becomeTask`, asking or ending ends;
 * - it finished (the task is created already done: `tasks/get` inlines its result or error).
 * The `CreateTaskResult` is the task's seed state, `working`; what it did since shows on
 * `tasks/get`.
 * Input asked with `InputOptions.beforeTask` while the call is still inline is asked by
 * MRTR on the call itself (an `InputRequiredResult`; the handler runs again on the retry),
 * as SEP-2663 says a server SHOULD resolve such exchanges before creating the task: a
 * tool that must know something before it goes async asks it that way, and its task starts
 * once it has the answers and goes on.
 *
 * A task whose 2025-11-25 session has gone and that asks its client for input (elicitation,
 * sampling, roots) goes `input_required` and waits, within its ttl, for a session to follow
 * it with `tasks/result`: the request is sent on that stream, to that session's client.
 *
 * A task is this server's: its id (a random UUID) is known to this process only, so with
 * replicas behind a load balancer a task lives where it was created (`tasks/get` elsewhere
 * answers -32602 unknown task). Tasks end with the server's Scope.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskOptions {
  /** The `pollInterval` told to clients, in milliseconds. Default: 1000. */
  readonly pollInterval?: number | undefined
  /** Sends `notifications/tasks/status` on each change of a task. Default: false. */
  readonly notifyStatus?: boolean | undefined
  /**
   * How long a task is kept from its creation, in milliseconds, then forgotten (its work
   * ended if it still runs): a modern request's (the tasks extension, 2026-07-28) always, a
   * 2025-11-25 call's when it asks for no shorter `ttl`. Default: an hour.
   */
  readonly ttlMs?: number | undefined
  /**
   * How many tasks one requestor may have working (or waiting for input) at once; finished
   * ones do not count. The requestor is the caller's authorization context (with OAuth: the
   * access token's principal and client), or without one, in 2025-11-25, the session that
   * started the task; without one in 2026-07-28 (the tasks extension) all callers together,
   * as a modern request may come from anyone anywhere and the client it names is its own
   * claim (a limit per claim would not hold back whom it is for). A call past it is refused
   * before its work starts: JSON-RPC -32603, `data: { limit: "maxWorkingPerRequestor", max }`.
   * Default: 100.
   */
  readonly maxWorkingPerRequestor?: number | undefined
  /**
   * How many tasks the server keeps at once, working or finished (a finished task is kept
   * for its ttl, its result with it). A new task past it makes the server forget its oldest
   * finished task first (the one created first), and is refused (-32603,
   * `data: { limit: "maxKept", max }`) only when all it keeps are still working. Each era
   * (2025-11-25 tasks, the tasks extension) has its own table of this size. Default: 10000.
   */
  readonly maxKept?: number | undefined
}

/**
 * Options of a server.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly serverInfo: McpSchema.Implementation
  readonly instructions?: string | undefined
  /**
   * What a session serves: the same handlers for every session, or handlers made for each
   * client when it initializes, in the session's Scope (given the session, for what it
   * sends its client outside of any request).
   */
  readonly handlers: Handlers | ((client: Client, session: Session) => Effect.Effect<Handlers, never, Scope.Scope>)
  /**
   * The handlers of modern (2026-07-28) requests, when one set serves them all whatever
   * their client (who asks is the request's `RequestContext.client` and `caller`): such a
   * request then has no Scope and no handlers made for it. A `subscriptions/listen`
   * request, which lives as long as its stream, still gets `handlers` (made for it, in its
   * Scope, when a function). Default: `handlers`, for every modern request.
   */
  readonly modernHandlers?: Handlers | undefined
  /**
   * The capabilities declared. Default: derived from the handlers (list_changed for every
   * list, subscriptions, completions, logging, tasks when `tasks` is set), less what the
   * agreed revision does not know.
   */
  readonly capabilities?: McpSchema.ServerCapabilities | undefined
  /** The size of a page of a list. Default: 100. */
  readonly pageSize?: number | undefined
  /** Answers initialize with this revision whatever the client asks (for tests). Default: negotiated. */
  readonly protocolVersion?: string | undefined
  /** Serves tool calls as tasks (see `TaskOptions`). Default: no tasks. */
  readonly tasks?: TaskOptions | undefined
  /**
   * Extra or raw methods, the same for every session; they replace the built-in handler of
   * the same method (a raw `initialize` answers after the server has taken note of the client).
   * Modern requests never reach one of the methods 2026-07-28 removed (initialize, ping,
   * logging/setLevel, resources/subscribe, the 2025-11-25 tasks/*).
   */
  readonly methods?: Readonly<Record<string, MethodHandler>> | undefined
  /**
   * Whether modern (2026-07-28) requests are answered, each on its own, beside stateful sessions
   * on the same transport. Default: true — a client that prefers 2026-07-28 (McpClient does)
   * speaks it to this server: list changes go on its `subscriptions/listen` streams and
   * requests to the client become input rounds. `false` serves the stateful revisions only.
   */
  readonly modern?: boolean | undefined
  /**
   * The key that signs the `requestState` of modern (2026-07-28) requests that need input
   * from the client; replicas behind a load balancer share it. Default: random per server.
   */
  readonly stateSecret?: Redacted.Redacted<string> | undefined
  /**
   * The caching hints of modern results, per kind (a result's own `ttlMs`/`cacheScope`
   * win). Default: `{ ttlMs: 0, cacheScope: "private" }`.
   */
  readonly caching?: CachingOptions | undefined
}

/**
 * The caching hints (SEP-2549) of the cacheable modern results.
 *
 * @since 0.1.0
 * @category models
 */
export interface CachingOptions {
  readonly tools?: McpSchema.CacheHint | undefined
  readonly prompts?: McpSchema.CacheHint | undefined
  readonly resources?: McpSchema.CacheHint | undefined
  readonly templates?: McpSchema.CacheHint | undefined
  /** resources/read. */
  readonly read?: McpSchema.CacheHint | undefined
  /** skills/list and skills/get. */
  readonly skills?: McpSchema.CacheHint | undefined
  /** server/discover. */
  readonly discover?: McpSchema.CacheHint | undefined
}

/**
 * How a session reaches its client, for a transport with a stream per request (Streamable
 * HTTP): what is related to a request goes on that request's stream.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outbound {
  /** Sends a notification; `related` is the request it belongs to (progress, a log message). Default: the Peer's. */
  readonly notify?:
    | ((
      method: string,
      params: Record<string, unknown> | undefined,
      related: JsonRpc.RequestId | undefined
    ) => Effect.Effect<void>)
    | undefined
  /** Runs the sending of a request to the client as part of request `related`. Default: as is. */
  readonly within?: (<A, E>(related: JsonRpc.RequestId, send: Effect.Effect<A, E>) => Effect.Effect<A, E>) | undefined
  /**
   * Who the client is, as its transport authenticated it (Streamable HTTP with OAuth: the
   * access token's principal). The tasks it starts are bound to it (see `TaskOptions`).
   */
  readonly caller?: ResourceServer.Principal | undefined
  /**
   * The HTTP request headers of a session made for one modern (2026-07-28) request: a tool
   * call's `Mcp-Param-*` headers are checked against the called tool's `x-mcp-header`
   * annotations where the call finds the tool (-32020 when they disagree).
   */
  readonly headers?: Readonly<Record<string, string | ReadonlyArray<string> | undefined>> | undefined
}

/**
 * One client's live session.
 *
 * @since 0.1.0
 * @category models
 */
export interface Session {
  /** The session's JSON-RPC Peer: requests and notifications to the client. */
  readonly peer: Peer.Peer
  /** The client, once it initialized; never for a session that carries only modern requests (each has its own). */
  readonly client: () => Client | undefined
  /** The level the client set with logging/setLevel, if it did. */
  readonly level: () => McpSchema.LoggingLevel | undefined
  /** Who the client is, as its transport authenticated it (`Outbound.caller`), if it did. */
  readonly caller: ResourceServer.Principal | undefined
  /** Waits until the session ends and returns why. */
  readonly closed: Effect.Effect<McpError.McpError>
  /**
   * Sends a notification to the client outside of any handler; `related` is the request it
   * belongs to, so a transport with a stream per request sends it there (`Outbound.notify`).
   */
  readonly notify: (
    method: string,
    params?: Record<string, unknown> | undefined,
    related?: JsonRpc.RequestId | undefined
  ) => Effect.Effect<void>
  /**
   * Sends a request to the client outside of any handler, as part of request `related` when
   * given (`Outbound.within`); the client's error, a timeout or the end of the session fails it.
   */
  readonly request: (
    method: string,
    params?: Record<string, unknown> | undefined,
    related?: JsonRpc.RequestId | undefined
  ) => Effect.Effect<Record<string, unknown>, McpError.McpError>
}

/**
 * The kinds of list a client can be told changed.
 *
 * @since 0.1.0
 * @category models
 */
export type ListKind = "tools" | "resources" | "prompts"

/**
 * A running server: serves sessions, tells them of changes.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpServer {
  /** Serves one client session over the Transport in context until it ends; returns why. */
  readonly serve: Effect.Effect<McpError.McpError, never, Transport>
  /** Starts a session over the Transport in context; it ends with the Scope (or when the client hangs up). */
  readonly connect: (outbound?: Outbound | undefined) => Effect.Effect<Session, never, Transport | Scope.Scope>
  /**
   * Tells every initialized session that a list changed, and every `subscriptions/listen`
   * stream that asked to be told.
   */
  readonly notifyListChanged: (kind: ListKind) => Effect.Effect<void>
  /** Tells the sessions subscribed to `uri`, and the listen streams that name it, that it changed. */
  readonly notifyResourceUpdated: (uri: string) => Effect.Effect<void>
  /**
   * Sends a log message to every initialized session whose level admits it (a modern client
   * gets only those related to its requests: `RequestContext.log`).
   */
  readonly log: (level: McpSchema.LoggingLevel, data: unknown, logger?: string) => Effect.Effect<void>
  /** How many sessions are live. */
  readonly sessions: () => number
  /** Whether it answers modern (2026-07-28) requests (`Options.modern`). */
  readonly modern: boolean
  /**
   * Answers one modern (2026-07-28) request on its own, with no session, Peer or Scope: what
   * a transport whose messages each stand alone calls per request (the Streamable HTTP
   * endpoint does, for a POST without Mcp-Session-Id that carries one modern request). Its
   * notifications go to `outbound.notify` (related to the request's id); interrupting the
   * effect cancels the request; a request that is not a modern one is answered with its
   * error (-32602 for a `_meta` without the client, -32601 for a method the revision
   * removed). Absent when the server answers no modern requests (`modern: false`), or on a
   * server of another make: a transport then answers the request in a session of its own
   * (`connect`, closed once it is answered), which answers a modern request too — the
   * same answer, at the cost of a session.
   */
  readonly answerModern?:
    | ((request: JsonRpc.Request, outbound: Outbound) => Effect.Effect<JsonRpc.Success | JsonRpc.Failure>)
    | undefined
}

/**
 * The McpServer service tag, for programs that serve one server.
 *
 * @since 0.1.0
 * @category tags
 */
export const McpServer = Context.GenericTag<McpServer>("mcp-fleet/McpServer")

/**
 * Makes a server; sessions are started with `serve` or `connect`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<McpServer, never, Scope.Scope> = Server.make

/**
 * A layer providing a server made with `make`; it lives as long as the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<McpServer> => Layer.scoped(McpServer, make(options))

/**
 * A client's Memory transport linked to a session of `server`, for tests and in-process
 * clients. Both end with the Scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connectMemory: (
  server: McpServer,
  options?: { readonly name?: string | undefined; readonly outbound?: Outbound | undefined }
) => Effect.Effect<{ readonly transport: Memory.MemoryTransport; readonly session: Session }, never, Scope.Scope> =
  Server.connectMemory

// ---------------------------------------------------------------------------
// Streamable HTTP
// ---------------------------------------------------------------------------

/**
 * Options of a Streamable HTTP endpoint.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpHandlerOptions {
  /**
   * The endpoint's path: a request for any other path gets 404. Default for `toWebHandler`
   * and `NodeMcpServer.toNodeHandler`: every path (the app routes to the handler); for
   * `NodeMcpServer.serveHttp`: `/mcp`.
   */
  readonly path?: string | undefined
  /**
   * The address the app listens on. On a loopback address (the default, 127.0.0.1), a
   * request's Host must name loopback too, or the host of an allowed origin (403 otherwise:
   * DNS-rebinding protection); an app reachable by other names says where it listens.
   */
  readonly host?: string | undefined
  /** When set, every request must carry `Authorization: Bearer <token>`; otherwise 401. */
  readonly token?: Redacted.Redacted<string> | undefined
  /**
   * When set (instead of `token`), the endpoint is an OAuth protected resource: every request
   * must carry an access token from `oauth.issuer` for this resource (validated as a JWT
   * against the issuer's keys, or by introspection), with the `oauth.scopes`; a missing or
   * invalid one gets 401 with `WWW-Authenticate: Bearer resource_metadata="…"`, one without
   * the scopes 403 `insufficient_scope`, and 503 when the authorization server could not be
   * asked. The Protected Resource Metadata is served at
   * `/.well-known/oauth-protected-resource<path>` (and without the path): a mounted handler
   * must be routed those paths too. `oauth.resource` is the endpoint's public URL;
   * `NodeMcpServer.serveHttp` defaults it to the URL it listens on, a mounted handler needs
   * it. Each session is its opener's (`Session.caller`): another caller's requests to it get
   * 404. `token` and `oauth` together are a defect.
   */
  readonly oauth?: ResourceServer.Options | undefined
  /**
   * Origins (`https://app.example.com`) allowed besides localhost, 127.0.0.1 and [::1]. A
   * request with any other Origin is refused with 403; an allowed one gets CORS headers, and
   * its preflight (OPTIONS) is answered.
   */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  /**
   * The largest POST body accepted: a larger one is 413, refused from its Content-Length
   * before any of it is read. Default: 16 MiB.
   */
  readonly maxMessageBytes?: number | undefined
  /**
   * How long a POST body may take to arrive whole: a client trickling it gets 408 and its
   * connection is closed. Default: 30 seconds.
   */
  readonly bodyTimeout?: Duration.DurationInput | undefined
  /**
   * The most sessions at once. At this cap, or a per-principal or per-address one, an
   * initialize ends the least recently used idle session under it (its client gets 404 and
   * initializes again); only when every one is busy (a request or stream open) is it 503.
   * Default: 1000.
   */
  readonly maxSessions?: number | undefined
  /**
   * The most sessions of one principal: an OAuth subject, or (with `token`) its holders.
   * Default: 100.
   */
  readonly maxSessionsPerPrincipal?: number | undefined
  /** The most sessions from one client address (on node:http; fetch does not say). Default: 100. */
  readonly maxSessionsPerAddress?: number | undefined
  /**
   * How long a session may wait after initialize for its client's next request: one never
   * sent (an abandoned session) ends then. Default: 10 seconds.
   */
  readonly initializeTimeout?: Duration.DurationInput | undefined
  /**
   * How long a session may be idle (no request, no open stream) before it ends, for clients
   * that go away without DELETE. Default: 30 minutes.
   */
  readonly sessionIdleTimeout?: Duration.DurationInput | undefined
}

/**
 * The server as a web-standard Streamable HTTP endpoint, `(Request) => Promise<Response>`,
 * for frameworks and runtimes built on fetch's types (Hono, Next.js route handlers, Bun,
 * Deno), at whatever path the app routes to it. Sessions start at
 * initialize (the answer carries `Mcp-Session-Id`) and end with DELETE, when idle too long,
 * or with the Scope. A POST holding a tool call or a request with a progress token is
 * answered with JSON when its answer comes at once, else with an SSE stream as a streamed
 * body (resumable with `Last-Event-ID`); GET opens the session's stream of other
 * notifications; a modern (2026-07-28) request without a session is answered on its own. A
 * client that cancels a stream's body has gone away. On node:http, `NodeMcpServer`
 * (`mcp-fleet/node`) serves the same endpoint without fetch's objects.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toWebHandler = (
  server: McpServer,
  options: HttpHandlerOptions = {}
): Effect.Effect<(request: Request) => Promise<Response>, never, Scope.Scope> =>
  Web.endpoint(server, Http.resolve(options))

// ---------------------------------------------------------------------------
// Errors handlers answer with
// ---------------------------------------------------------------------------

/**
 * -32602 for an unknown tool (2025-11-25: "Unknown tool: name").
 *
 * @since 0.1.0
 * @category errors
 */
export const unknownTool: (name: string) => Peer.HandlerError = Server.unknownTool

/**
 * -32602 for an unknown prompt.
 *
 * @since 0.1.0
 * @category errors
 */
export const unknownPrompt: (name: string) => Peer.HandlerError = Server.unknownPrompt

/**
 * -32002 for a resource nothing serves, with `data: { uri }`.
 *
 * @since 0.1.0
 * @category errors
 */
export const resourceNotFound: (uri: string) => Peer.HandlerError = Server.resourceNotFound

/**
 * How deep a request's params may nest (objects and arrays within each other): deeper input
 * is answered -32602 before any handler sees it, since decoding and validating it would
 * overflow the stack.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_INPUT_DEPTH: number = Server.MAX_INPUT_DEPTH

/**
 * -32602 with `message`.
 *
 * @since 0.1.0
 * @category errors
 */
export const invalidParams: (message: string) => Peer.HandlerError = Server.invalidParams

/**
 * -32021 (2026-07-28): the request needs capabilities the client did not declare, named in
 * `data.requiredCapabilities` (e.g. `{ sampling: {} }`).
 *
 * @since 0.1.0
 * @category errors
 */
export const missingClientCapability: (required: McpSchema.ClientCapabilities) => Peer.HandlerError =
  Server.missingClientCapability

/**
 * A tool's own failure as its result: `isError: true` with `message` as text, for the
 * model to read.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolError = (message: string): McpSchema.CallToolResult => ({
  content: [{ type: "text", text: message }],
  isError: true
})

/**
 * The page of `items` a list request asks for, as `{ [key]: items, nextCursor? }`, with
 * opaque cursors that name the list (`kind`); a bad cursor fails with -32602. For servers
 * that answer list methods themselves.
 *
 * @since 0.1.0
 * @category combinators
 */
export const listPage: <A>(
  kind: string,
  key: string,
  items: ReadonlyArray<A>,
  request: JsonRpc.Request,
  size: number
) => Effect.Effect<Record<string, unknown>, Peer.HandlerError> = page

// ---------------------------------------------------------------------------
// The data form
// ---------------------------------------------------------------------------

/**
 * A tool as data: its definition and its handler.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolItem {
  readonly tool: McpSchema.Tool
  readonly handler: (
    args: Record<string, unknown>,
    ctx: RequestContext
  ) => Effect.Effect<McpSchema.CallToolResult, Peer.HandlerError>
}

/**
 * A resource as data.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceItem {
  readonly resource: McpSchema.Resource
  readonly read: (ctx: RequestContext) => Effect.Effect<McpSchema.ReadResourceResult, Peer.HandlerError>
  /** The caching hint of what it reads, for modern clients; default: `Options.caching.read`. */
  readonly cache?: McpSchema.CacheHint | undefined
}

/**
 * A skill as data: its entry, and its files as resources.
 *
 * @since 0.4.0
 * @category models
 */
export interface SkillItem {
  readonly skill: McpSchema.Skill
  readonly files: ReadonlyArray<ResourceItem>
}

/**
 * A skill as `skill` takes it: its files by path within the skill's directory (text, or
 * bytes), `SKILL.md` among them, and the path segments its URI has before the skill's name.
 *
 * @since 0.4.0
 * @category models
 */
export interface SkillDefinition {
  /** Segments before the name: `acme/billing` gives `skill://acme/billing/<name>/SKILL.md`. Default: none. */
  readonly path?: string | undefined
  readonly files: Readonly<Record<string, string | Uint8Array>>
}

/**
 * Completes the value of one argument: the candidates for `value` (at most 100 are sent).
 *
 * @since 0.1.0
 * @category models
 */
export type Completer = (
  value: string,
  ctx: RequestContext,
  context: Readonly<Record<string, string>>
) => Effect.Effect<ReadonlyArray<string>>

/**
 * A resource template as data: URIs matching `uriTemplate` (RFC 6570 `{var}` and `{+var}`)
 * are read by `read` with the variables matched.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceTemplateItem {
  readonly template: McpSchema.ResourceTemplate
  readonly read: (
    uri: string,
    variables: Readonly<Record<string, string>>,
    ctx: RequestContext
  ) => Effect.Effect<McpSchema.ReadResourceResult, Peer.HandlerError>
  /** Completers of its variables, by name. */
  readonly complete?: Readonly<Record<string, Completer>> | undefined
}

/**
 * A prompt as data.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptItem {
  readonly prompt: McpSchema.Prompt
  readonly get: (
    args: Readonly<Record<string, string>>,
    ctx: RequestContext
  ) => Effect.Effect<McpSchema.GetPromptResult, Peer.HandlerError>
  /** Completers of its arguments, by name. */
  readonly complete?: Readonly<Record<string, Completer>> | undefined
}

/**
 * A tool's definition as `tool` takes it: an `McpSchema.Tool` less its `inputSchema`, which
 * is given or made from `parameters`.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolDefinition = Items.ToolDefinition

/**
 * A tool from its definition and a handler. With `parameters` (an Effect Schema of the
 * arguments) its `inputSchema` is made from the Schema and the arguments are decoded with
 * it before the handler runs; bad arguments are a tool execution error (`isError: true`)
 * from 2025-11-25 on, -32602 before. A tool whose `execution.taskSupport` is `required`
 * refuses a call that is not a task (-32601).
 *
 * @since 0.1.0
 * @category constructors
 */
export const tool: {
  <A, I extends Record<string, unknown>>(
    definition: ToolDefinition & {
      readonly parameters: Schema.Schema<A, I>
      readonly handler: (args: A, ctx: RequestContext) => Effect.Effect<McpSchema.CallToolResult, Peer.HandlerError>
    }
  ): ToolItem
  (
    definition: ToolDefinition & {
      readonly inputSchema?: McpSchema.JsonObject | undefined
      readonly handler: (
        args: Record<string, unknown>,
        ctx: RequestContext
      ) => Effect.Effect<McpSchema.CallToolResult, Peer.HandlerError>
    }
  ): ToolItem
} = Items.tool

/**
 * A resource from its definition and a reader.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resource: (
  definition: McpSchema.Resource & { readonly read: ResourceItem["read"]; readonly cache?: ResourceItem["cache"] }
) => ResourceItem = Items.resource

/**
 * A skill from its files (the skills extension, SEP-2640): its URI is
 * `skill://<path>/<name>/SKILL.md`, `name` from the `SKILL.md` frontmatter; each file becomes
 * a resource, and the entry carries the frontmatter and the manifest (each file's digest and
 * size, taken here once). Throws when `SKILL.md` is missing or its frontmatter has no string
 * `name` and `description`.
 *
 * @example
 * ```ts
 * const review = McpServer.skill({
 *   files: { "SKILL.md": "---\nname: code-review\ndescription: Review a change\n---\n\nSteps..." }
 * })
 * const server = yield* McpServer.fromItems({ serverInfo, skills: [review] })
 * ```
 *
 * @since 0.4.0
 * @category constructors
 */
export const skill: (definition: SkillDefinition) => SkillItem = Skills.skill

/**
 * A resource template from its definition, a reader, and completers of its variables.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resourceTemplate: (
  definition: McpSchema.ResourceTemplate & {
    readonly read: ResourceTemplateItem["read"]
    readonly complete?: ResourceTemplateItem["complete"]
  }
) => ResourceTemplateItem = Items.resourceTemplate

/**
 * A prompt from its definition, a getter, and completers of its arguments.
 *
 * @since 0.1.0
 * @category constructors
 */
export const prompt: (
  definition: McpSchema.Prompt & {
    readonly get: PromptItem["get"]
    readonly complete?: PromptItem["complete"]
  }
) => PromptItem = Items.prompt

/**
 * Options of a server made of items.
 *
 * @since 0.1.0
 * @category models
 */
export interface ItemsOptions extends Omit<Options, "handlers"> {
  readonly tools?: ReadonlyArray<ToolItem> | undefined
  readonly resources?: ReadonlyArray<ResourceItem> | undefined
  readonly resourceTemplates?: ReadonlyArray<ResourceTemplateItem> | undefined
  readonly prompts?: ReadonlyArray<PromptItem> | undefined
  /** Skills (see `skill`): given (even none), the server declares the skills extension, and `addSkill` adds more. */
  readonly skills?: ReadonlyArray<SkillItem> | undefined
}

/**
 * A server made of items, which can change while it runs: each change tells every session
 * that the list changed. Adding an item of a name (or URI) already there replaces it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ItemServer extends McpServer {
  readonly addTool: (item: ToolItem) => Effect.Effect<void>
  readonly removeTool: (name: string) => Effect.Effect<void>
  readonly addResource: (item: ResourceItem) => Effect.Effect<void>
  readonly removeResource: (uri: string) => Effect.Effect<void>
  readonly addResourceTemplate: (item: ResourceTemplateItem) => Effect.Effect<void>
  readonly removeResourceTemplate: (uriTemplate: string) => Effect.Effect<void>
  readonly addPrompt: (item: PromptItem) => Effect.Effect<void>
  readonly removePrompt: (name: string) => Effect.Effect<void>
  /** Adds a skill and its files (told as a change of the resources). */
  readonly addSkill: (item: SkillItem) => Effect.Effect<void>
  /** Removes a skill and its files, by the URI of its `SKILL.md`. */
  readonly removeSkill: (uri: string) => Effect.Effect<void>
}

/**
 * Makes a server from items. It declares tools, resources (with subscriptions) and prompts
 * with list_changed, completions, logging, and tasks when a tool supports them or `tasks`
 * is set.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromItems: (options: ItemsOptions) => Effect.Effect<ItemServer, never, Scope.Scope> = Items.fromItems

/**
 * The ItemServer service tag, for programs that serve one server made of items and change
 * them while it runs.
 *
 * @since 0.1.0
 * @category tags
 */
export const ItemServer = Context.GenericTag<ItemServer>("mcp-fleet/McpServer/ItemServer")

/**
 * A layer providing a server made with `fromItems`, as both an `ItemServer` and an
 * `McpServer`; it lives as long as the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerItems = (options: ItemsOptions): Layer.Layer<ItemServer | McpServer> =>
  Layer.scopedContext(
    Effect.map(fromItems(options), (server) => Context.make(ItemServer, server).pipe(Context.add(McpServer, server)))
  )
