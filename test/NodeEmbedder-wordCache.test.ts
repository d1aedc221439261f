// The default Embedder's word vectors, parsed once from the package's JSON, are kept in a
// binary file of the cache directory and read back from it by later loads.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as WordVectors from "../src/internal/toolSearch/wordVectors.js"
import * as NodeEmbedder from "../src/NodeEmbedder.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-words-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

describe("NodeEmbedder word cache", () => {
  it("word vectors survive bytes whole, and cut bytes are refused", () => {
    const words: WordVectors.WordVectors = {
      dimensions: 2,
      rows: new Map([["cat", 0], ["café", 1]]),
      data: Float32Array.from([1, 0, 0.5, -0.25])
    }
    const bytes = WordVectors.toBytes(words)
    const back = WordVectors.fromBytes(bytes)!
    expect(back.dimensions).toBe(2)
    expect([...back.rows]).toEqual([["cat", 0], ["café", 1]])
    expect([...back.data]).toEqual([1, 0, 0.5, -0.25])
    expect(WordVectors.fromBytes(bytes.subarray(0, bytes.length - 4))).toBeUndefined()
    expect(WordVectors.fromBytes(new Uint8Array(8))).toBeUndefined()
  })

  it.scopedLive("a second load reads the words the first wrote, and embeds alike", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const first = Option.getOrThrow(yield* NodeEmbedder.loadFrom(dir))
      // The words' file (beside their WordNet kin's).
      const files = fs.readdirSync(dir).filter((file) => file.startsWith("words-"))
      expect(files).toHaveLength(1)
      expect(files[0]).toMatch(/^words-[0-9a-f]{16}\.bin$/)
      // A file that is not the parse's is read back: the cache, not the package, answers.
      const file = path.join(dir, files[0]!)
      const written = fs.statSync(file).mtimeMs
      const second = Option.getOrThrow(yield* NodeEmbedder.loadFrom(dir))
      expect(fs.statSync(file).mtimeMs).toBe(written)
      const text = ["remove the old file"]
      expect([...(yield* second.embed(text))[0]!]).toEqual([...(yield* first.embed(text))[0]!])
      // A damaged file is parsed again and rewritten.
      fs.writeFileSync(file, "not vectors")
      expect(Option.isSome(yield* NodeEmbedder.loadFrom(dir))).toBe(true)
      expect(WordVectors.fromBytes(fs.readFileSync(file))).toBeDefined()
    }), 120_000)
})
