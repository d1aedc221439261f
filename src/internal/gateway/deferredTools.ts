/**
 * Deferred tools (tool search) in the gateway. In deferred mode a client's tools/list holds
 * the app's own tools, the fleet's tools that `alwaysLoad` names, the tools its searches
 * found (a stateful session's), the management tools, and `search_tools` and `call_tool`;
 * every other tool of the client's view stays callable by its name (the Policy applies as
 * to any call), and through `call_tool` for clients that never list again.
 *
 * Whether a client is in deferred mode is decided on its view, each time it lists: always
 * (`toolSearch: true`), never (`false`), or when the view holds more of the fleet's tools
 * than the threshold (the default). A search runs on the fleet's index (ToolSearch) and
 * keeps the hits the client's view holds, under the names it sees.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FleetTools from "../../FleetTools.js"
import type * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
import type * as Naming from "./naming.js"

/**
 * Above how many of the fleet's tools a client's list is deferred when the gateway's
 * `toolSearch` option is not set.
 */
export const DEFAULT_THRESHOLD = 40

/** The gateway's tool search options, resolved. */
export interface Options {
  /** `true`: always deferred; `false`: never (every tool listed); `"auto"`: above `threshold`. */
  readonly mode: boolean | "auto"
  readonly threshold: number
  /** The fleet's tools listed in deferred mode too, by the name listed and the original. */
  readonly alwaysLoad: (name: string, tool: McpSchema.Tool) => boolean
}

/** The defaults. */
export const resolve = (options: {
  readonly toolSearch?: boolean | undefined
  readonly toolSearchThreshold?: number | undefined
  readonly alwaysLoad?: ReadonlyArray<string> | undefined
}): Options => ({
  mode: options.toolSearch ?? "auto",
  threshold: Math.max(0, Math.floor(options.toolSearchThreshold ?? DEFAULT_THRESHOLD)),
  alwaysLoad: FleetTools.alwaysLoaded(options.alwaysLoad ?? [])
})

/** The fleet's index: the qualified names of the best tools for a query, best first. */
export type Search = (query: string, limit: number) => Effect.Effect<ReadonlyArray<string>>

/** The gateway's own tools of deferred mode, listed after the management tools. */
export const tools: ReadonlyArray<McpSchema.Tool> = [FleetTools.searchToolsTool, FleetTools.callToolTool]

/** Whether the gateway serves `name` itself while tool search may be on. */
export const isDeferredTool = (name: string): boolean =>
  name === FleetTools.SEARCH_TOOLS || name === FleetTools.CALL_TOOL

/** Whether a client with this view gets deferred tools. */
export const isDeferred = (options: Options, view: Naming.View): boolean =>
  options.mode === "auto" ? view.tools.size > options.threshold : options.mode

/** The fleet's tools listed in deferred mode: the always-loaded ones and those `revealed`. */
export const listed = (options: Options, view: Naming.View, revealed: ReadonlySet<string>): Array<McpSchema.Tool> => {
  const shown: Array<McpSchema.Tool> = []
  for (const [name, entry] of view.tools) {
    if (revealed.has(name) || options.alwaysLoad(name, entry.tool)) shown.push({ ...entry.tool, name })
  }
  return shown
}

// The name a client sees for each qualified name of its view, made once per view.
const listedNames = new WeakMap<Naming.View, ReadonlyMap<string, string>>()

const namesOf = (view: Naming.View): ReadonlyMap<string, string> => {
  let names = listedNames.get(view)
  if (names === undefined) {
    names = new Map([...view.tools].map(([name, entry]) => [entry.name, name]))
    listedNames.set(view, names)
  }
  return names
}

/**
 * Reveals tools found to a client: a stateful session adds them to its list and tells its
 * client the list changed; a 2026-07-28 request, which has no list to add to, does nothing.
 */
export type Reveal = (names: ReadonlyArray<string>, ctx: McpServer.RequestContext) => Effect.Effect<void>

/**
 * The tools/call handler of a client with tool search: `search_tools` searches the fleet's
 * index for the tools the client's view (`catalog`) holds, `call_tool` calls one by name
 * through `call`, and any other name goes to `call`.
 */
export const callTool = (
  search: Search,
  catalog: (ctx: McpServer.RequestContext) => Effect.Effect<Naming.View>,
  reveal: Reveal,
  call: McpServer.ToolHandlers["call"]
): McpServer.ToolHandlers["call"] =>
(name, args, ctx) => {
  if (name === FleetTools.CALL_TOOL) {
    const given = FleetTools.callArguments(args)
    if (typeof given === "string") return Effect.succeed(McpServer.toolError(given))
    // Calling the gateway's own tools through it would only go round.
    if (isDeferredTool(given.name)) {
      return Effect.succeed(McpServer.toolError(`${FleetTools.CALL_TOOL} calls the fleet's tools, not ${given.name}`))
    }
    return call(given.name, given.arguments ?? {}, ctx)
  }
  if (name !== FleetTools.SEARCH_TOOLS) return call(name, args, ctx)
  const given = FleetTools.searchArguments(args)
  if (typeof given === "string") return Effect.succeed(McpServer.toolError(given))
  return Effect.gen(function*() {
    const view = yield* catalog(ctx)
    const names = namesOf(view)
    // The index is the Policy's view for every caller: a hit this client may not see is dropped.
    const hits = yield* search(given.query, given.limit + 5)
    const found: Array<FleetTools.FoundTool> = []
    for (const qualified of hits) {
      const shown = names.get(qualified)
      const entry = shown === undefined ? undefined : view.tools.get(shown)
      if (entry !== undefined && found.length < given.limit) found.push(FleetTools.foundTool(shown!, entry.tool))
    }
    yield* reveal(found.map((tool) => tool.name), ctx)
    return FleetTools.searchResult(found)
  })
}
