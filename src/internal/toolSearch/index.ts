/**
 * The search index over a catalog: the lexical index and the tools' vectors, brought up to
 * date one server at a time (a server whose tools and instructions are the ones indexed is
 * left alone), and the hybrid ranking of a query.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Catalog from "../../Catalog.js"
import type * as Embedder from "../../Embedder.js"
import type { ToolDocument } from "./documents.js"
import { embeddingText, toolDocument } from "./documents.js"
import * as Fusion from "./fusion.js"
import * as Lexical from "./lexical.js"
import * as Semantic from "./semantic.js"

/** One server as indexed. */
interface Indexed {
  readonly entries: ReadonlyArray<Catalog.ToolEntry>
  readonly instructions: string | undefined
  readonly documents: ReadonlyArray<ToolDocument>
}

/** A ranked tool. */
export interface Ranked {
  readonly entry: Catalog.ToolEntry
  readonly score: number
}

/** What one update changed, for the bench and the logs. */
export interface Update {
  readonly servers: ReadonlyArray<string>
  readonly tools: number
}

/**
 * The index.
 */
export interface SearchIndex {
  /** Brings the index to this catalog; `instructions` gives a server's instructions. */
  readonly update: (
    catalog: Catalog.Catalog,
    instructions: (server: string) => string | undefined
  ) => Effect.Effect<Update>
  /** The best tools for a query among those `keep` accepts, best first. */
  readonly search: (query: string, keep: (entry: Catalog.ToolEntry) => boolean, limit: number) => Effect.Effect<
    ReadonlyArray<Ranked>
  >
  /** Whether a query is ranked by meaning too. */
  readonly semantic: boolean
}

const sameEntries = (a: ReadonlyArray<Catalog.ToolEntry>, b: ReadonlyArray<Catalog.ToolEntry>): boolean =>
  a.length === b.length && a.every((entry, i) => entry.name === b[i]!.name && entry.tool === b[i]!.tool)

const byServer = (catalog: Catalog.Catalog): Map<string, Array<Catalog.ToolEntry>> => {
  const servers = new Map<string, Array<Catalog.ToolEntry>>()
  for (const entry of catalog.tools) {
    const list = servers.get(entry.server)
    if (list === undefined) servers.set(entry.server, [entry])
    else list.push(entry)
  }
  return servers
}

/** How many candidates each half brings to the fusion. */
const CANDIDATES = 50

/** How many query vectors are kept. */
const QUERY_CACHE = 64

/**
 * An empty index; with an embedder it ranks by meaning too.
 */
export const make = (
  embedder: Embedder.Embedder | undefined,
  cache: Embedder.EmbeddingCache
): SearchIndex => {
  const lexical = Lexical.make(embedder?.kin)
  const indexed = new Map<string, Indexed>()
  const entries = new Map<string, Catalog.ToolEntry>()
  const vectors = new Map<string, Float32Array>()

  // The last queries' vectors: a model asks again in the same words.
  const queries = new Map<string, Float32Array>()
  const embedQuery = (model: Embedder.Embedder, query: string): Effect.Effect<Float32Array | undefined> => {
    const known = queries.get(query)
    if (known !== undefined) return Effect.succeed(known)
    return model.embed([query]).pipe(
      Effect.map(([vector]) => {
        if (queries.size >= QUERY_CACHE) queries.delete(queries.keys().next().value!)
        queries.set(query, vector!)
        return vector
      }),
      Effect.catchAllDefect((defect) =>
        Effect.as(Effect.logWarning(`tool search: embedding a query failed: ${String(defect)}`), undefined)
      )
    )
  }

  const drop = (server: string) => {
    const old = indexed.get(server)
    if (old === undefined) return
    lexical.remove(old.documents)
    for (const document of old.documents) {
      entries.delete(document.id)
      vectors.delete(document.id)
    }
    indexed.delete(server)
  }

  const put = (server: string, list: ReadonlyArray<Catalog.ToolEntry>, instructions: string | undefined) =>
    Effect.gen(function*() {
      const documents = list.map((entry) => toolDocument(entry.name, server, entry.tool, instructions))
      // A model that fails leaves the server's tools to the lexical half.
      const made = embedder === undefined ?
        [] :
        yield* Semantic.vectors(embedder, cache, documents.map(embeddingText)).pipe(
          Effect.catchAllDefect((defect) =>
            Effect.as(Effect.logWarning(`tool search: embedding '${server}' failed: ${String(defect)}`), [])
          )
        )
      drop(server)
      lexical.add(documents)
      list.forEach((entry, i) => {
        entries.set(entry.name, entry)
        if (made[i] !== undefined) vectors.set(entry.name, made[i])
      })
      indexed.set(server, { entries: list, instructions, documents })
    })

  const update: SearchIndex["update"] = (catalog, instructionsOf) =>
    Effect.gen(function*() {
      const servers = byServer(catalog)
      const changed: Array<string> = []
      let tools = 0
      for (const server of [...indexed.keys()]) {
        if (!servers.has(server)) {
          drop(server)
          changed.push(server)
        }
      }
      for (const [server, list] of servers) {
        const instructions = instructionsOf(server)
        const old = indexed.get(server)
        if (old !== undefined && old.instructions === instructions && sameEntries(old.entries, list)) continue
        yield* put(server, list, instructions)
        changed.push(server)
        tools += list.length
      }
      return { servers: changed, tools }
    })

  const search: SearchIndex["search"] = (query, keep, limit) =>
    Effect.gen(function*() {
      const admitted = (id: string) => {
        const entry = entries.get(id)
        return entry !== undefined && keep(entry)
      }
      const lexicalHits = lexical.search(query, admitted, CANDIDATES)
      const queryVector = embedder === undefined || vectors.size === 0 ? undefined : yield* embedQuery(embedder, query)
      const semanticHits = queryVector === undefined
        ? undefined
        : Fusion.nearest(queryVector, vectors, admitted, CANDIDATES)
      return Fusion.fuse(lexicalHits, semanticHits).slice(0, limit).map((hit) => ({
        entry: entries.get(hit.id)!,
        score: hit.score
      }))
    })

  return { update, search, semantic: embedder !== undefined }
}
