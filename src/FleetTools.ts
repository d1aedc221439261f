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
  /**
   * A selection in deferred mode, for one conversation: its `tools` are `search_tools`, the
   * management tools, the `alwaysLoad` ones and those its searches found so far (so a bridge
   * that reads `tools` each turn gives the model a hit on the next turn); its `call` runs
   * `search_tools` over the selected tools (a hit the filter leaves out is not given) and
   * calls any selected tool by name, found or not.
   */
  readonly deferred: (filter?: Filter | undefined, options?: DeferredOptions | undefined) => Selection
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
    // Kept per Policy: a bridge that makes FleetTools every turn keeps one index.
    const search = yield* ToolSearch.fromContext

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

    return {
      select,
      runtime,
      searchTools: search.search,
      deferred: (filter = {}, options) => deferredSelection(select(filter), search.search, filter.servers, options)
    }
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

// ---------------------------------------------------------------------------
// Deferred tools: the model is given a search instead of every definition
// ---------------------------------------------------------------------------

/**
 * The name of the tool that finds deferred tools (the gateway's and the bridges').
 *
 * @since 0.4.0
 * @category constants
 */
export const SEARCH_TOOLS = "search_tools"

/**
 * The name of the gateway's fallback tool that calls any tool by name, for clients that
 * never list tools again.
 *
 * @since 0.4.0
 * @category constants
 */
export const CALL_TOOL = "call_tool"

/**
 * How many tools a search gives by default, and at most.
 *
 * @since 0.4.0
 * @category constants
 */
export const SEARCH_LIMIT = { default: 5, max: 20 } as const

/**
 * `search_tools {query, limit?}`: what a model is given instead of the deferred tools'
 * definitions.
 *
 * @since 0.4.0
 * @category constants
 */
export const searchToolsTool: McpSchema.Tool = {
  name: SEARCH_TOOLS,
  description: "Find tools by what they do. More tools exist than are listed: search before saying a tool is " +
    "missing. Gives each match's name, description and inputSchema; then call the match by its name.",
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "What the tool should do, in a few words" },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: SEARCH_LIMIT.max,
        description: `How many tools at most (default ${SEARCH_LIMIT.default})`
      }
    },
    required: ["query"]
  },
  annotations: { readOnlyHint: true, openWorldHint: false }
}

/**
 * `call_tool {name, arguments}`: calls any tool by the name a search gave.
 *
 * @since 0.4.0
 * @category constants
 */
export const callToolTool: McpSchema.Tool = {
  name: CALL_TOOL,
  description: `Call a tool that ${SEARCH_TOOLS} found, by its name, with its arguments.`,
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: `The tool's name, as ${SEARCH_TOOLS} gave it` },
      arguments: { type: "object", description: "The tool's arguments, as its inputSchema says" }
    },
    required: ["name"]
  }
}

/**
 * A tool as a search answer gives it: enough to call it.
 *
 * @since 0.4.0
 * @category models
 */
export interface FoundTool {
  readonly name: string
  /** The first line of its description, at most 200 characters. */
  readonly description: string
  readonly inputSchema: McpSchema.Tool["inputSchema"]
}

const ONE_LINE = 200

/**
 * A tool found by a search: its name and inputSchema, its description cut to one line.
 *
 * @since 0.4.0
 * @category utils
 */
export const foundTool = (name: string, tool: McpSchema.Tool): FoundTool => {
  const line = (tool.description ?? tool.title ?? "").trim().split("\n", 1)[0]!.trim()
  return {
    name,
    description: line.length > ONE_LINE ? `${line.slice(0, ONE_LINE - 1)}…` : line,
    inputSchema: tool.inputSchema
  }
}

/**
 * A search's answer: `structuredContent` `{ tools }`, and the same as compact JSON text (for
 * clients that give the model only the text).
 *
 * @since 0.4.0
 * @category utils
 */
export const searchResult = (found: ReadonlyArray<FoundTool>): McpSchema.CallToolResult => {
  const structuredContent = { tools: found }
  return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent }
}

/**
 * The arguments of `search_tools` read: the query and the limit (default 5, at most 20), or
 * why they cannot be read.
 *
 * @since 0.4.0
 * @category utils
 */
export const searchArguments = (
  args: Record<string, unknown> | undefined
): { readonly query: string; readonly limit: number } | string => {
  const query = args?.query
  if (typeof query !== "string" || query.trim() === "") {
    return `${SEARCH_TOOLS} needs a 'query': what the tool should do`
  }
  const limit = args?.limit ?? SEARCH_LIMIT.default
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1) {
    return `${SEARCH_TOOLS}: 'limit' must be a whole number from 1 to ${SEARCH_LIMIT.max}`
  }
  return { query, limit: Math.min(limit, SEARCH_LIMIT.max) }
}

/**
 * The arguments of `call_tool` read: the name and the tool's arguments, or why they cannot be.
 *
 * @since 0.4.0
 * @category utils
 */
export const callArguments = (
  args: Record<string, unknown> | undefined
): { readonly name: string; readonly arguments: Record<string, unknown> | undefined } | string => {
  const name = args?.name
  const inner = args?.arguments
  if (typeof name !== "string" || name === "") return `${CALL_TOOL} needs the 'name' of the tool to call`
  if (inner !== undefined && (typeof inner !== "object" || inner === null || Array.isArray(inner))) {
    return `${CALL_TOOL}: 'arguments' must be an object`
  }
  return { name, arguments: inner as Record<string, unknown> | undefined }
}

/**
 * Tests a tool against `alwaysLoad` globs, by its qualified name or its original one.
 *
 * @since 0.4.0
 * @category utils
 */
export const alwaysLoaded = (globs: ReadonlyArray<string>): (name: string, tool: McpSchema.Tool) => boolean => {
  const matchers = globs.map(Glob.compile)
  return (name, tool) => matchers.some((match) => match(name) || match(tool.name))
}

/**
 * How a deferred selection is made.
 *
 * @since 0.4.0
 * @category models
 */
export interface DeferredOptions {
  /** The selected tools given from the start too, by qualified or original name (globs). Default: none. */
  readonly alwaysLoad?: ReadonlyArray<string> | undefined
}

const searchEntry: FleetTool = { name: SEARCH_TOOLS, server: undefined, tool: searchToolsTool }

// `FleetTools.deferred`: `selection` with `search_tools` over it, which remembers what it found.
const deferredSelection = (
  selection: Selection,
  search: (
    query: string,
    options: { readonly limit: number; readonly servers?: ReadonlyArray<string> | undefined }
  ) => Effect.Effect<ReadonlyArray<{ readonly name: string }>>,
  servers: ReadonlyArray<string> | undefined,
  options: DeferredOptions = {}
): Selection => {
  const always = alwaysLoaded(options.alwaysLoad ?? [])
  const found = new Set<string>()
  const tools = Effect.map(selection.tools, (all): ReadonlyArray<FleetTool> => [
    searchEntry,
    ...all.filter((tool) => tool.server === undefined || found.has(tool.name) || always(tool.name, tool.tool))
  ])
  const call: Selection["call"] = (name, args, callOptions) => {
    if (name !== SEARCH_TOOLS) return selection.call(name, args, callOptions)
    const given = searchArguments(args)
    if (typeof given === "string") return Effect.succeed({ content: [{ type: "text", text: given }], isError: true })
    return Effect.gen(function*() {
      // The index is the Policy's whole view: a hit the filter leaves out is dropped.
      const [selected, hits] = yield* Effect.all([
        selection.tools,
        search(given.query, { limit: given.limit + 5, servers })
      ])
      const byName = new Map(selected.map((tool) => [tool.name, tool]))
      const shown: Array<FoundTool> = []
      for (const hit of hits) {
        const tool = byName.get(hit.name)
        if (tool === undefined || tool.server === undefined || shown.length >= given.limit) continue
        found.add(tool.name)
        shown.push(foundTool(tool.name, tool.tool))
      }
      return searchResult(shown)
    })
  }
  return { tools, call }
}
