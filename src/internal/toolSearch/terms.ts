/**
 * Words to index terms: lower case, stop words out, a light English stemmer so that
 * `issues`, `issue` and `issued` meet.
 *
 * @internal
 */
import { splitWords } from "./documents.js"

const STOP = new Set(
  ("a an and are as at be by can do does for from get has have how i in into is it its me my of on or " +
    "that the their them there these this to was what when where which who will with you your all any")
    .split(" ")
)

/** Splits text into words (camelCase and snake_case too). */
export const tokenize = (text: string): Array<string> => splitWords(text).split(/[^\p{L}\p{N}]+/u)

const SUFFIXES: ReadonlyArray<readonly [string, string]> = [
  ["ies", "y"],
  ["sses", "ss"],
  ["ing", ""],
  ["ed", ""],
  ["es", ""],
  ["s", ""]
]

/** A light stemmer: plural and verb endings off, so forms of one word share a term. */
export const stem = (word: string): string => {
  if (word.length <= 3) return word
  for (const [suffix, replacement] of SUFFIXES) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) {
      if (suffix === "s" && word.endsWith("ss")) return word
      return word.slice(0, -suffix.length) + replacement
    }
  }
  return word
}

/** A word as the index term it becomes, or null for a word not indexed. */
export const analyze = (word: string): string | null => {
  const lower = word.toLowerCase()
  if (lower === "" || STOP.has(lower)) return null
  return stem(lower)
}
