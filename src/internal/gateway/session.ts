/**
 * The gateway as an `McpServer`: each client session gets handlers that route to the fleet
 * (its own view of the catalog, its subscriptions, its management tools, its place in the
 * relay), and what forwards the fleet's log messages and resource updates to it (through
 * the fleet's one event dispatcher). The protocol itself (initialize, paging, setLevel,
 * whatever carries it) is McpServer's.
 *
 * Modern (2026-07-28) requests share one handler set (`McpServer.Options.modernHandlers`) over
 * what the gateway shares: the catalog views per Policy variant (made again only when the
 * catalog or its filtering changed), the lists, the management tools, one receiver of log
 * messages. Each routed call makes the request's own route from its `RequestContext` (its
 * client's capabilities, its caller, its calls in flight), by which the relay and the log
 * forwarding find it while it has calls in flight; a subscriptions/listen gets the same
 * handlers, subscribing in its own Scope, its updates tagged with its `subscriptionId`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Catalog from "../../Catalog.js"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
import type { RegistryEvent } from "../../RegistryEvent.js"
import * as DeferredTools from "./deferredTools.js"
import { type FleetHub, reservedNames } from "./fleetHub.js"
import { InFlight } from "./inFlight.js"
import * as Logging from "./logging.js"
import * as Management from "./management.js"
import * as Naming from "./naming.js"
import * as Relay from "./relay.js"
import * as Routes from "./routes.js"
import * as Subscriptions from "./subscriptions.js"

const ASKING = { approver: true }

// The lists as a client may see them (`catalog`: its view), once the fleet has settled or
// the settle window has passed: the app's own tools first, then the fleet's, then `more`
// (the management tools), then in deferred mode the tool search tools, the fleet's tools
// being only those always loaded and those `revealed` to the client. Each made once per
// view (views are made again only on a change), not per request: a modern tools/call lists
// the tools to find the one it calls. A session's revealed tools are listed afresh.
const lists = (
  hub: FleetHub,
  catalog: Effect.Effect<Naming.View>,
  more: ReadonlyArray<McpSchema.Tool>,
  revealed: ReadonlySet<string> = new Set()
) => {
  const current = Effect.zipRight(hub.settled, catalog)
  const memo = <A>(items: (view: Naming.View) => ReadonlyArray<A>) => {
    const made = new WeakMap<Naming.View, ReadonlyArray<A>>()
    return (view: Naming.View) => {
      let list = made.get(view)
      if (list === undefined) made.set(view, list = items(view))
      return list
    }
  }
  const listed = <A>(items: (view: Naming.View) => ReadonlyArray<A>) => {
    const get = memo(items)
    return () => Effect.map(current, get)
  }
  const own = [...hub.options.tools.values()].map((item) => item.tool)
  const search = hub.options.toolSearch
  const deferredList = (view: Naming.View) => [
    ...own,
    ...DeferredTools.listed(search, view, revealed),
    ...more,
    ...DeferredTools.tools
  ]
  const every = memo((v) => [...own, ...[...v.tools].map(([name, entry]) => ({ ...entry.tool, name })), ...more])
  const deferred = memo(deferredList)
  return {
    tools: () =>
      Effect.map(current, (view) =>
        !DeferredTools.isDeferred(search, view)
          ? every(view)
          : revealed.size === 0
          ? deferred(view)
          : deferredList(view)),
    resources: listed((v) => v.catalog.resources.map((entry) => entry.resource)),
    templates: listed((v) => v.catalog.templates.map((entry) => entry.template)),
    prompts: listed((v) => [...v.prompts].map(([name, entry]) => ({ ...entry.prompt, name }))),
    skills: listed((v) => v.catalog.skills.map((entry) => entry.skill))
  }
}

type Lists = ReturnType<typeof lists>

// The catalog as the Policy lets a client see it (`asking`: one that approves `ask` tools),
// under the names clients see. The view is made again only when the catalog or what the
// Policy hides of it changed, not per request.
const viewOf = (hub: FleetHub, asking: typeof ASKING | undefined): Effect.Effect<Naming.View> => {
  const reserved = reservedNames(hub.management, hub.options)
  let last:
    | { readonly catalog: Catalog.Catalog; readonly visible: Catalog.Catalog; readonly view: Naming.View }
    | undefined
  return Effect.map(SubscriptionRef.get(hub.registry.catalog), (catalog) => {
    const visible = hub.policy.filter(catalog, asking)
    if (last?.catalog !== catalog || last.visible !== visible) {
      last = { catalog, visible, view: Naming.view(hub.options.naming, catalog, visible, reserved) }
    }
    return last.view
  })
}

/** What every session and modern request of one gateway shares, made once. */
export interface Shared {
  /** The catalog as a client that does not approve `ask` tools sees it, then as one that does. */
  readonly views: readonly [Effect.Effect<Naming.View>, Effect.Effect<Naming.View>]
  /** The handlers of 2026-07-28 requests, one set for all (`McpServer.Options.modernHandlers`). */
  readonly modern: McpServer.Handlers
}

type LogMessage = Extract<RegistryEvent, { readonly _tag: "LogMessage" }>

// A client that answers elicitation approves `ask` tools itself: it lists them too.
const asking = (capabilities: McpSchema.ClientCapabilities | undefined): 0 | 1 =>
  Relay.elicitsForms(capabilities) ? 1 : 0

/**
 * What the sessions and modern requests of a gateway share: the catalog views, and the
 * handlers of modern requests — their lists and management tools, and the one receiver of
 * the fleet's log messages for those that have calls in flight.
 */
export const makeShared = (hub: FleetHub): Effect.Effect<Shared, never, Scope.Scope> =>
  Effect.gen(function*() {
    const views = [viewOf(hub, undefined), viewOf(hub, ASKING)] as const
    const management = yield* Management.makeModern(hub, Effect.map(views[0], (view) => view.catalog))
    const more = management?.tools ?? []
    const busy = new Set<(event: LogMessage) => Effect.Effect<void>>()
    yield* hub.onEvents((event) =>
      event._tag === "LogMessage" && busy.size > 0
        ? Effect.forEach([...busy], (forward) => forward(event), { discard: true })
        : Effect.void
    )
    const modernLists = [lists(hub, views[0], more), lists(hub, views[1], more)] as const
    return {
      views,
      modern: routedHandlers(
        hub,
        modernRoute(hub, views, busy),
        (ctx) => modernLists[asking(ctx.client.capabilities)],
        management,
        {},
        // A modern client has no list to add its hits to: it calls them by name.
        { catalog: (ctx) => views[asking(ctx.client.capabilities)], reveal: revealNothing }
      )
    }
  })

// A 2026-07-28 request's route, made at its routed call (its handlers are everyone's): its
// client's capabilities, its caller and its calls in flight, by which (while it has any)
// the relay finds it and the fleet's log messages reach it. It has no log level of its own
// for them (logging/setLevel is gone): a message of a server it has a call at is its own.
const modernRoute = (
  hub: FleetHub,
  views: Shared["views"],
  busy: Set<(event: LogMessage) => Effect.Effect<void>>
): Routes.Route =>
(ctx) => {
  const relay = hub.relay
  const inFlight: InFlight = new InFlight((isBusy) => {
    if (isBusy) {
      busy.add(forward)
      relay?.clients.add(client)
    } else {
      busy.delete(forward)
      relay?.clients.delete(client)
    }
  })
  const capabilities = ctx.client.capabilities
  const client: Relay.RelayClient = { capabilities, roots: [], inFlight }
  const forward = Logging.forwarder(inFlight, {
    level: noLevel,
    notify: (method, params) => ctx.notify(method, params ?? {})
  })
  return { hub, catalog: views[asking(capabilities)], inFlight, client, caller: callerOf(ctx.caller), stateful: false }
}

const noLevel = () => undefined

// The tools/call handler over `routed` (the fleet's tools, the management tools when served,
// the tool search tools while tool search may be on): the app's own tools run here, as the
// app's code; the Policy governs the fleet's servers. `reveal` shows a session what its
// searches found.
const toolCall = (
  hub: FleetHub,
  management: Management.SessionManagement | undefined,
  routed: McpServer.ToolHandlers["call"],
  searching: Searching
): McpServer.ToolHandlers["call"] => {
  const managed = management === undefined ? routed : management.callTool(routed)
  const fleetCall = hub.search === undefined
    ? managed
    : DeferredTools.callTool(hub.search, searching.catalog, searching.reveal, managed)
  const own = hub.options.tools
  return own.size === 0 ? fleetCall : (name, args, ctx) => {
    const item = own.get(name)
    return item === undefined ? fleetCall(name, args, ctx) : item.handler(args, ctx)
  }
}

// What search_tools works with: the client's view, and how what it found is shown to it.
interface Searching {
  readonly catalog: (ctx: McpServer.RequestContext) => Effect.Effect<Naming.View>
  readonly reveal: DeferredTools.Reveal
}

const revealNothing: DeferredTools.Reveal = () => Effect.void

// The handlers a client gets, routed by `route`, listing what `listed` gives; `subscribing`
// is how it subscribes.
const routedHandlers = (
  hub: FleetHub,
  route: Routes.Route,
  listed: (ctx: McpServer.RequestContext) => Lists,
  management: Management.SessionManagement | undefined,
  subscribing: Pick<McpServer.ResourceHandlers, "subscribe" | "unsubscribe">,
  searching: Searching
): McpServer.Handlers => ({
  tools: { list: (ctx) => listed(ctx).tools(), call: toolCall(hub, management, Routes.callTool(route), searching) },
  resources: {
    list: (ctx) => listed(ctx).resources(),
    templates: (ctx) => listed(ctx).templates(),
    read: Routes.readResource(route),
    subscribe: subscribing.subscribe,
    unsubscribe: subscribing.unsubscribe
  },
  prompts: { list: (ctx) => listed(ctx).prompts(), get: Routes.getPrompt(route) },
  // Skills pass through as their servers list them; their files are read as resources.
  skills: { list: (ctx) => listed(ctx).skills() },
  complete: Routes.complete(route)
})

/** Makes the handlers of a session or of a modern request. */
export type MakeHandlers = (
  hub: FleetHub,
  shared: Shared,
  client: McpServer.Client,
  session: McpServer.Session
) => Effect.Effect<McpServer.Handlers, never, Scope.Scope>

const callerOf = (caller: McpServer.Session["caller"]): Routes.RouteContext["caller"] =>
  caller === undefined ? undefined : { subject: caller.subject, clientId: caller.clientId }

/**
 * The handlers of one client session, in its Scope: resource subscriptions it made are
 * dropped at the servers when the Scope closes, unless another session still holds them.
 * A 2026-07-28 request's are `Shared.modern`; a subscriptions/listen's, `listenHandlers`.
 */
export const makeHandlers: MakeHandlers = (hub, shared, client, session) =>
  Effect.gen(function*() {
    const inFlight = new InFlight()
    const relayClient: Relay.RelayClient = {
      capabilities: client.capabilities,
      roots: [],
      inFlight
    }
    const catalog = shared.views[asking(client.capabilities)]
    const context: Routes.RouteContext = {
      hub,
      catalog,
      inFlight,
      client: relayClient,
      caller: callerOf(session.caller),
      stateful: client.capabilities.sampling !== undefined || client.capabilities.elicitation !== undefined
    }
    const subscriptions = yield* Subscriptions.make(
      hub,
      Effect.map(catalog, (view) => view.catalog),
      context.caller?.subject
    )
    const forward = Logging.forwarder(inFlight, session)
    const management = yield* Management.make(hub, subscriptions, session)
    yield* hub.onEvents((event) => {
      switch (event._tag) {
        case "LogMessage":
          return forward(event)
        case "ResourceUpdated":
          return subscriptions.has(event.server, event.uri, event.principal)
            ? session.notify(McpSchema.Method.ResourcesUpdated, { uri: event.uri })
            : Effect.void
        default:
          return Effect.void
      }
    })
    if (hub.relay !== undefined) yield* joinRelay(hub.relay, relayClient, session)

    const revealed = new Set<string>()
    const listed = lists(hub, catalog, management?.tools ?? [], revealed)
    return routedHandlers(hub, () => context, () => listed, management, subscriptions, {
      catalog: () => catalog,
      reveal: reveal(hub, catalog, revealed)
    })
  })

// A stateful session's search hits join its list: told to its client (on the search's
// stream) when its list is deferred and one was neither listed nor always loaded.
const reveal =
  (hub: FleetHub, catalog: Effect.Effect<Naming.View>, revealed: Set<string>): DeferredTools.Reveal => (names, ctx) =>
    Effect.flatMap(catalog, (view) => {
      const search = hub.options.toolSearch
      let joined = false
      for (const name of names) {
        const entry = view.tools.get(name)
        if (entry === undefined || revealed.has(name)) continue
        revealed.add(name)
        joined ||= !search.alwaysLoad(name, entry.tool)
      }
      return joined && DeferredTools.isDeferred(search, view)
        ? ctx.notify(McpSchema.Method.ToolsListChanged, {})
        : Effect.void
    })

/**
 * The handlers of one 2026-07-28 subscriptions/listen request: the shared ones, subscribing
 * for its life, in its Scope (the only modern request with one).
 */
export const listenHandlers: MakeHandlers = (hub, shared, client, session) =>
  Effect.map(Effect.scope, (scope) => {
    const listening = listen(hub, shared.views[asking(client.capabilities)], session, scope)
    const resources = shared.modern.resources!
    return {
      ...shared.modern,
      resources: {
        ...resources,
        subscribe: (uri, ctx) => Effect.flatMap(listening(ctx.request.id), (held) => held.subscribe(uri)),
        unsubscribe: (uri, ctx) => Effect.flatMap(listening(ctx.request.id), (held) => held.unsubscribe(uri))
      }
    }
  })

// The subscriptions of a subscriptions/listen request (`stream`), made at its first
// subscription, in its Scope: its resources' updates go on its stream, tagged with its id as
// the stream's own notifications are.
const listen = (hub: FleetHub, catalog: Effect.Effect<Naming.View>, session: McpServer.Session, scope: Scope.Scope) => {
  let made: Subscriptions.Subscriptions | undefined
  return (stream: JsonRpc.RequestId): Effect.Effect<Subscriptions.Subscriptions> =>
    made !== undefined ? Effect.succeed(made) : Effect.gen(function*() {
      const subscriptions = yield* Subscriptions.make(
        hub,
        Effect.map(catalog, (view) => view.catalog),
        session.caller?.subject
      )
      yield* hub.onEvents((event) =>
        event._tag === "ResourceUpdated" && subscriptions.has(event.server, event.uri, event.principal)
          ? session.notify(
            McpSchema.Method.ResourcesUpdated,
            { uri: event.uri, _meta: { [McpSchema.MetaKey.SubscriptionId]: stream } },
            stream
          )
          : Effect.void
      )
      made = subscriptions
      return subscriptions
    }).pipe(Scope.extend(scope))
}

// Joins the client to the relay for the session's life, and keeps its roots there: asked
// once it says it is initialized and again whenever it says they changed.
const joinRelay = (
  relay: Relay.Relay,
  client: Relay.RelayClient,
  session: McpServer.Session
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    yield* Relay.register(relay, client)
    const roots = Relay.fetchRoots(relay, client, session.request(McpSchema.Method.RootsList))
    const notifications = yield* session.peer.subscribe
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
 * The gateway's McpServer: every session routed to the fleet, and told once per burst of
 * fleet changes which lists changed. It serves until the Scope closes; `serving` is what
 * the gateway's options say of the modern revision (the state key, caching hints) and of
 * tasks: with `tasks`, a call of a fronted tool listed with `execution.taskSupport` may run
 * here as a task (the tasks extension; 2025-11-25's task-augmented calls), its work the
 * routed call.
 */
export const makeServer = (
  hub: FleetHub,
  serving: Pick<McpServer.Options, "stateSecret" | "caching" | "tasks"> = {}
): Effect.Effect<McpServer.McpServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const shared = yield* makeShared(hub)
    const server = yield* McpServer.make({
      ...serving,
      serverInfo: hub.options.serverInfo,
      instructions: hub.options.instructions,
      pageSize: hub.options.pageSize,
      modern: hub.options.modern,
      handlers: (client, session) =>
        client.protocolVersion === McpSchema.MODERN_PROTOCOL_VERSION
          ? listenHandlers(hub, shared, client, session)
          : makeHandlers(hub, shared, client, session),
      modernHandlers: shared.modern
    })
    const changes = yield* PubSub.subscribe(hub.listChanged)
    yield* Queue.take(changes).pipe(Effect.flatMap(server.notifyListChanged), Effect.forever, Effect.forkScoped)
    return server
  })
