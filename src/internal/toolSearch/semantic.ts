/**
 * The semantic half of tool search: one vector per tool, made by the Embedder from the
 * tool's text, kept by a digest of that text in the EmbeddingCache so that a restart or a
 * server sending the same list again embeds nothing.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Embedder from "../../Embedder.js"
import { canonicalDigest } from "../canonicalJson.js"

/** How many texts go to the model at once. */
const BATCH = 32

/**
 * The cache key of a text's vector under a model.
 */
export const cacheKey = (model: string, text: string): string => canonicalDigest({ model, text })

/**
 * The vectors of these texts: from the cache, else embedded (in batches) and saved.
 */
export const vectors = (
  embedder: Embedder.Embedder,
  cache: Embedder.EmbeddingCache,
  texts: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<Float32Array>> =>
  Effect.gen(function*() {
    const keys = texts.map((text) => cacheKey(embedder.model, text))
    const cached = yield* cache.load(keys)
    const missing = [...new Set(keys.filter((key) => !cached.has(key)))]
    const textOf = new Map(keys.map((key, i) => [key, texts[i]!]))
    const made = new Map<string, Float32Array>()
    for (let start = 0; start < missing.length; start += BATCH) {
      const batch = missing.slice(start, start + BATCH)
      const embedded = yield* embedder.embed(batch.map((key) => textOf.get(key)!))
      batch.forEach((key, i) => made.set(key, embedded[i]!))
    }
    if (made.size > 0) yield* cache.save(made)
    return keys.map((key) => cached.get(key) ?? made.get(key)!)
  })

/**
 * The cosine similarity of two unit vectors.
 */
export const cosine = (a: Float32Array, b: Float32Array): number => {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!
  return sum
}

/**
 * A cache in memory, for a search with no EmbeddingCache in context.
 */
export const memoryCache = (): Embedder.EmbeddingCache => {
  const entries = new Map<string, Float32Array>()
  return {
    load: (keys) =>
      Effect.sync(() => {
        const found = new Map<string, Float32Array>()
        for (const key of keys) {
          const vector = entries.get(key)
          if (vector !== undefined) found.set(key, vector)
        }
        return found
      }),
    save: (made) => Effect.sync(() => made.forEach((vector, key) => entries.set(key, vector)))
  }
}
