// Tool search: quality and cost (`npm run bench:search`; `--quick` for fewer rounds,
// `--misses` to list misses, `--sentence-encoder` to measure USE-lite instead).
//
// 1. Quality: a labelled query set (bench/fixtures/search-queries.json: ≥ 50 queries → the
//    expected qualified tool, most of them paraphrases naming no word of the tool) over the
//    catalog of the real servers (server-everything, server-memory, server-filesystem over
//    stdio) and the SaaS-like fixture servers (bench/fixtures/toolsets/): recall@1,
//    recall@5 and MRR, lexical and hybrid (the default NodeEmbedder).
// 2. Cost at 1,000 tools (the tool sets copied under numbered names, in memory): search
//    latency p50/p99 through ToolSearch (queries not seen before, then the same again),
//    index build (lexical; hybrid with no vector cached; hybrid from the cache) and update
//    after one server's list changed.
// 3. The model: its packages' size on disk, load time, RSS with it loaded, embedding latency.
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import type * as Catalog from "../src/Catalog.js"
import * as Embedder from "../src/Embedder.js"
import * as SearchIndex from "../src/internal/toolSearch/index.js"
import * as Semantic from "../src/internal/toolSearch/semantic.js"
import * as NodeEmbedder from "../src/NodeEmbedder.js"
import * as NodeFleet from "../src/NodeFleet.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as ToolSearch from "../src/ToolSearch.js"
import { fakeFleet, realServers, toolSets } from "./fixtures/searchCatalog.js"

const quick = process.argv.includes("--quick")
const root = fileURLToPath(new URL("..", import.meta.url))
type Queries = ReadonlyArray<{ query: string; expected: string; paraphrase: boolean }>
const readQueries = (name: string): Queries =>
  JSON.parse(fs.readFileSync(path.join(root, "bench/fixtures", name), "utf8"))
const queries = readQueries("search-queries.json")
// Tuning is done on the even half only; the odd half and the held-out file (written before
// any result was seen) tell whether it generalises.
const sets: ReadonlyArray<readonly [string, Queries]> = [
  ["all 70", queries],
  ["tuning half", queries.filter((_, i) => i % 2 === 0)],
  ["other half", queries.filter((_, i) => i % 2 === 1)],
  ["held-out 40", readQueries("search-queries-heldout.json")],
  ["held-out 2 (64)", readQueries("search-queries-heldout2.json")]
]
// `--sentence-encoder`: USE-lite instead of the default word vectors.
const sentenceEncoder = process.argv.includes("--sentence-encoder")

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}
const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 0)} ms`
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`

const duSize = (dir: string): number => {
  let total = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    total += entry.isDirectory() ? duSize(full) : fs.statSync(full).size
  }
  return total
}

interface Quality {
  readonly r1: number
  readonly r5: number
  readonly mrr: number
  readonly misses: ReadonlyArray<string>
}

const quality = (search: ToolSearch.ToolSearch, set: typeof queries) =>
  Effect.gen(function*() {
    let r1 = 0, r5 = 0, mrr = 0
    const misses: Array<string> = []
    for (const { expected, query } of set) {
      const names = (yield* search.search(query, { limit: 10 })).map((hit) => hit.name)
      const rank = names.indexOf(expected) + 1
      if (rank === 1) r1++
      if (rank >= 1 && rank <= 5) r5++
      else misses.push(`${query} → ${expected} (got ${names.slice(0, 2).join(", ")})`)
      if (rank >= 1) mrr += 1 / rank
    }
    return { r1: r1 / set.length, r5: r5 / set.length, mrr: mrr / set.length, misses }
  })

const row = (label: string, q: Quality) =>
  console.log(
    `  ${label.padEnd(26)} recall@1 ${q.r1.toFixed(3)}  recall@5 ${q.r5.toFixed(3)}  MRR ${q.mrr.toFixed(3)}`
  )

const searchOver = (registry: ServerRegistry.ServerRegistry, embedder: Embedder.Embedder | undefined) =>
  Effect.gen(function*() {
    const policy = yield* Policy.make({}).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
    const make = ToolSearch.make.pipe(
      Effect.provideService(ServerRegistry.ServerRegistry, registry),
      Effect.provideService(Policy.Policy, policy)
    )
    return yield* embedder === undefined ? make : Effect.provideService(make, Embedder.Embedder, embedder)
  })

const qualityPart = (embedder: Embedder.Embedder | undefined) =>
  Effect.gen(function*() {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-bench-search-"))
    try {
      const registry = yield* ServerRegistry.make({ servers: realServers(directory) })
      yield* registry.awaitReady({ servers: "settled", timeout: "30 seconds" })
      const catalog = yield* registry.catalog.get
      console.log(`\n1. Quality: ${queries.length} queries (${
        queries.filter((q) => q.paraphrase).length
      } paraphrases) over ${catalog.tools.length} tools of ${new Set(catalog.tools.map((t) => t.server)).size} servers`)
      for (const [label, model] of [["lexical", undefined], ["hybrid", embedder]] as const) {
        if (label === "hybrid" && model === undefined) {
          continue
        }
        const search = yield* searchOver(registry, model)
        for (const [name, set] of sets) {
          const measured = yield* quality(search, set)
          row(`${label}, ${name}`, measured)
          if (process.argv.includes("--misses")) {
            measured.misses.forEach((miss) =>
              console.log(`    miss: ${miss}`)
            )
          }
        }
      }
    } finally {
      fs.rmSync(directory, { recursive: true, force: true })
    }
  }).pipe(Effect.scoped)

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    const value = yield* effect
    return [performance.now() - start, value] as const
  })

const latencyPart = (embedder: Embedder.Embedder | undefined, size: number) =>
  Effect.gen(function*() {
    const servers = fakeFleet(size)
    const registry = yield* ServerRegistry.make({ servers })
    yield* registry.awaitReady({ servers: "settled", timeout: "30 seconds" })
    const catalog = yield* registry.catalog.get
    console.log(`\n2. Cost at ${catalog.tools.length} tools (${servers.length} in-memory servers)`)
    const rounds = quick ? 1 : 3
    for (const [label, model] of [["lexical", undefined], ["hybrid", embedder]] as const) {
      if (label === "hybrid" && model === undefined) continue
      const search = yield* searchOver(registry, model)
      const [first] = yield* timed(search.search("warm up the index"))
      const fresh: Array<number> = []
      const again: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        for (const { query } of queries) {
          // A query not seen before (its vector is not cached), then the same again.
          const text = round === 0 ? query : `${query} ${round}`
          fresh.push((yield* timed(search.search(text)))[0])
          again.push((yield* timed(search.search(text)))[0])
        }
      }
      console.log(
        `  ${label.padEnd(8)} search p50 ${ms(percentile(fresh, 50))}  p99 ${ms(percentile(fresh, 99))}` +
          `  (same query again: p50 ${ms(percentile(again, 50))}, p99 ${ms(percentile(again, 99))});` +
          ` first search (builds the index) ${ms(first)}`
      )
    }
    yield* indexPart(catalog, embedder)
  }).pipe(Effect.scoped)

// The index alone: built from nothing, and brought up to date after one server's list changed.
const indexPart = (catalog: Catalog.Catalog, embedder: Embedder.Embedder | undefined) =>
  Effect.gen(function*() {
    const none = () => undefined
    const variants = [["lexical", undefined, Semantic.memoryCache()]] as Array<
      readonly [string, Embedder.Embedder | undefined, Embedder.EmbeddingCache]
    >
    const cache = Semantic.memoryCache()
    if (embedder !== undefined) {
      variants.push(["hybrid, nothing cached", embedder, cache], ["hybrid, vectors cached", embedder, cache])
    }
    const server = catalog.tools[0]!.server
    const [set] = toolSets().filter(({ set }) => server.startsWith(set.name))
    // The same server's list again, one description changed: new objects, as a list_changed brings.
    const changed: Catalog.Catalog = {
      ...catalog,
      tools: catalog.tools.map((entry, i) =>
        entry.server !== server ? entry : {
          ...entry,
          tool: { ...entry.tool, description: i === 0 ? `${entry.tool.description} (v2)` : entry.tool.description }
        }
      )
    }
    for (const [label, model, store] of variants) {
      const index = SearchIndex.make(model, store)
      const [build] = yield* timed(index.update(catalog, none))
      const [update, what] = yield* timed(index.update(changed, none))
      console.log(
        `  index ${label.padEnd(24)} build ${ms(build)}, update after '${server}' (${
          set?.set.tools.length ?? "?"
        } tools) changed ${ms(update)} (${what.tools} re-indexed)`
      )
    }
  })

const modelPart = Effect.gen(function*() {
  console.log("\n3. The model (NodeEmbedder)")
  const before = process.memoryUsage().rss
  const packages = sentenceEncoder ? NodeEmbedder.SENTENCE_ENCODER_PACKAGES : NodeEmbedder.PACKAGES
  const [load, embedder] = yield* timed(sentenceEncoder ? NodeEmbedder.loadSentenceEncoder : NodeEmbedder.load)
  if (embedder._tag === "None") {
    console.log(`  not installed (${packages.join(", ")}): lexical only`)
    return undefined
  }
  const size = packages.map((name) => duSize(path.join(root, "node_modules", name))).reduce((a, b) => a + b)
  if (!sentenceEncoder) {
    // The binary cache of the words kept: written by a first load, read by the next.
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-bench-words-"))
    const cpu = (effect: Effect.Effect<unknown>) =>
      Effect.gen(function*() {
        const start = process.cpuUsage()
        const [wall] = yield* timed(effect)
        const used = process.cpuUsage(start)
        return `${ms(wall)} (CPU ${ms((used.user + used.system) / 1000)})`
      })
    const [parsed, cached] = [
      yield* cpu(NodeEmbedder.loadFrom(directory)),
      yield* cpu(NodeEmbedder.loadFrom(directory))
    ]
    fs.rmSync(directory, { recursive: true, force: true })
    console.log(`  load with a cache directory: first (parse, write) ${parsed}, then (read) ${cached}`)
  }
  const one: Array<number> = []
  for (const { query } of queries.slice(0, quick ? 10 : 40)) one.push((yield* timed(embedder.value.embed([query])))[0])
  const batch = queries.slice(0, 32).map((q) => q.query)
  const [batched] = yield* timed(embedder.value.embed(batch))
  console.log(`  ${embedder.value.model}: packages ${mb(size)} on disk, load ${ms(load)}`)
  console.log(
    `  RSS ${mb(before)} before, ${mb(process.memoryUsage().rss)} with the model loaded; embedding one query p50 ${
      ms(percentile(one, 50))
    }, p99 ${ms(percentile(one, 99))}; 32 texts ${ms(batched)}`
  )
  return embedder.value
})

const main = Effect.gen(function*() {
  console.log(`Tool search bench (${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(1)})`)
  const embedder = yield* modelPart
  yield* qualityPart(embedder)
  if (!process.env.NOLAT) yield* latencyPart(embedder, 1000)
})

Effect.runPromise(main.pipe(Effect.provide(NodeFleet.layer))).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
