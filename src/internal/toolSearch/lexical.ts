/**
 * The lexical half of tool search: BM25+ over the tools' fields, on MiniSearch, updated one
 * server at a time.
 *
 * MiniSearch (BM25+, exact removal, prefix and fuzzy terms, no dependencies, a few kB) over
 * `@orama/orama` (a whole database, much larger) and `wink-bm25-text-search` (no removal:
 * every change rebuilds the index).
 *
 * @internal
 */
import MiniSearch from "minisearch"
import type { ToolDocument } from "./documents.js"
import { fields } from "./documents.js"
import { kinOf } from "./synonyms.js"
import { analyze, tokenize } from "./terms.js"

/**
 * One lexical match.
 */
export interface LexicalHit {
  readonly id: string
  readonly score: number
}

/**
 * A lexical index of tool documents.
 */
export interface LexicalIndex {
  readonly add: (documents: ReadonlyArray<ToolDocument>) => void
  readonly remove: (documents: ReadonlyArray<ToolDocument>) => void
  /** The best matches first, among the documents `keep` accepts. */
  readonly search: (query: string, keep: (id: string) => boolean, limit: number) => ReadonlyArray<LexicalHit>
}

/** Field weights: a word of the name says more than a word of the server's instructions. */
export const boosts: Record<(typeof fields)[number], number> = {
  name: 3,
  title: 2,
  description: 1,
  parameters: 0.5,
  serverText: 0.5
}

/** How much a word the thesaurus brought counts against one of the query's own. */
export const KIN_WEIGHT = 0.35

/**
 * An empty index; `modelKin` gives more kin of a query's (lower-case) words, as the
 * thesaurus does.
 */
export const make = (modelKin?: (word: string) => ReadonlyArray<string>): LexicalIndex => {
  const index = new MiniSearch<ToolDocument>({
    fields: [...fields],
    idField: "id",
    tokenize,
    processTerm: analyze,
    autoVacuum: false
  })
  return {
    add: (documents) => index.addAll(documents),
    remove: (documents) => index.removeAll(documents),
    search: (query, keep, limit) => {
      // The query's words, then their kin from the thesaurus, which count for less.
      const words = tokenize(query).filter((word) => analyze(word) !== null).map((word) => word.toLowerCase())
      const own = new Set(words.map(analyze).filter((term): term is string => term !== null))
      const brought = modelKin === undefined ? [] : words.flatMap(modelKin).map(analyze)
      const kin = new Set(
        [...[...own].flatMap((term) => [...kinOf(term)]), ...brought].filter((term): term is string =>
          term !== null && !own.has(term)
        )
      )
      return index.search([...own, ...kin].join(" "), {
        boost: boosts,
        // The thesaurus' words match exactly: no prefix or typo search for them.
        prefix: (term) => own.has(term) && term.length >= 4,
        fuzzy: (term) => own.has(term) && term.length >= 6 ? 0.2 : false,
        weights: { prefix: 0.4, fuzzy: 0.3 },
        combineWith: "OR",
        boostTerm: (term) => own.has(term) ? 1 : KIN_WEIGHT,
        filter: (result) => keep(result.id as string)
      }).slice(0, limit).map((result) => ({ id: result.id as string, score: result.score }))
    }
  }
}
