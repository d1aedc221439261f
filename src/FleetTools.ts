/**
 * The fleet's tools as a model gets them, whatever library drives the model: the catalog
 * the Policy lets through, narrowed by a filter, plus the MCP management tools when that
 * service is in context; and calls by name, routed through the Policy (rules, approval,
 * argument validation, limits, audit) exactly as the gateway and the CLI route theirs.
 *
 * It holds no copy of the catalog: every `tools` reads the live one, so a bridge built on
 * it follows servers joining and leaving, `list_changed` and policy edits without being
 * rebuilt, and a call to a tool that went away in the meantime fails with a NotFound
 * reason a model can read. `AiToolkit` (`mcp-fleet/ai`) and `AiSdk` (`mcp-fleet/ai-sdk`)
 * are built on it.
 *
 * Made right after the fleet starts, it waits for the settle window first, as the gateway
 * does: until every server is ready or failed once, at most {@link SETTLE} from the first
 * FleetTools made over that registry. A model's first turn then gets the tools of servers
 * that were still connecting, rather than none; later ones never wait again.
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type * as Runtime from "effect/Runtime"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "./Catalog.js"
import * as Glob from "./internal/glob.js"
import * as McpError from "./McpError.js"
import * as McpManagementTools from "./McpManagementTools.js"
import * as McpSchema from "./McpSchema.js"
import * as Policy from "./Policy.js"
import * as ServerRegistry from "./ServerRegistry.js"
import * as ToolSearch from "./ToolSearch.js"

/**
 * Which tools a model gets. Globs as in the Policy: `*` any run of characters, `?` one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Filter {
  /** Server names; only these servers' tools (and resources, for the management tools). Default: all. */
  readonly servers?: ReadonlyArray<string> | undefined
  /** The fleet's tools by name, qualified (`mcp__github__*`) or original (`create_*`). Default: all. */
  readonly tools?: ReadonlyArray<string> | undefined
  /** Whether the management tools come too, when the service is in context. Default: true. */
  readonly management?: boolean | undefined
}

/**
 * A tool as a model gets it.
 *
 * @since 0.1.0
 * @category models
 */
export interface FleetTool {
  /** The name the model calls it by: the qualified name, or a management tool's own. */
  readonly name: string
  /** The server it belongs to; undefined for a management tool. */
  readonly server: string | undefined
  /** Its definition as its server gave it (with the original name), inputSchema unchanged. */
  readonly tool: McpSchema.Tool
}

/**
 * The tools one filter selects.
 *
 * @since 0.1.0
 * @category models
 */
export interface Selection {
  /** The selected tools now: the fleet's (in catalog order), then the management tools. */
  readonly tools: Effect.Effect<ReadonlyArray<FleetTool>>
  /**
   * Calls a selected tool. A name the selection does not hold now fails with a NotFound
   * reason naming the closest ones; the fleet's tools go through `Policy.callTool`.
   */
  readonly call: (
    name: string,
    args?: Record<string, unknown> | undefined,
    options?: ServerRegistry.CallToolOptions | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
}

/**
 * The fleet's tools for models.
 *
 * @since 0.1.0
 * @category models
 */
export interface FleetTools {
  readonly select: (filter?: Filter | undefined) => Selection
  /**
   * The fleet's tools best matching a query, best first (see `ToolSearch`): through the
   * ToolSearch service in context, else one made over this registry and Policy (lexical
   * unless an Embedder is in context), shared by every FleetTools made over them.
   */
  readonly searchTools: (
    query: string,
    options?: ToolSearch.SearchOptions | undefined
  ) => Effect.Effect<ReadonlyArray<ToolSearch.ToolHit>>
  /**
   * The runtime it was made in, with that context's services (logger, tracer): bridges to
   * libraries outside Effect run calls on it.
   */
  readonly runtime: Runtime.Runtime<never>
}

const anyOf = (globs: ReadonlyArray<string> | undefined): ((name: string) => boolean) | undefined => {
  if (globs === undefined) return undefined
  const matchers = globs.map(Glob.compile)
  return (name) => matchers.some((match) => match(name))
}

const reachOf = (filter: Filter): McpManagementTools.Reach => {
  const server = anyOf(filter.servers) ?? (() => true)
  const tool = anyOf(filter.tools)
  return {
    server,
    tool: (entry) => server(entry.server) && (tool === undefined || tool(entry.name) || tool(entry.tool.name))
  }
}

/**
 * The settle window: how long, at most, the first FleetTools made over a registry waits for
 * its servers to be ready or failed once (the gateway's default too).
 *
 * @since 0.2.0
 * @category constants
 */
export const SETTLE: Duration.Duration = Duration.seconds(3)

// Each registry's settle window, opened by the first FleetTools made over it, so that later
// ones (`AiToolkit.toolkit` is made again each turn) wait only for what is left of it.
const windows = new WeakMap<ServerRegistry.ServerRegistry, Deferred.Deferred<void>>()

const settleWindow = (registry: ServerRegistry.ServerRegistry): Effect.Effect<void> =>
  Effect.suspend(() => {
    const open = windows.get(registry)
    if (open !== undefined) return Deferred.await(open)
    const settled = Deferred.unsafeMake<void>(FiberId.none)
    windows.set(registry, settled)
    // A daemon: the window outlives the first caller's turn, and ends by itself within SETTLE.
    return registry.awaitReady({ servers: "settled", timeout: SETTLE }).pipe(
      Effect.ignore,
      Effect.zipRight(Deferred.succeed(settled, undefined)),
      Effect.forkDaemon,
      Effect.zipRight(Deferred.await(settled))
    )
  })

// The search made for FleetTools when none is in context, one per Policy (a Policy fronts
// one registry), so that a bridge that makes FleetTools every turn keeps one index.
const searches = new WeakMap<Policy.Policy, ToolSearch.ToolSearch>()

const searchOf = (policy: Policy.Policy) =>
  Effect.flatMap(Effect.serviceOption(ToolSearch.ToolSearch), (given) => {
    if (Option.isSome(given)) return Effect.succeed(given.value)
    const made = searches.get(policy)
    if (made !== undefined) return Effect.succeed(made)
    return Effect.tap(ToolSearch.make, (search) => Effect.sync(() => searches.set(policy, search)))
  })

/**
 * Makes the fleet's tools over the registry and the Policy in context, once the settle
 * window is over (see the module's notes), with the management
 * tools when the McpManagementTools service is in context too.
 *
 * @example
 * ```ts
 * const fleet = yield* FleetTools.make
 * const memory = fleet.select({ servers: ["memory"] })
 * const tools = yield* memory.tools
 * yield* memory.call("mcp__memory__read_graph", {})
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<FleetTools, never, ServerRegistry.ServerRegistry | Policy.Policy> = Effect.gen(
  function*() {
    const registry = yield* ServerRegistry.ServerRegistry
    const policy = yield* Policy.Policy
    yield* settleWindow(registry)
    const management = yield* Effect.serviceOption(McpManagementTools.McpManagementTools)
    const runtime = yield* Effect.runtime<never>()
    const search = yield* searchOf(policy)

    const select = (filter: Filter = {}): Selection => {
      const reach = reachOf(filter)
      const managed = Option.isSome(management) && filter.management !== false ? McpManagementTools.tools : []
      const tools = Effect.map(SubscriptionRef.get(registry.catalog), (catalog): ReadonlyArray<FleetTool> => [
        ...policy.filter(catalog).tools.filter(reach.tool).map(({ name, server, tool }) => ({ name, server, tool })),
        ...managed.map((tool) => ({ name: tool.name, server: undefined, tool }))
      ])
      const call: Selection["call"] = (name, args, options) =>
        Effect.flatMap(tools, (current) => {
          const selected = current.find((tool) => tool.name === name)
          if (selected === undefined) {
            return Effect.fail(McpError.notFound(undefined, {
              what: "tool",
              name,
              suggestions: Catalog.suggest(name, current.map((tool) => tool.name))
            }))
          }
          return selected.server === undefined && Option.isSome(management)
            ? management.value.call(name, args, reach)
            : policy.callTool(name, args, options)
        })
      return { tools, call }
    }

    return { select, runtime, searchTools: search.search }
  }
)

const kilobytes = (base64: string) => `${(base64.length * 3 / 4 / 1024).toFixed(1)} kB`

/**
 * A content block as text a model can read: text as it is, an embedded text resource with
 * its URI, and for images, audio, blobs and links a short note of what was left out.
 *
 * @since 0.1.0
 * @category utils
 */
export const blockText = (block: McpSchema.ContentBlock): string => {
  if (!McpSchema.isKnownContentBlock(block)) return `[${block.type} content, not shown]`
  switch (block.type) {
    case "text":
      return block.text
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${kilobytes(block.data)}, not shown]`
    case "resource_link":
      return `[resource ${block.uri}${block.mimeType === undefined ? "" : ` (${block.mimeType})`}: ${
        block.description ?? block.name
      }]`
    case "resource":
      return "text" in block.resource
        ? `[resource ${block.resource.uri}]\n${block.resource.text}`
        : `[resource ${block.resource.uri}${
          block.resource.mimeType === undefined ? "" : ` ${block.resource.mimeType}`
        }, ${kilobytes(block.resource.blob)}, not shown]`
  }
}

/**
 * A result's content blocks as one text (see {@link blockText}), one block a line.
 *
 * @since 0.1.0
 * @category utils
 */
export const resultText = (result: McpSchema.CallToolResult): string => result.content.map(blockText).join("\n")
