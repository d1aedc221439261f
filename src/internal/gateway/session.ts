/**
 * The MCP side of the gateway, whatever carries it: the method handlers of one client
 * session (initialize, the paginated lists, routed calls, subscriptions, logging), and the
 * fibers that forward list changes, log messages and resource updates to its client.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import { listPage as page } from "../../McpServer.js"
import * as Peer from "../../Peer.js"
import type * as Policy from "../../Policy.js"
import type { RegistryEvent } from "../../RegistryEvent.js"
import { Transport } from "../../Transport.js"
import { type CoreOptions, type Fleet, listChangedMethod, reservedNames } from "./fleet.js"
import { InFlight } from "./inFlight.js"
import * as Logging from "./logging.js"
import * as Management from "./management.js"
import * as Naming from "./naming.js"
import * as Relay from "./relay.js"
import * as Routes from "./routes.js"
import * as Subscriptions from "./subscriptions.js"

/** How a session talks to its client. */
export interface Outbound {
  /**
   * Sends a notification. `related` is the request it belongs to (progress, a log message
   * of a routed call), so a transport with a stream per request sends it on that stream.
   */
  readonly notify: (
    method: string,
    params: Record<string, unknown> | undefined,
    related?: JsonRpc.RequestId | undefined
  ) => Effect.Effect<void>
  /**
   * Runs the sending of a request to the client as part of request `related` (a server's
   * sampling during a routed call), so a transport with a stream per request sends it on
   * that stream. Default: as is.
   */
  readonly within?: <A, E>(related: JsonRpc.RequestId, send: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** Who the client is, by its access token (HTTP with OAuth): its calls' audit entries name it. */
  readonly caller?: Policy.CallToolOptions["caller"]
}

/** One client's session: the handlers its Peer runs, by method. */
export interface Session {
  // Own properties only: the Peer looks methods up in a Map made of them, so a method named
  // after an Object.prototype member finds nothing.
  readonly handlers: Readonly<Record<string, Peer.Handler>>
  /**
   * Starts what needs the session's Peer: requests to the client (elicitation for `ask`) and,
   * when the gateway is the fleet's host, the client's place in its relay (its servers'
   * requests, its roots).
   */
  readonly start: (peer: Peer.Peer) => Effect.Effect<void, never, Scope.Scope>
}

/**
 * Every protocol revision the gateway answers with; a client asking for another one gets the
 * latest.
 */
export const negotiate = (requested: unknown): McpSchema.ProtocolVersion =>
  typeof requested === "string" && (McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(requested)
    ? requested as McpSchema.ProtocolVersion
    : McpSchema.LATEST_PROTOCOL_VERSION

const initialize = (options: CoreOptions, client: Relay.RelayClient): Peer.Handler => (request) =>
  Effect.sync(() => {
    client.capabilities = declared(request.params?.capabilities)
    return initializeResult(options, request)
  })

// What the client declared, as far as the gateway needs it; a bad value declares nothing.
const declared = (capabilities: unknown): McpSchema.ClientCapabilities =>
  typeof capabilities === "object" && capabilities !== null && !Array.isArray(capabilities)
    ? capabilities as McpSchema.ClientCapabilities
    : {}

const initializeResult = (options: CoreOptions, request: JsonRpc.Request) => ({
  protocolVersion: negotiate(request.params?.protocolVersion),
  // The fleet changes while clients are connected, so the gateway declares all it can
  // route rather than what today's servers happen to offer.
  capabilities: {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true },
    completions: {},
    logging: {}
  },
  serverInfo: options.serverInfo,
  ...(options.instructions === undefined ? {} : { instructions: options.instructions })
})

// The list handlers: each list as the client may see it, a page at a time, once the fleet
// has settled or the settle window has passed; `more` are tools listed after the fleet's
// (the management tools).
const lists = (context: Routes.RouteContext, more: ReadonlyArray<McpSchema.Tool>): Record<string, Peer.Handler> => {
  const size = context.fleet.options.pageSize
  const current = Effect.zipRight(context.fleet.settled, context.catalog)
  const list =
    (kind: string, key: string, items: (view: Naming.View) => ReadonlyArray<unknown>): Peer.Handler => (request) =>
      Effect.flatMap(current, (view) => page(kind, key, items(view), request, size))
  return {
    [McpSchema.Method.ToolsList]: list(
      "tools",
      "tools",
      (v) => [...[...v.tools].map(([name, entry]) => ({ ...entry.tool, name })), ...more]
    ),
    [McpSchema.Method.ResourcesList]: list(
      "resources",
      "resources",
      (v) => v.catalog.resources.map((entry) => entry.resource)
    ),
    [McpSchema.Method.ResourcesTemplatesList]: list(
      "templates",
      "resourceTemplates",
      (v) => v.catalog.templates.map((entry) => entry.template)
    ),
    [McpSchema.Method.PromptsList]: list(
      "prompts",
      "prompts",
      (v) => [...v.prompts].map(([name, entry]) => ({ ...entry.prompt, name }))
    )
  }
}

/**
 * Makes one client's session: its handlers, and fibers (in the Scope) that forward list
 * changes, log messages and resource updates to it. Resource subscriptions it made are
 * dropped at the servers when the Scope closes, unless another session still holds them.
 */
export const makeSession = (fleet: Fleet, outbound: Outbound): Effect.Effect<Session, never, Scope.Scope> =>
  Effect.gen(function*() {
    const inFlight = new InFlight()
    const client = makeClient(inFlight, outbound)
    // A client that answers elicitation approves `ask` tools itself: it lists them too.
    const catalog = Effect.map(
      SubscriptionRef.get(fleet.registry.catalog),
      (current) =>
        Naming.view(
          fleet.options.naming,
          current,
          fleet.policy.filter(current, Relay.elicitsForms(client.client.capabilities) ? ASKING : undefined),
          reservedNames(fleet.management)
        )
    )
    const context: Routes.RouteContext = { fleet, catalog, outbound, inFlight, client: client.client }
    const subscriptions = yield* Subscriptions.make(fleet, Effect.map(catalog, (view) => view.catalog))
    const logging = Logging.make(inFlight, outbound)
    const management = yield* Management.make(fleet, subscriptions, outbound)

    const handlers: Record<string, Peer.Handler> = {
      [McpSchema.Method.Initialize]: initialize(fleet.options, client.client),
      ...lists(context, management?.tools ?? []),
      [McpSchema.Method.ToolsCall]: management === undefined
        ? Routes.callTool(context)
        : management.callTool(Routes.callTool(context)),
      [McpSchema.Method.ResourcesRead]: Routes.readResource(context),
      [McpSchema.Method.ResourcesSubscribe]: subscriptions.subscribe,
      [McpSchema.Method.ResourcesUnsubscribe]: subscriptions.unsubscribe,
      [McpSchema.Method.PromptsGet]: Routes.getPrompt(context),
      [McpSchema.Method.CompletionComplete]: Routes.complete(context),
      [McpSchema.Method.LoggingSetLevel]: logging.setLevel
    }

    // List changes, for as long as the session lives.
    const changes = yield* PubSub.subscribe(fleet.listChanged)
    yield* Queue.take(changes).pipe(
      Effect.flatMap((kind) => outbound.notify(listChangedMethod(kind), undefined)),
      Effect.forever,
      Effect.forkScoped
    )

    const onEvent = (event: RegistryEvent): Effect.Effect<void> => {
      switch (event._tag) {
        case "LogMessage":
          return logging.forward(event)
        case "ResourceUpdated":
          return subscriptions.has(event.server, event.uri)
            ? outbound.notify(McpSchema.Method.ResourcesUpdated, { uri: event.uri })
            : Effect.void
        default:
          return Effect.void
      }
    }
    const events = yield* fleet.registry.subscribe
    yield* Queue.take(events).pipe(Effect.flatMap(onEvent), Effect.forever, Effect.forkScoped)

    return {
      handlers,
      start: (peer) => {
        client.setPeer(peer)
        return fleet.relay === undefined ? Effect.void : joinRelay(fleet.relay, client.client, peer)
      }
    }
  })

const ASKING = { approver: true }

// The client as the relay and the routes see it; its requests go out through the Peer it is given.
const makeClient = (inFlight: InFlight, outbound: Outbound) => {
  let peer: Peer.Peer | undefined
  const client: Relay.RelayClient = {
    capabilities: undefined,
    roots: [],
    inFlight,
    request: (method, params, related) =>
      Effect.suspend(() => {
        const send = peer!.request(method, params)
        return outbound.within === undefined ? send : outbound.within(related, send)
      })
  }
  return { client, setPeer: (p: Peer.Peer) => void (peer = p) }
}

// Joins the client to the relay for the session's life, and keeps its roots there: asked
// once it is initialized and again whenever it says they changed.
const joinRelay = (
  relay: Relay.Relay,
  client: Relay.RelayClient,
  peer: Peer.Peer
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    yield* Relay.register(relay, client)
    const roots = Relay.fetchRoots(relay, client, peer.request(McpSchema.Method.RootsList))
    const notifications = yield* peer.subscribe
    if (client.capabilities !== undefined) yield* Effect.forkScoped(roots)
    yield* Queue.take(notifications).pipe(
      Effect.flatMap((notification) =>
        notification.method === McpSchema.Method.Initialized ||
          notification.method === McpSchema.Method.RootsListChanged
          ? roots
          : Effect.void
      ),
      Effect.forever,
      Effect.forkScoped
    )
  })

/**
 * Serves one client over the Transport in context, until it hangs up; returns why it ended.
 */
export const serveSession = (fleet: Fleet): Effect.Effect<McpError.McpError, never, Transport> =>
  Effect.scoped(Effect.gen(function*() {
    const transport = yield* Transport
    const session = yield* makeSession(fleet, {
      notify: (method, params) =>
        Effect.ignore(transport.send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }))
    })
    const peer = yield* Peer.make({ handlers: session.handlers })
    yield* session.start(peer)
    return yield* peer.closed
  }))
