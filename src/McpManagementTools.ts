/**
 * The MCP management tools: what an agent host gives its model to work with the fleet
 * itself, beside the servers' own tools. `ListMcpResources {server?}`,
 * `ReadMcpResource {server, uri}`, `SubscribeMcpResource {server, uri}`,
 * `UnsubscribeMcpResource {subscriptionId | server+uri}`,
 * `SubscribePolling {type, server, toolName? | uri?, arguments?, intervalMs ≥ 1000}`,
 * `UnsubscribePolling {pollId}` and `load_skill {skill, file?}` (a server's skill, SEP-2640:
 * its SKILL.md verified, then its other files one at a time).
 *
 * A poll fetches its tool or resource every `intervalMs` and publishes a `PollResult` event
 * when what it returns changes (a failure counts as a result). Resource subscriptions
 * publish `ResourceUpdated` when the server says the resource changed. Both kinds belong to
 * the Scope the service was made in: closing it stops every poll and ends every
 * subscription at its server. Both are bounded in number, and `status` lists them.
 *
 * The tools are read-only and need no approval. A poll's calls go through the Policy like
 * any other call, so deny rules, limits and the audit log apply to each; a tool under an
 * `ask` rule cannot be polled, since no one is there to approve each call.
 *
 * The model bridges (`FleetTools`, and through it `AiToolkit` and `AiSdk`) include these
 * tools when this service is in context; the gateway serves them behind its
 * `managementTools` option.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Catalog from "./Catalog.js"
import * as Definitions from "./internal/mcpManagementTools/definitions.js"
import * as Polls from "./internal/mcpManagementTools/polls.js"
import * as Resources from "./internal/mcpManagementTools/resources.js"
import * as Skills from "./internal/mcpManagementTools/skills.js"
import * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import * as Policy from "./Policy.js"
import * as ServerRegistry from "./ServerRegistry.js"

/**
 * How resource subscriptions reach the servers. The gateway passes its own, which counts
 * subscriptions across its clients.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceSubscriber {
  readonly subscribe: (server: string, uri: string) => Effect.Effect<void, McpError.McpError>
  readonly unsubscribe: (server: string, uri: string) => Effect.Effect<void, McpError.McpError>
}

/**
 * The limits of one service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The most resource subscriptions at once. Default: 64. */
  readonly maxSubscriptions?: number | undefined
  /** The most polls at once. Default: 16. */
  readonly maxPolls?: number | undefined
  /** How subscriptions reach the servers. Default: each one subscribes at its server. */
  readonly subscriber?: ResourceSubscriber | undefined
}

/**
 * A resource subscription.
 *
 * @since 0.1.0
 * @category models
 */
export interface Subscription {
  readonly id: string
  readonly server: string
  readonly uri: string
}

/**
 * A poll: what it fetches and how often.
 *
 * @since 0.1.0
 * @category models
 */
export interface Poll {
  readonly id: string
  readonly type: "tool" | "resource"
  readonly server: string
  /** The tool's name on its server (type tool) or the resource's URI (type resource). */
  readonly target: string
  readonly arguments: Readonly<Record<string, unknown>> | undefined
  readonly intervalMs: number
}

/**
 * The subscriptions and polls of one service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Status {
  readonly subscriptions: ReadonlyArray<Subscription>
  readonly polls: ReadonlyArray<Poll>
}

/**
 * What the service publishes: a poll whose result changed (`result`, or `error` when the
 * fetch failed), and an update of a subscribed resource.
 *
 * @since 0.1.0
 * @category models
 */
export type Event = Data.TaggedEnum<{
  PollResult: {
    readonly poll: Poll
    readonly result: McpSchema.CallToolResult | McpSchema.ReadResourceResult | undefined
    readonly error: McpError.McpError | undefined
  }
  ResourceUpdated: { readonly subscription: Subscription }
}>

/**
 * Constructors and matchers of Event.
 *
 * @since 0.1.0
 * @category models
 */
export const Event = Data.taggedEnum<Event>()

/**
 * What a caller may reach: the servers whose resources it may list, read and watch, and
 * the tools it may poll. A bridge restricted by a filter passes its filter here.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reach {
  readonly server: (server: string) => boolean
  readonly tool: (entry: Catalog.ToolEntry) => boolean
  /**
   * Who the caller is (the gateway's OAuth subject): a `perPrincipal` server's reads, skills
   * and polls go to its own instance, as its calls do.
   */
  readonly principal?: string | undefined
}

/**
 * The management tools of one agent host.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpManagementTools {
  /**
   * Runs a management tool. Arguments are checked against its Schema (a Validation reason
   * otherwise); an unknown name fails with a NotFound reason. Results carry the answer as
   * JSON text and as `structuredContent`; ReadMcpResource's as embedded resources.
   */
  readonly call: (
    name: string,
    args?: Record<string, unknown> | undefined,
    reach?: Reach | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  /** The subscriptions and polls in force. */
  readonly status: Effect.Effect<Status>
  /**
   * Every event, from the moment the stream starts. A subscriber that falls 256 events
   * behind loses the oldest, so a slow one never holds the polls up.
   */
  readonly events: Stream.Stream<Event>
  /** Subscribes to events now; nothing published after this returns is missed. */
  readonly subscribeEvents: Effect.Effect<Queue.Dequeue<Event>, never, Scope.Scope>
}

/**
 * The McpManagementTools service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export const McpManagementTools = Context.GenericTag<McpManagementTools>("mcp-fleet/McpManagementTools")

/**
 * The tools' definitions, as `tools/list` gives them; each inputSchema is made from the
 * Schema its arguments are decoded with.
 *
 * @since 0.1.0
 * @category constants
 */
export const tools: ReadonlyArray<McpSchema.Tool> = [...Definitions.tools, Skills.definition]

/**
 * Whether `name` is one of the management tools.
 *
 * @since 0.1.0
 * @category utils
 */
export const isManagementTool = (name: string): boolean => Definitions.names.has(name) || name === Skills.LOAD_SKILL

const everywhere: Reach = { server: () => true, tool: () => true }

/**
 * Makes the service over the registry and the Policy in context. Its polls and
 * subscriptions end when the Scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<McpManagementTools, never, ServerRegistry.ServerRegistry | Policy.Policy | Scope.Scope> =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.ServerRegistry
    const policy = yield* Policy.Policy
    const pubsub = yield* PubSub.sliding<Event>(256)
    yield* Effect.addFinalizer(() => PubSub.shutdown(pubsub))
    const publish = (event: Event) => Effect.asVoid(PubSub.publish(pubsub, event))
    const resources = yield* Resources.make({
      registry,
      subscriber: options.subscriber ?? {
        subscribe: (server, uri) => registry.withClient(server, (client) => client.subscribeResource(uri)),
        unsubscribe: (server, uri) => registry.withClient(server, (client) => client.unsubscribeResource(uri))
      },
      max: options.maxSubscriptions ?? 64,
      publish
    })
    const polls = yield* Polls.make({ registry, policy, max: options.maxPolls ?? 16, publish })

    // Each tool: the Schema its arguments are decoded with, and what it does with them.
    const tool = <A, I>(
      schema: Schema.Schema<A, I>,
      run: (params: A, reach: Reach) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
    ) =>
    (name: string, args: Record<string, unknown> | undefined, reach: Reach) =>
      Effect.flatMap(Definitions.decode(name, schema, args), (params) => run(params, reach))
    // A Map, so a name from the wire such as `__proto__` finds nothing.
    const handlers = new Map([
      ["ListMcpResources", tool(Definitions.ListMcpResources, (p, reach) => resources.list(p.server, reach))],
      ["ReadMcpResource", tool(Definitions.ReadMcpResource, (p, reach) => resources.read(p.server, p.uri, reach))],
      [
        "SubscribeMcpResource",
        tool(Definitions.SubscribeMcpResource, (p, reach) => resources.subscribe(p.server, p.uri, reach))
      ],
      ["UnsubscribeMcpResource", tool(Definitions.UnsubscribeMcpResource, resources.unsubscribe)],
      ["SubscribePolling", tool(Definitions.SubscribePolling, polls.start)],
      ["UnsubscribePolling", tool(Definitions.UnsubscribePolling, (p) => polls.stop(p.pollId))],
      [Skills.LOAD_SKILL, tool(Skills.LoadSkill, Skills.make(registry))]
    ])

    const call: McpManagementTools["call"] = (name, args, reach = everywhere) => {
      const handler = handlers.get(name)
      return handler !== undefined
        ? handler(name, args, reach)
        : Effect.fail(McpError.notFound(
          undefined,
          { what: "tool", name, suggestions: Catalog.suggest(name, tools.map((t) => t.name)) }
        ))
    }

    return McpManagementTools.of({
      call,
      status: Effect.sync(() => ({ subscriptions: resources.held(), polls: polls.running() })),
      events: Stream.fromPubSub(pubsub),
      subscribeEvents: PubSub.subscribe(pubsub)
    })
  })

/**
 * A layer with the service over the registry and the Policy it is given; its polls and
 * subscriptions end when the layer is released.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<McpManagementTools, never, ServerRegistry.ServerRegistry | Policy.Policy> =>
  Layer.scoped(McpManagementTools, make(options))
