// `tools --search` ranks through NodeEmbedder.layerSearch (the CLI's path: word vectors read
// through the binary cache, tools' vectors through the file cache); the search bench measures
// ToolSearch.make with NodeEmbedder.load in context. Both must give the same ranking, a
// restart over the filled caches too; with no model, layerSearch ranks by words alone.
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Embedder from "../src/Embedder.js"
import * as NodeEmbedder from "../src/NodeEmbedder.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import * as ToolSearch from "../src/ToolSearch.js"
import { Platform } from "./support/platform.js"

const server = (name: string, tools: Record<string, string>) =>
  FakeServer.spec({
    name,
    tools: Object.entries(tools).map(([tool, description]) => ({
      tool: { name: tool, description, inputSchema: { type: "object" } },
      call: () => Effect.succeed({ content: [] })
    }))
  })

const servers = [
  server("tracker", {
    create_issue: "Create a new issue in a repository.",
    list_issues: "List the issues of a repository, newest first.",
    merge_pull_request: "Merge a pull request into its base branch."
  }),
  server("chat", {
    send_message: "Send a message to a channel or a person.",
    invite_to_channel: "Invite users to a channel."
  }),
  server("files", {
    read_file: "Read a file's contents.",
    delete_file: "Delete a file for good."
  })
]

const queries = ["open a bug report", "post to the team room", "get rid of an old document", "ship my branch"]

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-layer-search-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

// Each query's hits, names and scores, as one search ranks them.
const rankings = (search: ToolSearch.ToolSearch) =>
  Effect.forEach(
    queries,
    (query) => Effect.map(search.search(query, { limit: 5 }), (hits) => hits.map((hit) => [hit.name, hit.score]))
  )

describe("NodeEmbedder.layerSearch", () => {
  it.live("ranks as the bench measures, and again the same from its caches", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const registry = yield* ServerRegistry.make({ servers }).pipe(Effect.provide(Platform))
      yield* registry.awaitReady({ servers: "settled", timeout: "5 seconds" })
      const policy = yield* Policy.make({}).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
      const context = Layer.mergeAll(
        Layer.succeed(ServerRegistry.ServerRegistry, registry),
        Layer.succeed(Policy.Policy, policy),
        NodeFileSystem.layer
      )
      const cli = (embedder?: Effect.Effect<Option.Option<Embedder.Embedder>>) =>
        ToolSearch.ToolSearch.pipe(
          Effect.flatMap((search) => Effect.map(rankings(search), (ranked) => [search.semantic, ranked] as const)),
          Effect.provide(NodeEmbedder.layerSearch(dir, embedder).pipe(Layer.provide(context))),
          Effect.scoped
        )
      const measured = (embedder: Embedder.Embedder | undefined) =>
        Effect.gen(function*() {
          const make = ToolSearch.make.pipe(Effect.provide(context))
          const search = yield* embedder === undefined ? make : Effect.provideService(make, Embedder.Embedder, embedder)
          return [search.semantic, yield* rankings(search)] as const
        })

      const bench = yield* measured(Option.getOrThrow(yield* NodeEmbedder.load))
      expect(bench[0]).toBe(true)
      // First run: words and their kin parsed and cached, tools embedded and cached; then a
      // restart reads all three.
      expect(yield* cli()).toEqual(bench)
      const kinds = fs.readdirSync(dir).map((file) => file.endsWith(".json") ? "vectors" : file.split("-")[0])
      expect(kinds.sort()).toEqual(["kin", "vectors", "words"])
      expect(yield* cli()).toEqual(bench)

      const lexical = yield* measured(undefined)
      expect(lexical[0]).toBe(false)
      expect(yield* cli(Effect.succeed(Option.none()))).toEqual(lexical)
      // The model changes the ranking: the test would see a path that dropped it.
      expect(lexical[1]).not.toEqual(bench[1])
    }).pipe(Effect.scoped), 60_000)
})
