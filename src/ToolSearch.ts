/**
 * Search over the fleet's tools: the catalog a caller may use (the Policy's view: denied
 * tools out; quarantined tools are in no catalog), ranked for a query in words. A model that
 * meets hundreds of tools asks for the few it needs instead of reading them all.
 *
 * **Ranking.** Lexical, BM25+ (MiniSearch) over each tool's name split into words
 * (`create_issue`, `createIssue` → create, issue), title, description, parameter names and
 * descriptions, its server's name and the server's instructions, with a light stemmer and
 * field boosts (a word of the name counts most). With an {@link Embedder.Embedder} in
 * context the ranking is hybrid: each tool's text is embedded once, and a query's hits
 * are the weighted fusion of both rankings, which finds tools a query names in other words
 * (`"send a message to the team"` → `post_message`). Without one, lexical alone
 * (`semantic: false`). Scores are in [0, 1], 1 for the best-ranked tool of a query.
 *
 * **Updates.** The index follows the catalog one server at a time: a server whose tools
 * and instructions did not change since they were indexed is left alone, so a
 * `list_changed` re-indexes that server's tools only. Vectors are kept by a digest of the
 * embedded text in the {@link Embedder.EmbeddingCache} in context (in memory without one;
 * `NodeEmbedder.layerFileCache` keeps them on disk), so a restart embeds nothing again.
 * `layer` follows the catalog in the background; a search brings the index up to date
 * first anyway.
 *
 * @since 0.4.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as Catalog from "./Catalog.js"
import * as Embedder from "./Embedder.js"
import * as Glob from "./internal/glob.js"
import * as SearchIndex from "./internal/toolSearch/index.js"
import * as Semantic from "./internal/toolSearch/semantic.js"
import { traced } from "./internal/traced.js"
import type * as McpSchema from "./McpSchema.js"
import * as Policy from "./Policy.js"
import * as ServerRegistry from "./ServerRegistry.js"

/**
 * A tool a search found.
 *
 * @since 0.4.0
 * @category models
 */
export interface ToolHit {
  /** The qualified name (`mcp__<server>__<tool>`): what a model calls it by. */
  readonly name: string
  readonly server: string
  /** Its definition as its server gave it. */
  readonly tool: McpSchema.Tool
  /** How well it matches, in [0, 1]; the best hit of a query has 1 unless none matched well. */
  readonly score: number
}

/**
 * What a search looks at.
 *
 * @since 0.4.0
 * @category models
 */
export interface SearchOptions {
  /** The most hits. Default: {@link DEFAULT_LIMIT}. */
  readonly limit?: number | undefined
  /** Only these servers' tools (names or globs, as in the Policy). Default: all. */
  readonly servers?: ReadonlyArray<string> | undefined
}

/**
 * The hits a search gives when no limit is said.
 *
 * @since 0.4.0
 * @category constants
 */
export const DEFAULT_LIMIT = 5

/**
 * The fleet's tool search.
 *
 * @since 0.4.0
 * @category models
 */
export interface ToolSearch {
  /** The tools best matching the query, best first; none for an empty query. */
  readonly search: (query: string, options?: SearchOptions | undefined) => Effect.Effect<ReadonlyArray<ToolHit>>
  /** Whether queries are ranked by meaning too (an Embedder was in context), or by words alone. */
  readonly semantic: boolean
}

/**
 * The ToolSearch service.
 *
 * @since 0.4.0
 * @category tags
 */
export const ToolSearch = Context.GenericTag<ToolSearch>("mcp-fleet/ToolSearch")

const serverFilter = (servers: ReadonlyArray<string> | undefined): (entry: Catalog.ToolEntry) => boolean => {
  if (servers === undefined) return () => true
  const matchers = servers.map(Glob.compile)
  return (entry) => matchers.some((match) => match(entry.server))
}

// Brings the index to the registry's catalog as the Policy lets it through; a server's
// instructions are the last it gave, so a restart does not re-index it twice.
const updater = (
  index: SearchIndex.SearchIndex,
  registry: ServerRegistry.ServerRegistry,
  policy: Policy.Policy
) => {
  const instructions = new Map<string, string | undefined>()
  const semaphore = Effect.unsafeMakeSemaphore(1)
  return (catalog: Catalog.Catalog) =>
    semaphore.withPermits(1)(Effect.gen(function*() {
      for (const status of yield* registry.status) {
        if (status.state._tag === "Ready") instructions.set(status.name, status.instructions)
      }
      return yield* index.update(policy.filter(catalog), (server) => instructions.get(server))
    }))
}

// The service, and the step that brings its index up to date.
const build = Effect.gen(function*() {
  const registry = yield* ServerRegistry.ServerRegistry
  const policy = yield* Policy.Policy
  const embedder = Option.getOrUndefined(yield* Effect.serviceOption(Embedder.Embedder))
  const cache = Option.getOrElse(yield* Effect.serviceOption(Embedder.EmbeddingCache), Semantic.memoryCache)
  const index = SearchIndex.make(embedder, cache)
  const update = updater(index, registry, policy)
  const refresh = Effect.flatMap(registry.catalog.get, update)
  const search = traced("ToolSearch.search")((query: string, options?: SearchOptions) =>
    query.trim() === ""
      ? Effect.succeed([])
      : refresh.pipe(
        Effect.zipRight(index.search(query, serverFilter(options?.servers), options?.limit ?? DEFAULT_LIMIT)),
        Effect.map((ranked) =>
          ranked.map(({ entry, score }): ToolHit => ({
            name: entry.name,
            server: entry.server,
            tool: entry.tool,
            score
          }))
        )
      )
  )
  const service: ToolSearch = { search, semantic: index.semantic }
  return { service, refresh }
})

/**
 * Makes a tool search over the registry's catalog as the Policy in context lets it
 * through, hybrid when an Embedder is in context. Its index is brought up to date by each
 * search.
 *
 * @example
 * ```ts
 * const search = yield* ToolSearch.make
 * const hits = yield* search.search("open a bug report", { limit: 3 })
 * // [{ name: "mcp__tracker__create_issue", server: "tracker", score: 1, tool: {...} }, ...]
 * ```
 *
 * @since 0.4.0
 * @category constructors
 */
export const make: Effect.Effect<ToolSearch, never, ServerRegistry.ServerRegistry | Policy.Policy> = Effect.map(
  build,
  ({ service }) => service
)

// Searches made by fromContext, one per Policy (a Policy fronts one registry).
const made = new WeakMap<Policy.Policy, ToolSearch>()

/**
 * The ToolSearch in context, else one made as {@link make} makes it and kept for the Policy
 * in context: whoever asks again with that Policy (a bridge making its tools every turn, a
 * gateway) gets the same index instead of building another.
 *
 * @since 0.4.0
 * @category constructors
 */
export const fromContext: Effect.Effect<ToolSearch, never, ServerRegistry.ServerRegistry | Policy.Policy> = Effect
  .flatMap(
    Effect.serviceOption(ToolSearch),
    (given) =>
      Option.isSome(given) ? Effect.succeed(given.value) : Effect.flatMap(Policy.Policy, (policy) => {
        const known = made.get(policy)
        return known !== undefined
          ? Effect.succeed(known)
          : Effect.tap(make, (search) => Effect.sync(() => made.set(policy, search)))
      })
  )

/**
 * The ToolSearch service, made as {@link make} makes it, and kept up to date in the
 * background as the catalog or the Policy changes (so a search after a change rarely waits
 * for embeddings).
 *
 * @since 0.4.0
 * @category layers
 */
export const layer: Layer.Layer<ToolSearch, never, ServerRegistry.ServerRegistry | Policy.Policy> = Layer.scoped(
  ToolSearch,
  Effect.gen(function*() {
    const policy = yield* Policy.Policy
    const { refresh, service } = yield* build
    yield* policy.catalog.pipe(Stream.runForEach(() => refresh), Effect.forkScoped)
    return service
  })
)
