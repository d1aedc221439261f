/**
 * Text embeddings for the semantic half of tool search: a service that turns texts into
 * vectors whose cosine similarity tells how close two texts are in meaning. `ToolSearch`
 * uses it when it is in context, and ranks lexically alone when it is not.
 *
 * The service is neutral: what loads a model (files, a native runtime) lives behind
 * `mcp-fleet/node` (`NodeEmbedder`). A test or an app can provide its own with {@link layer}.
 *
 * @since 0.4.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * An embedding model.
 *
 * @since 0.4.0
 * @category models
 */
export interface Embedder {
  /** The model's id, with anything that changes its vectors: part of every cache key. */
  readonly model: string
  /** The vectors' length. */
  readonly dimensions: number
  /** One unit-length vector per text, in order. */
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Float32Array>>
  /**
   * The words that stand for a (lower-case) word in the model's own sense, if it knows
   * any: the lexical half lets them match a query's word, at the thesaurus' weight.
   */
  readonly kin?: ((word: string) => ReadonlyArray<string>) | undefined
}

/**
 * The Embedder service.
 *
 * @since 0.4.0
 * @category tags
 */
export const Embedder = Context.GenericTag<Embedder>("mcp-fleet/Embedder")

/**
 * A layer providing the given embedder.
 *
 * @since 0.4.0
 * @category layers
 */
export const layer = (embedder: Embedder): Layer.Layer<Embedder> => Layer.succeed(Embedder, embedder)

/**
 * Where embeddings are kept between runs, by key (the model and a digest of the text
 * embedded): `ToolSearch` embeds only what it finds in none. Without one in context it
 * keeps them in memory for its own life.
 *
 * @since 0.4.0
 * @category models
 */
export interface EmbeddingCache {
  /** The vectors the cache holds for these keys (the others left out). */
  readonly load: (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, Float32Array>>
  /** Keeps these vectors (best effort: a cache that cannot write says so in a log). */
  readonly save: (entries: ReadonlyMap<string, Float32Array>) => Effect.Effect<void>
}

/**
 * The EmbeddingCache service.
 *
 * @since 0.4.0
 * @category tags
 */
export const EmbeddingCache = Context.GenericTag<EmbeddingCache>("mcp-fleet/Embedder/EmbeddingCache")
