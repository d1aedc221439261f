/**
 * The gateway's hub over the fleet, one per gateway and shared by all its sessions and
 * modern requests: the fleet and the policy in front of it, the resolved options, the
 * list_changed hub (catalog changes become list_changed notifications once per burst, and
 * only when what a client would list changed), the settle window lists wait for, and the
 * one dispatcher of the fleet's events.
 *
 * The hub's change test compares lists under the names clients see. Lists (and calls naming
 * what no server has yet) wait only for the settle window from the gateway's start. The app's
 * own tools are checked at start. It is also the gateway's one event dispatcher: a single
 * registry subscription and fiber hand the fleet's events to the sessions and modern requests
 * that registered, instead of one per session or request.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Catalog from "../../Catalog.js"
import type * as McpError from "../../McpError.js"
import * as McpManagementTools from "../../McpManagementTools.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as McpServer from "../../McpServer.js"
import type * as Policy from "../../Policy.js"
import type { RegistryEvent } from "../../RegistryEvent.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import * as DeferredTools from "./deferredTools.js"
import * as Naming from "./naming.js"
import type { Relay } from "./relay.js"

/**
 * The policy the gateway serves the fleet through: what it needs of the Policy service, the
 * catalog clients may see and tool calls that go through its rules.
 */
export interface GatewayPolicy {
  readonly filter: (
    catalog: Catalog.Catalog,
    options?: { readonly approver?: boolean | undefined } | undefined
  ) => Catalog.Catalog
  /** The filtered catalog now and after every change of the fleet or of the rules. */
  readonly catalog?: Stream.Stream<Catalog.Catalog> | undefined
  readonly callTool: (
    name: string,
    args?: Record<string, unknown> | undefined,
    options?: Policy.CallToolOptions | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
}

/** The options of the MCP side, resolved. */
export interface CoreOptions {
  readonly pageSize: number
  readonly serverInfo: McpSchema.Implementation
  readonly instructions: string | undefined
  readonly listChangedDebounce: Duration.DurationInput
  readonly settle: Duration.DurationInput
  readonly naming: Naming.Naming
  /** The app's own tools, by name, served with the fleet's. */
  readonly tools: ReadonlyMap<string, McpServer.ToolItem>
  /** Whether modern (2026-07-28) requests are answered too. */
  readonly modern: boolean
  /** Deferred tools: when clients get `search_tools` instead of every tool. */
  readonly toolSearch: DeferredTools.Options
}

/** The defaults of the MCP side. */
export const resolveOptions = (options: {
  readonly pageSize?: number | undefined
  readonly serverInfo?: McpSchema.Implementation | undefined
  readonly instructions?: string | undefined
  readonly listChangedDebounce?: Duration.DurationInput | undefined
  readonly settle?: Duration.DurationInput | undefined
  readonly naming?: Naming.Naming | undefined
  readonly tools?: ReadonlyArray<McpServer.ToolItem> | undefined
  readonly modern?: boolean | undefined
  readonly toolSearch?: boolean | undefined
  readonly toolSearchThreshold?: number | undefined
  readonly alwaysLoad?: ReadonlyArray<string> | undefined
}): CoreOptions => ({
  pageSize: Math.max(1, Math.floor(options.pageSize ?? 100)),
  serverInfo: options.serverInfo ?? { name: "mcp-fleet", version: "0.1.0" },
  instructions: options.instructions,
  listChangedDebounce: options.listChangedDebounce ?? Duration.millis(100),
  settle: options.settle ?? Duration.seconds(3),
  naming: options.naming ?? "qualified",
  tools: new Map((options.tools ?? []).map((item) => [item.tool.name, item])),
  modern: options.modern !== false,
  toolSearch: DeferredTools.resolve(options)
})

/**
 * Why the app's tools cannot be served with the fleet's, if they cannot: two of one name, a
 * name of the qualified form (it could shadow a server's), or a management tool's name
 * while those are served, or a tool search one's while tool search may be on.
 */
export const appToolsProblem = (
  tools: ReadonlyArray<McpServer.ToolItem>,
  managementTools: boolean,
  toolSearch = false
): string | undefined => {
  const seen = new Set<string>()
  for (const { tool } of tools) {
    if (seen.has(tool.name)) return `the app's tools name '${tool.name}' twice`
    seen.add(tool.name)
    if (tool.name.startsWith("mcp__")) return `the app's tool '${tool.name}' has the form of a server's qualified name`
    if (managementTools && McpManagementTools.isManagementTool(tool.name)) {
      return `the app's tool '${tool.name}' has the name of a management tool`
    }
    if (toolSearch && DeferredTools.isDeferredTool(tool.name)) {
      return `the app's tool '${tool.name}' has the name of a tool search tool (or serve with toolSearch: false)`
    }
  }
  return undefined
}

/** A list whose change the clients are told about. */
export type ListKind = McpServer.ListKind

const LIST_KINDS: ReadonlyArray<ListKind> = ["tools", "resources", "prompts"]

/** The hub of one gateway: what all its sessions share. */
export interface FleetHub {
  readonly registry: ServerRegistry.ServerRegistry
  readonly policy: GatewayPolicy
  readonly options: CoreOptions
  /** The lists that changed, once per burst of fleet changes. */
  readonly listChanged: PubSub.PubSub<ListKind>
  /** How many sessions subscribe to each resource, by server and URI. */
  readonly subscribers: Map<string, number>
  /** Makes a session's management tools, when the gateway serves them. */
  readonly management: MakeManagement | undefined
  /** The fleet's tool index, when tool search may be on. */
  readonly search: DeferredTools.Search | undefined
  /**
   * Completes once every server has settled (ready, or failed once), or the settle window
   * from the gateway's start has passed, whichever is first: lists wait for it.
   */
  readonly settled: Effect.Effect<void>
  /** Where the fleet's servers' requests go to the gateway's clients, when it is the fleet's host. */
  readonly relay?: Relay | undefined
  /**
   * Hands the fleet's events to `onEvent` until the Scope closes: one subscription to the
   * registry per gateway, not one (and a fiber) per session or modern request.
   */
  readonly onEvents: (onEvent: (event: RegistryEvent) => Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
}

/** Makes the management tools of one session, its subscriptions going through `subscriber`. */
export type MakeManagement = (
  subscriber: McpManagementTools.ResourceSubscriber
) => Effect.Effect<McpManagementTools.McpManagementTools, never, Scope.Scope>

/**
 * The tool names the gateway serves itself (the app's tools, the management tools, the tool
 * search ones while tool search may be on): no server's tool is listed under one.
 */
export const reservedNames = (
  management: MakeManagement | undefined,
  options: Pick<CoreOptions, "tools" | "toolSearch">
): (name: string) => boolean => {
  const { toolSearch, tools } = options
  const searching = toolSearch.mode !== false
  return (name) =>
    tools.has(name) || (management !== undefined && McpManagementTools.isManagementTool(name)) ||
    (searching && DeferredTools.isDeferredTool(name))
}

/**
 * What clients see of each list, under the names they see, to tell real changes from
 * catalog rebuilds that changed nothing.
 */
export const fingerprints = (view: Naming.View): Record<ListKind, string> => ({
  tools: JSON.stringify([...view.tools].map(([name, entry]) => [name, entry.tool])),
  resources: JSON.stringify([
    view.catalog.resources.map((entry) => entry.resource),
    view.catalog.templates.map((entry) => entry.template)
  ]),
  prompts: JSON.stringify([...view.prompts].map(([name, entry]) => [name, entry.prompt]))
})

/** The lists whose fingerprints differ. */
export const changedLists = (last: Record<ListKind, string>, next: Record<ListKind, string>): Array<ListKind> =>
  LIST_KINDS.filter((kind) => next[kind] !== last[kind])

// One fiber takes the registry's events and hands each to every receiver registered now.
// A receiver only sends notifications, which queue at their session: none holds the rest up.
const dispatcher = (registry: ServerRegistry.ServerRegistry) =>
  Effect.gen(function*() {
    const receivers = new Set<(event: RegistryEvent) => Effect.Effect<void>>()
    const events = yield* registry.subscribe
    yield* Queue.take(events).pipe(
      Effect.flatMap((event) => Effect.forEach([...receivers], (receive) => receive(event), { discard: true })),
      Effect.forever,
      Effect.forkScoped
    )
    return (onEvent: (event: RegistryEvent) => Effect.Effect<void>): Effect.Effect<void, never, Scope.Scope> =>
      Effect.acquireRelease(
        Effect.sync(() => receivers.add(onEvent)),
        () => Effect.sync(() => receivers.delete(onEvent))
      )
  })

/**
 * Starts the hub of one gateway: it watches the catalog (as the policy filters it, and
 * again when the policy's rules change) and publishes which lists changed, after the fleet
 * has been quiet for the debounce, so a burst of changes (a config reload, a restart) is one
 * notification per list. It also starts the settle window: hosts list right after
 * initialize, and a server a moment from ready is better listed than announced.
 */
export const make = (
  registry: ServerRegistry.ServerRegistry,
  policy: GatewayPolicy,
  options: CoreOptions,
  management?: MakeManagement | undefined,
  search?: DeferredTools.Search | undefined
): Effect.Effect<FleetHub, never, Scope.Scope> =>
  Effect.gen(function*() {
    const listChanged = yield* PubSub.unbounded<ListKind>()
    yield* Effect.addFinalizer(() => PubSub.shutdown(listChanged))
    // Both views: clients that answer `ask` by elicitation also list the tools under it.
    const seen = (catalog: Catalog.Catalog) => {
      const shown = (visible: Catalog.Catalog) =>
        fingerprints(Naming.view(options.naming, catalog, visible, reservedNames(management, options)))
      const plain = shown(policy.filter(catalog))
      return { ...plain, tools: `${plain.tools}\n${shown(policy.filter(catalog, { approver: true })).tools}` }
    }
    let last = seen(yield* SubscriptionRef.get(registry.catalog))
    yield* (policy.catalog ?? registry.catalog.changes).pipe(
      Stream.debounce(options.listChangedDebounce),
      Stream.runForEach(() =>
        Effect.flatMap(SubscriptionRef.get(registry.catalog), (catalog) => {
          const next = seen(catalog)
          const changed = changedLists(last, next)
          last = next
          return PubSub.publishAll(listChanged, changed)
        })
      ),
      Effect.forkScoped
    )
    const settled = yield* Deferred.make<void>()
    yield* registry.awaitReady({ servers: "settled", timeout: options.settle }).pipe(
      Effect.ignore,
      Effect.zipRight(Deferred.succeed(settled, undefined)),
      Effect.forkScoped
    )
    return {
      registry,
      policy,
      options,
      listChanged,
      subscribers: new Map(),
      management,
      search,
      settled: Deferred.await(settled),
      onEvents: yield* dispatcher(registry)
    }
  })
