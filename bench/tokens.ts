// What deferred tools save a model, in tokens (`npm run bench:tokens`): the fleet of the
// search bench (server-everything, server-memory, server-filesystem and the SaaS-like
// fixture servers, real processes: bench/fixtures/searchCatalog.ts) served by two gateways
// in this process, one listing every tool and one in deferred mode; the official SDK client
// lists each, and runs the search bench's queries through `search_tools`.
//
// Tokens are counted with js-tiktoken's o200k_base ranks (the GPT-4o / GPT-4.1 / o-series
// encoding), bundled in the package: nothing is downloaded. A request's tool definitions
// are counted as the JSON a provider is sent: `[{ name, description, input_schema }]`.
//
// Break-even: deferred mode costs each search its call (name and arguments) and its answer;
// a stateful client (and both model bridges) then carries the hits' definitions in its list
// too. The first request saves `eager − deferred`; that many tokens buy this many searches.
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { Tiktoken } from "js-tiktoken/lite"
import o200k from "js-tiktoken/ranks/o200k_base"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeEmbedder from "../src/NodeEmbedder.js"
import * as NodeFleet from "../src/NodeFleet.js"
import * as NodeGateway from "../src/NodeGateway.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as ToolSearch from "../src/ToolSearch.js"
import { realServers } from "./fixtures/searchCatalog.js"

const encoder = new Tiktoken(o200k)
const tokens = (text: string) => encoder.encode(text).length

// A request's tools as a provider is sent them.
const definitions = (tools: ReadonlyArray<Tool>) =>
  JSON.stringify(
    tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema }))
  )

const listAll = async (client: Client): Promise<Array<Tool>> => {
  const tools: Array<Tool> = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    for (const tool of page.tools) tools.push(tool)
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return tools
}

const connect = async (url: string) => {
  const client = new Client({ name: "bench-tokens", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const mean = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0) / values.length

const queries = (JSON.parse(
  fs.readFileSync(fileURLToPath(new URL("./fixtures/search-queries.json", import.meta.url)), "utf8")
) as Array<{ readonly query: string }>).map((entry) => entry.query)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-bench-tokens-"))
const servers = realServers(dir)
const fleet = Policy.layer({}).pipe(
  Layer.provideMerge(ServerRegistry.layer({ servers })),
  Layer.provide(NodeFleet.layer),
  Layer.merge(NodeContext.layer)
)

const program = Effect.gen(function*() {
  const registry = yield* ServerRegistry.ServerRegistry
  yield* registry.awaitReady({ servers: servers.map((spec) => spec.name), timeout: "60 seconds" })
  const eagerUrl = yield* NodeGateway.serveHttp({ port: 0, toolSearch: false, pageSize: 1000 })
  // The index `serve` uses: hybrid when the embedding package is installed.
  const index = yield* Layer.build(NodeEmbedder.layerSearch(path.join(dir, "embeddings")))
  const deferredUrl = yield* NodeGateway.serveHttp({ port: 0, toolSearch: true }).pipe(Effect.provide(index))
  const semantic = Context.get(index, ToolSearch.ToolSearch).semantic
  return { ranking: semantic ? "hybrid" : "lexical", ...yield* Effect.promise(() => measure(eagerUrl, deferredUrl)) }
}).pipe(Effect.scoped, Effect.provide(fleet), Logger.withMinimumLogLevel(LogLevel.Warning))

const measure = async (eagerUrl: string, deferredUrl: string) => {
  const eager = await connect(eagerUrl)
  const deferred = await connect(deferredUrl)
  try {
    const all = await listAll(eager)
    const first = await listAll(deferred)
    const eagerTokens = tokens(definitions(all))
    const deferredTokens = tokens(definitions(first))
    const byName = new Map(all.map((tool) => [tool.name, tool]))
    const answers: Array<number> = []
    const calls: Array<number> = []
    const joined: Array<number> = []
    for (const query of queries) {
      const args = { query }
      const result = (await deferred.callTool({ name: "search_tools", arguments: args })) as CallToolResult
      const text = result.content.map((block) => block.type === "text" ? block.text : "").join("")
      answers.push(tokens(text))
      calls.push(tokens(`search_tools${JSON.stringify(args)}`))
      const found = (result.structuredContent as { tools: Array<{ name: string }> }).tools
      joined.push(tokens(definitions(found.map((hit) => byName.get(hit.name)!))))
    }
    const sorted = [...answers].sort((a, b) => a - b)
    const saved = eagerTokens - deferredTokens
    const perSearch = mean(answers) + mean(calls)
    return {
      encoding: "o200k_base (js-tiktoken 1.0.21, bundled ranks)",
      servers: servers.length,
      tools: all.length,
      firstRequest: {
        eager: { tools: all.length, tokens: eagerTokens },
        deferred: { tools: first.length, tokens: deferredTokens },
        fewer: `${(100 * saved / eagerTokens).toFixed(1)} %`
      },
      searchAnswer: {
        queries: queries.length,
        limit: 5,
        mean: Math.round(mean(answers)),
        p50: quantile(sorted, 0.5),
        p90: quantile(sorted, 0.9),
        max: sorted[sorted.length - 1],
        call: Math.round(mean(calls)),
        hitsDefinitions: Math.round(mean(joined))
      },
      breakEvenSearches: {
        // Calling hits by name (a 2026-07-28 client, call_tool): each search costs its call and answer.
        byName: Math.floor(saved / perSearch),
        // Hits joining the list (stateful sessions, both bridges): their definitions ride along too.
        hitsListed: Math.floor(saved / (perSearch + mean(joined)))
      }
    }
  } finally {
    await eager.close()
    await deferred.close()
  }
}

const report = await Effect.runPromise(program).finally(() => fs.rmSync(dir, { recursive: true, force: true }))
console.log(JSON.stringify(report, null, 2))
