// WordNet's synonyms that the word vectors agree with (internal/toolSearch/wordnet.ts), and
// the lexical half matching a query's word by the kin an Embedder gives.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Lexical from "../src/internal/toolSearch/lexical.js"
import * as WordNet from "../src/internal/toolSearch/wordnet.js"
import type * as WordVectors from "../src/internal/toolSearch/wordVectors.js"
import * as NodeEmbedder from "../src/NodeEmbedder.js"

// Two dimensions: "bug" points as "defect" does, "insect" elsewhere.
const words: WordVectors.WordVectors = {
  dimensions: 2,
  rows: new Map([["bug", 0], ["defect", 1], ["insect", 2], ["good", 3], ["fine", 4]]),
  data: Float32Array.from([1, 0.2, 0.9, 0.3, -0.2, 1, 0, 1, 0.1, 1])
}

// Lines as WordNet's data files have them: the license's indented, then synsets.
const files = [
  [
    "  1 This software and database is being provided to you, the LICENSEE, by",
    "02239007 05 n 02 bug 0 insect 0 002 @ 02162607 n 0000 + 00422721 a 0101 | general term for any insect",
    "14301341 26 n 03 defect 0 bug 0 glitch 0 001 @ 14299637 n 0000 | a fault or defect in a computer program",
    "01123148 00 a 02 good(a) 0 fine 0 000 | having desirable or positive qualities"
  ].join("\n")
]

const document = (id: string, name: string) => ({
  id,
  server: "s",
  name,
  title: "",
  description: "",
  parameters: "",
  serverText: ""
})

describe("WordNet kin", () => {
  it("keeps a synset's words whose vectors agree, and drops the other senses", () => {
    const kin = WordNet.kin(words, files)
    expect(kin.get("bug")).toEqual(["defect"])
    expect(kin.get("defect")).toEqual(["bug"])
    // "glitch" is not among the words; "insect" is the sense the vectors do not share.
    expect(kin.has("insect")).toBe(false)
    expect(kin.get("good")).toEqual(["fine"])
    expect(WordNet.fromText(WordNet.toText(kin))).toEqual(kin)
    // A floor of -1 keeps every synonym.
    expect(WordNet.kin(words, files, -1).get("bug")).toEqual(["insect", "defect"])
  })

  it("the lexical half matches a query's word by its kin, below a word of its own", () => {
    // Words the built-in thesaurus does not know.
    const index = Lexical.make((word) => word === "glitch" ? ["gremlin"] : [])
    index.add([document("kin", "tame gremlin"), document("own", "tame glitch")])
    const hits = index.search("glitch", () => true, 5)
    expect(hits.map((hit) => hit.id)).toEqual(["own", "kin"])
    const alone = Lexical.make()
    alone.add([document("kin", "tame gremlin")])
    expect(alone.search("glitch", () => true, 5)).toEqual([])
  })

  it.live("the default Embedder gives WordNet kin from the installed packages", () =>
    Effect.gen(function*() {
      const embedder = Option.getOrThrow(yield* NodeEmbedder.load)
      expect(embedder.kin?.("customer")).toContain("client")
      expect(embedder.kin?.("no-such-word")).toEqual([])
    }), 60_000)
})
