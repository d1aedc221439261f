/**
 * The fleet served as one MCP server. Clients see every server's tools and prompts under
 * their qualified names (`mcp__<server>__<tool>`), or their own names where unique with the
 * `naming: "plain"` option, and every resource under its own URI;
 * their calls are routed to the owning server (tool calls through the Policy) and answered
 * with its result unchanged. Changes of the fleet reach them as list_changed
 * notifications, progress of a routed call reaches the client that made it, and a client's
 * cancellation cancels the call at the server.
 *
 * The gateway is an `McpServer` whose handlers route to the fleet; an app can serve its own
 * tools with the fleet's (the `tools` option). Ways in: any Transport (`serve`); stdio, for
 * hosts that spawn the gateway (`NodeGateway.serveStdio`, `mcp-fleet/node`); and Streamable
 * HTTP (McpServer's), with sessions, SSE answers, DNS-rebinding protection and an optional
 * bearer token (a static one, or OAuth access tokens with the gateway as a resource server:
 * `oauth`, see ResourceServer), as `(Request) => Promise<Response>` (`toWebHandler`) or,
 * with `NodeGateway`, on a listener of its own (`serveHttp`) or mounted in the app's
 * node:http server (`toNodeHandler`).
 *
 * Choices the protocol leaves open:
 * - initialize declares every capability the gateway can route (tools, resources with
 *   subscribe, prompts, completions, logging; lists with listChanged), because servers join
 *   and leave while clients stay connected (completions from 2025-03-26 on). Any supported
 *   revision the client asks for is accepted; otherwise the latest. Requests other than ping
 *   before initialize are refused (-32600).
 * - A tool call that fails in the fleet (server down, timeout, denied by policy, rejected
 *   arguments) answers with a CallToolResult with `isError: true` and the message: a tool
 *   execution error, which the model sees. An unknown tool (-32602, with the closest names)
 *   and the server's own JSON-RPC error (passed through) are protocol errors.
 * - initialize is answered at once, whatever the servers are doing. Lists, and calls naming
 *   a tool, prompt or resource no server has yet, wait for servers still connecting, but
 *   only within the settle window from the gateway's start (3 s by default): one hung server
 *   never holds the others up, and it is announced when it joins.
 * - list_changed is sent for a list when what a client would list changed (after the
 *   Policy's filter), once per burst of changes; a restart that brings back the same tools
 *   sends nothing.
 * - A server's log messages go to the clients with a call in flight to that server, and to
 *   every client that set a level with logging/setLevel (at or above it). setLevel is not
 *   passed on: the servers are shared by all clients.
 * - Over HTTP, a POST holding a tool call or a request with a progress token is answered
 *   with an SSE stream (a priming event, its progress and log messages, then the answer);
 *   other POSTs with JSON. A client whose stream dropped gets the rest with a GET carrying
 *   Last-Event-ID. Notifications not tied to a request go on the session's GET stream;
 *   with none open they are dropped.
 * - Resource subscriptions are counted across clients: a server is asked once per URI and
 *   told to stop when the last client lets go.
 * - The MCP management tools (`ListMcpResources`, `ReadMcpResource`, `SubscribeMcpResource`,
 *   `UnsubscribeMcpResource`, `SubscribePolling`, `UnsubscribePolling`) are served only with
 *   the `managementTools` option, which is off by default: they let a client read every
 *   server's resources and poll tools. Each session has its own polls and subscriptions,
 *   ended with the session; a poll's changes reach its client as log messages from the
 *   logger `mcp-fleet/poll`. A 2026-07-28 request has no session to keep them in: it is
 *   served `ListMcpResources` and `ReadMcpResource` only, and a call of another is a tool
 *   error saying why (such a client watches resources with subscriptions/listen).
 * - Requests fronted servers send (sampling, elicitation, roots) reach the gateway's clients
 *   when the gateway is the fleet's host (`layerHost`, provided to the registry and the
 *   gateway): see there. Without it they go to the registry's own Host services, if any.
 * - Fronted tools are listed with their `execution.taskSupport`. With the `tasks` option,
 *   tasks are passed through as tasks of the gateway's own: it declares the tasks extension
 *   (`io.modelcontextprotocol/tasks`) to 2026-07-28 clients and 2025-11-25's `tasks` to
 *   stateful ones, and a client's call of such a tool runs as a gateway task (McpServer's,
 *   see `McpServer.TaskOptions`: a 2026-07-28 client that declares the extension gets one
 *   as soon as the routed call waits on its server; `required` without it: -32021) whose
 *   work is the routed call, made however the fleet makes it (a fronted server's own task
 *   is followed by the fleet's client). What the fronted server asks meanwhile reaches the
 *   client through the task (`tasks/get` shows it, `tasks/update` answers it), and
 *   `tasks/cancel` cancels the routed call, so the call at the fronted server.
 *   A gateway task id is random and bound to this gateway process: behind a load balancer
 *   a task lives on the replica that created it (`tasks/get` elsewhere: unknown task), so a
 *   client's task requests must reach that replica. The gateway's call stays inline while
 *   the routed call is (`McpServer.RequestContext.keepInline`) and becomes its task when
 *   the routed call does (the fleet's `onTask`), or when the fronted server asks outside
 *   the call (a stateful server's request outside a task): so a fronted tool that asks by
 *   MRTR before its task exists (SEP-2663's composition) asks the client by an input round
 *   of its call (`beforeTask`), then the client gets the task. A fronted call answered
 *   inline is a gateway task already done. On by default (`tasks: false` turns it off): a
 *   task waiting for its client keeps its routed call in flight, but the fronted server's
 *   requests that name their call go to that call's client whatever else is in flight
 *   (`layerHost`).
 * - A tool under an `ask` rule is listed to a client that declared elicitation, and each
 *   call asks it (`elicitation/create`, one yes/no field); not approved, the call answers a
 *   Denied tool error. To other clients it is hidden unless the Policy has an approver.
 * - Deferred tools (`toolSearch`): above 40 of the fleet's tools a client would list (or
 *   always, or never), tools/list holds the app's tools, the `alwaysLoad` ones, the
 *   management tools, `search_tools {query, limit?}` and `call_tool {name, arguments}`
 *   instead of every tool. A search answers its hits' names, one-line descriptions and
 *   inputSchemas (`structuredContent.tools`, and the same as JSON text), from the fleet's
 *   `ToolSearch` (the one in context, else one made over the registry and Policy). A
 *   stateful session's hits join its list, with `notifications/tools/list_changed` on the
 *   search's stream; every tool the client may see stays callable by name whether listed
 *   or not, through the Policy as ever, and through `call_tool`. A 2026-07-28 client has no
 *   session to keep hits in: it calls them by name. Tasks of an unlisted tool: a stateful
 *   client's task-augmented call finds the tool in its list, so it searches first.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Host from "./Host.js"
import * as FleetHub from "./internal/gateway/fleetHub.js"
import * as GatewayRelay from "./internal/gateway/relay.js"
import * as GatewaySession from "./internal/gateway/session.js"
import { traced } from "./internal/traced.js"
import type * as McpError from "./McpError.js"
import * as McpManagementTools from "./McpManagementTools.js"
import type * as McpSchema from "./McpSchema.js"
import * as McpServer from "./McpServer.js"
import * as Policy from "./Policy.js"
import * as ServerRegistry from "./ServerRegistry.js"
import * as ToolSearch from "./ToolSearch.js"
import type { Transport } from "./Transport.js"

/**
 * How the gateway presents the fleet, in either mode.
 *
 * @since 0.1.0
 */
export interface Options {
  /** The most items of one list page (tools/list, ...). Default: 100. */
  readonly pageSize?: number | undefined
  /** Who the gateway says it is in initialize. Default: `{ name: "mcp-fleet", version }`. */
  readonly serverInfo?: McpSchema.Implementation | undefined
  /** Instructions for the client's model, sent in initialize. Default: none. */
  readonly instructions?: string | undefined
  /** How long the fleet must be quiet before list changes are announced. Default: 100 ms. */
  readonly listChangedDebounce?: Duration.DurationInput | undefined
  /**
   * Serves the MCP management tools (see McpManagementTools) after the fleet's tools, each
   * session with its own polls and subscriptions (2026-07-28 requests: the two that work
   * within one request). Default: false.
   */
  readonly managementTools?: boolean | undefined
  /**
   * The settle window: how long, from the gateway's start, list requests (and calls naming
   * something no server has yet) wait for servers still connecting, until each is ready or
   * has failed once. Later, they answer with what is ready, and servers that join after are
   * announced with list_changed. Default: 3 s.
   */
  readonly settle?: Duration.DurationInput | undefined
  /**
   * The names clients see for tools and prompts. `"qualified"` (default): every one as
   * `mcp__<server>__<name>`, the same whatever else the fleet holds. `"plain"`: a server's
   * own name when no other server of the fleet has a tool (or prompt) of that name, so a
   * host fronting one server sees that server's names; every one that shares a name is
   * qualified. A name never moves to another server: when a server joins with a name
   * already served plainly, both become qualified (with list_changed) and a call by the
   * plain name is refused as unknown. Qualified names are accepted in both modes.
   */
  readonly naming?: "qualified" | "plain" | undefined
  /**
   * The app's own tools (`McpServer.tool` items, with Effect Schema parameters, or an
   * `@effect/ai` toolkit's through `AiToolkit.toolItems` of `mcp-fleet/ai`), served with the
   * fleet's: "my app's tools plus every
   * server in my config, as one MCP server". Listed first, under their own names (never
   * qualified); called here, in the app, with the request's context (progress, logging,
   * requests to the client). The Policy does not see them: its rules govern the fleet's
   * servers, and the app's code is the app's to guard. Their names are the gateway's own: with
   * `naming: "plain"` a server's tool of the same name is listed qualified. Refused at
   * start (a defect): two of one name, a name starting with `mcp__` (a server's qualified
   * form), or a management tool's name while those are served. Default: none.
   */
  readonly tools?: ReadonlyArray<McpServer.ToolItem> | undefined
  /**
   * Whether modern (2026-07-28) clients are answered too, statelessly, beside stateful
   * sessions (McpServer's `modern`). Default: true; `false` serves the stateful revisions only.
   */
  readonly modern?: boolean | undefined
  /**
   * The key that signs the `requestState` of modern (2026-07-28) requests needing input
   * from the client (a tool call whose server asks for sampling or elicitation). Replicas
   * of the gateway behind a load balancer share it, so a retry may land on any of them.
   * Default: random per gateway (a retry must come back to the same process).
   */
  readonly stateSecret?: Redacted.Redacted<string> | undefined
  /** The caching hints of the gateway's modern results (see `McpServer.CachingOptions`). */
  readonly caching?: McpServer.CachingOptions | undefined
  /**
   * Passes tasks through (see the module doc): a call of a fronted tool that supports tasks
   * runs as a task of the gateway's, for 2026-07-28 clients that declare the tasks extension
   * and 2025-11-25 clients that ask for one. Default: on, with McpServer's task defaults.
   * `false` turns it off: such calls are answered inline, the fleet running them as tasks at
   * their servers as it does any call (CLI: `serve --no-tasks`).
   */
  readonly tasks?: McpServer.TaskOptions | false | undefined
  /**
   * Deferred tools (see the module doc): `true` lists `search_tools` and `call_tool` instead
   * of the fleet's tools, `false` lists every tool. Default: deferred when a client would
   * list more than `toolSearchThreshold` of the fleet's tools (CLI: `serve --tool-search`,
   * `--no-tool-search`).
   */
  readonly toolSearch?: boolean | undefined
  /** Above how many of the fleet's tools a client's list is deferred, by default. Default: 40. */
  readonly toolSearchThreshold?: number | undefined
  /**
   * The fleet's tools listed in deferred mode too: globs (`*`, `?`) over the qualified
   * name (`mcp__github__*`), the listed one or the server's own (CLI: `--always-load`).
   */
  readonly alwaysLoad?: ReadonlyArray<string> | undefined
}

/**
 * Options of the gateway as a Streamable HTTP endpoint: the gateway's, and the endpoint's
 * (`McpServer.HttpHandlerOptions`: path, host, token or OAuth, allowed origins, limits).
 *
 * @since 0.2.0
 */
export interface HttpHandlerOptions extends Options, McpServer.HttpHandlerOptions {}

/**
 * What the gateway needs: the fleet, and the policy its tool calls go through.
 *
 * @since 0.1.0
 */
export type Requirements = ServerRegistry.ServerRegistry | Policy.Policy

/**
 * The gateway as the fleet's host: the relay between the servers' requests and the gateway's
 * clients. Made by `layerHost`, which also provides the `Host` services the fleet answers
 * its servers with; a gateway that finds it in context passes its clients' answers through.
 *
 * @since 0.2.0
 * @category tags
 */
export interface ClientHost {
  /** @internal */
  readonly relay: GatewayRelay.Relay
}

/**
 * The `ClientHost` service tag.
 *
 * @since 0.2.0
 * @category tags
 */
export const ClientHost = Context.GenericTag<ClientHost>("mcp-fleet/Gateway/ClientHost")

/**
 * The gateway's clients as the fleet's host. Provide it to the `ServerRegistry` (its
 * `Host.Sampling`, `Host.Elicitation` and `Host.Roots`) and to the gateway (`ClientHost`):
 *
 * - A server's `sampling/createMessage` or `elicitation/create` goes to the gateway client
 *   whose call it belongs to (over HTTP on that call's SSE stream, or as an input round),
 *   if that client declared the capability (with `tools`, `context`, `url` as the request
 *   needs); otherwise it is refused (-1, or -32021 to a 2026-07-28 client) with the reason.
 *   The call is known when the server says so (an input request of a 2026-07-28 result or
 *   task, a 2025-11-25 task's request) or sends it on the stream of the call's POST (a
 *   stateful Streamable HTTP server): `McpClient.CallToolOptions.onInput`. A request that
 *   comes with no call (a stateful server's over stdio, HTTP+SSE or WebSocket outside a task,
 *   or on a Streamable HTTP server's GET stream) goes to the one client with a call in flight
 *   at that server, and is refused when no client's or several clients' are.
 * - The servers' roots are the union of the roots the clients declare (asked after their
 *   initialize and on their `notifications/roots/list_changed`), or `roots` while none does.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerHost = (
  options: { readonly roots?: ReadonlyArray<McpSchema.Root> | undefined } = {}
): Layer.Layer<ClientHost | Host.Sampling | Host.Elicitation | Host.Roots> =>
  Layer.effectContext(Effect.map(GatewayRelay.make(options.roots ?? []), (relay) => {
    const services = GatewayRelay.services(relay)
    return Context.make(ClientHost, { relay }).pipe(
      Context.add(Host.Sampling, services.sampling),
      Context.add(Host.Elicitation, services.elicitation),
      Context.add(Host.Roots, services.roots)
    )
  }))

// The fleet's tool index the gateway searches: the ToolSearch in context, else its own.
const searchOf = Effect.map(
  ToolSearch.fromContext,
  (index) => (query: string, limit: number) =>
    Effect.map(index.search(query, { limit }), (hits) => hits.map((hit) => hit.name))
)

// The gateway's McpServer, serving the fleet until the Scope closes.
const serverOf = (options: Options) =>
  Effect.gen(function*() {
    const searching = options.toolSearch !== false
    const problem = FleetHub.appToolsProblem(options.tools ?? [], options.managementTools === true, searching)
    if (problem !== undefined) return yield* Effect.dieMessage(`Gateway: ${problem}`)
    const registry = yield* ServerRegistry.ServerRegistry
    const policy = yield* Policy.Policy
    const search = searching ? yield* searchOf : undefined
    const management: FleetHub.MakeManagement | undefined = options.managementTools === true
      ? (subscriber) =>
        McpManagementTools.make({ subscriber }).pipe(
          Effect.provideService(ServerRegistry.ServerRegistry, registry),
          Effect.provideService(Policy.Policy, policy)
        )
      : undefined
    const hub = yield* FleetHub.make(registry, policy, FleetHub.resolveOptions(options), management, search)
    const host = yield* Effect.serviceOption(ClientHost)
    return yield* GatewaySession.makeServer(
      Option.isNone(host) ? hub : { ...hub, relay: host.value.relay },
      {
        stateSecret: options.stateSecret,
        caching: options.caching,
        tasks: options.tasks === false ? undefined : options.tasks ?? {}
      }
    )
  })

/**
 * The gateway's McpServer, routing to the fleet until the Scope closes: what the gateway's
 * ways in serve (`NodeGateway`'s HTTP among them), for serving it over any other.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<McpServer.McpServer, never, Requirements | Scope.Scope> =>
  serverOf(options)

/**
 * Serves one client over the Transport in context (the server's end of a connection, such
 * as one end of `Memory.makePair`). Returns why the connection ended, once it has.
 *
 * @since 0.1.0
 */
export const serve: (options?: Options) => Effect.Effect<McpError.McpError, never, Transport | Requirements> = traced(
  "Gateway.serve"
)((options: Options = {}) => Effect.scoped(Effect.flatMap(serverOf(options), (server) => server.serve)))

/**
 * Logging to stderr only: the loggers that write to stdout (Effect's default one, and the
 * pretty one `runMain` installs) give way to a pretty logger on stderr; others stay. In
 * stdio mode stdout carries the protocol, so a program running the gateway on stdio
 * provides this around everything (the registry's fibers log too).
 *
 * @since 0.1.0
 */
export const stdioLogger: Layer.Layer<never> = Layer.scopedDiscard(
  Effect.locallyScopedWith(FiberRef.currentLoggers, (loggers) =>
    loggers.pipe(
      HashSet.remove(Logger.defaultLogger),
      HashSet.remove(Logger.prettyLoggerDefault),
      HashSet.add(Logger.prettyLogger({ stderr: true, colors: false }))
    ))
)

/**
 * The fleet as a web-standard Streamable HTTP endpoint, `(Request) => Promise<Response>`,
 * serving until the Scope closes, at whatever path the app routes to it (see
 * `McpServer.toWebHandler`). Sessions start at initialize (the answer carries
 * `Mcp-Session-Id`) and end with DELETE or the Scope; an unknown session gets 404, a request
 * without one 400. GET opens the session's stream of notifications; other methods get 405. A
 * `MCP-Protocol-Version` header naming a revision the gateway does not speak gets 400. A
 * foreign Origin or Host gets 403, a missing or wrong bearer token (when `token` is set) 401
 * with `WWW-Authenticate: Bearer`. With `oauth`, a missing or invalid access token gets 401
 * with `WWW-Authenticate: Bearer resource_metadata="…"` (and `error="invalid_token"`), one
 * without the required scopes 403 `insufficient_scope`, and 503 when its authorization
 * server could not be asked. `token` and `oauth` together are a defect. On node:http,
 * `NodeGateway` (`mcp-fleet/node`) serves the same endpoint, and listens too.
 *
 * @since 0.3.0
 * @category constructors
 */
export const toWebHandler = (
  options: HttpHandlerOptions = {}
): Effect.Effect<(request: Request) => Promise<Response>, never, Requirements | Scope.Scope> =>
  Effect.flatMap(serverOf(options), (server) => McpServer.toWebHandler(server, options))
