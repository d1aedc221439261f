// The word-vector embedder on a small file of our own in the wink format: streamed in chunks
// cut anywhere, only the most frequent words kept, texts weighted by rarity.
import { describe, expect, it } from "@effect/vitest"
import * as WordVectors from "../../../src/internal/toolSearch/wordVectors.js"

// Frequency order, as the package's file: each vector ends with its norm and the word's index.
const file = JSON.stringify({
  precision: 8,
  words: ["the", "cat", "kitten", "invoice", "say \"hi\""],
  vectors: {
    the: [1, 1, 0, 1.41, 0],
    cat: [1, 0, 0, 1, 1],
    kitten: [0.9, 0.1, 0, 0.9, 2],
    invoice: [0, 0, 1, 1, 3],
    "say \"hi\"": [0, 1, 0, 1, 4]
  }
})

async function* chunks(text: string, size: number) {
  for (let start = 0; start < text.length; start += size) yield text.slice(start, start + size)
}

describe("WordVectors", () => {
  it("reads the vectors from chunks cut anywhere, most frequent words first, up to the limit", async () => {
    for (const size of [1, 7, 64, file.length]) {
      const all = await WordVectors.parse(chunks(file, size), 100)
      expect(all.dimensions).toBe(3)
      expect([...all.rows.keys()]).toEqual(["the", "cat", "kitten", "invoice", "say \"hi\""])
      expect([...all.data.subarray(6, 9)]).toEqual([0.9, 0.1, 0].map(Math.fround))
      expect(all.rows.get("invoice")).toBe(3)
    }
    const some = await WordVectors.parse(chunks(file, 5), 2)
    expect([...some.rows.keys()]).toEqual(["the", "cat"])
    expect(some.data).toHaveLength(6)
  })

  it("embeds a text as its known words' unit mean, a rare word counting more than a frequent one", async () => {
    const words = await WordVectors.parse(chunks(file, 16), 100)
    const cat = WordVectors.embed(words, "The CAT")
    expect(Math.hypot(...cat)).toBeCloseTo(1, 5)
    // "the" (rank 0) weighs nothing: the text is the cat's vector.
    expect([...cat]).toEqual([1, 0, 0])
    const mixed = WordVectors.embed(words, "cat invoice")
    expect(mixed[2]!).toBeGreaterThan(mixed[0]!)
    expect([...WordVectors.embed(words, "unknown words only")]).toEqual([0, 0, 0])
  })
})
