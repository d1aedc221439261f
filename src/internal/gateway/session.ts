/**
 * The gateway as an `McpServer`: each client session gets handlers that route to the fleet
 * (its own view of the catalog, its subscriptions, its management tools, its place in the
 * relay), and what forwards the fleet's log messages and resource updates to it (through
 * the fleet's one event dispatcher). The protocol itself (initialize, paging, setLevel,
 * whatever carries it) is McpServer's.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
import { type Fleet, reservedNames } from "./fleet.js"
import { InFlight } from "./inFlight.js"
import * as Logging from "./logging.js"
import * as Management from "./management.js"
import * as Naming from "./naming.js"
import * as Relay from "./relay.js"
import * as Routes from "./routes.js"
import * as Subscriptions from "./subscriptions.js"

const ASKING = { approver: true }

// The lists as the session's client may see them, once the fleet has settled or the settle
// window has passed: the app's own tools first, then the fleet's, then `more` (the
// management tools).
const lists = (context: Routes.RouteContext, more: ReadonlyArray<McpSchema.Tool>) => {
  const current = Effect.zipRight(context.fleet.settled, context.catalog)
  const listed = <A>(items: (view: Naming.View) => ReadonlyArray<A>) => () => Effect.map(current, items)
  const own = [...context.fleet.options.tools.values()].map((item) => item.tool)
  return {
    tools: listed((v) => [...own, ...[...v.tools].map(([name, entry]) => ({ ...entry.tool, name })), ...more]),
    resources: listed((v) => v.catalog.resources.map((entry) => entry.resource)),
    templates: listed((v) => v.catalog.templates.map((entry) => entry.template)),
    prompts: listed((v) => [...v.prompts].map(([name, entry]) => ({ ...entry.prompt, name })))
  }
}

/**
 * The handlers of one client session, in its Scope: resource subscriptions it made are
 * dropped at the servers when the Scope closes, unless another session still holds them.
 */
export const makeHandlers = (
  fleet: Fleet,
  client: McpServer.Client,
  session: McpServer.Session
): Effect.Effect<McpServer.Handlers, never, Scope.Scope> =>
  Effect.gen(function*() {
    const inFlight = new InFlight()
    const relayClient: Relay.RelayClient = {
      capabilities: client.capabilities,
      roots: [],
      inFlight
    }
    // A client that answers elicitation approves `ask` tools itself: it lists them too.
    const asking = Relay.elicitsForms(client.capabilities) ? ASKING : undefined
    const catalog = Effect.map(
      SubscriptionRef.get(fleet.registry.catalog),
      (current) =>
        Naming.view(
          fleet.options.naming,
          current,
          fleet.policy.filter(current, asking),
          reservedNames(fleet.management, fleet.options.tools)
        )
    )
    const caller = session.caller === undefined
      ? undefined
      : { subject: session.caller.subject, clientId: session.caller.clientId }
    const context: Routes.RouteContext = { fleet, catalog, inFlight, client: relayClient, caller }
    const subscriptions = yield* Subscriptions.make(fleet, Effect.map(catalog, (view) => view.catalog))
    const forward = Logging.forwarder(inFlight, session)
    const management = yield* Management.make(fleet, subscriptions, session)

    // A modern client subscribes by a subscriptions/listen request (these handlers are that
    // request's own): its updates go on that stream, tagged with its id as the stream's own are.
    let stream: JsonRpc.RequestId | undefined
    const subscribe = (uri: string, ctx: McpServer.RequestContext) => {
      if (ctx.request.method === McpSchema.ModernMethod.SubscriptionsListen) stream = ctx.request.id
      return subscriptions.subscribe(uri)
    }
    const updated = (uri: string) =>
      stream === undefined
        ? session.notify(McpSchema.Method.ResourcesUpdated, { uri })
        : session.notify(
          McpSchema.Method.ResourcesUpdated,
          { uri, _meta: { [McpSchema.MetaKey.SubscriptionId]: stream } },
          stream
        )
    yield* fleet.onEvents((event) => {
      switch (event._tag) {
        case "LogMessage":
          return forward(event)
        case "ResourceUpdated":
          return subscriptions.has(event.server, event.uri) ? updated(event.uri) : Effect.void
        default:
          return Effect.void
      }
    })
    if (fleet.relay !== undefined) yield* joinRelay(fleet.relay, relayClient, session, client)

    const listed = lists(context, management?.tools ?? [])
    const routed = Routes.callTool(context)
    const fleetCall = management === undefined ? routed : management.callTool(routed)
    const own = fleet.options.tools
    return {
      tools: {
        list: listed.tools,
        // The app's own tools run here, as the app's code: the Policy governs the fleet's servers.
        call: own.size === 0 ? fleetCall : (name, args, ctx) => {
          const item = own.get(name)
          return item === undefined ? fleetCall(name, args, ctx) : item.handler(args, ctx)
        }
      },
      resources: {
        list: listed.resources,
        templates: listed.templates,
        read: Routes.readResource(context),
        subscribe,
        unsubscribe: subscriptions.unsubscribe
      },
      prompts: { list: listed.prompts, get: Routes.getPrompt(context) },
      complete: Routes.complete(context)
    }
  })

// Joins the client to the relay for the session's life, and keeps its roots there: asked
// once it says it is initialized and again whenever it says they changed. A modern
// (2026-07-28) request's handlers are its own, and it sends no notifications: no watch.
const joinRelay = (
  relay: Relay.Relay,
  client: Relay.RelayClient,
  session: McpServer.Session,
  declared: McpServer.Client
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    yield* Relay.register(relay, client)
    if (declared.protocolVersion === McpSchema.MODERN_PROTOCOL_VERSION) return
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
  fleet: Fleet,
  serving: Pick<McpServer.Options, "stateSecret" | "caching" | "tasks"> = {}
): Effect.Effect<McpServer.McpServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({
      ...serving,
      serverInfo: fleet.options.serverInfo,
      instructions: fleet.options.instructions,
      pageSize: fleet.options.pageSize,
      modern: fleet.options.modern,
      handlers: (client, session) => makeHandlers(fleet, client, session)
    })
    const changes = yield* PubSub.subscribe(fleet.listChanged)
    yield* Queue.take(changes).pipe(Effect.flatMap(server.notifyListChanged), Effect.forever, Effect.forkScoped)
    return server
  })
