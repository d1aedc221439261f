// Fusion of the two rankings: the lexical one counts most, and the best fused hit scores 1
// even when the halves disagree on which tool is best.
import { describe, expect, it } from "@effect/vitest"
import * as Fusion from "../../../src/internal/toolSearch/fusion.js"

describe("Fusion", () => {
  it("ranks by the weighted halves and scales the best hit to 1", () => {
    const lexical = [{ id: "a", score: 8 }, { id: "b", score: 7.6 }, { id: "c", score: 2 }]
    const semantic = [{ id: "b", score: 0.9 }, { id: "c", score: 0.8 }, { id: "a", score: 0.1 }]
    const fused = Fusion.fuse(lexical, semantic)
    // b is nearly as good in words and best in meaning: it overtakes a; c stays behind.
    expect(fused.map((hit) => hit.id)).toEqual(["b", "a", "c"])
    expect(fused[0]!.score).toBe(1)
    expect(fused.every((hit) => hit.score >= 0 && hit.score <= 1)).toBe(true)
  })

  it("a far better lexical hit is not overturned by meaning alone", () => {
    const fused = Fusion.fuse([{ id: "a", score: 9 }, { id: "b", score: 3 }], [{ id: "b", score: 0.9 }, {
      id: "a",
      score: 0.2
    }])
    expect(fused.map((hit) => hit.id)).toEqual(["a", "b"])
  })

  it("with the lexical ranking alone, scores are relative to the best", () => {
    expect(Fusion.fuse([{ id: "a", score: 4 }, { id: "b", score: 1 }], undefined)).toEqual([
      { id: "a", score: 1 },
      { id: "b", score: 0.25 }
    ])
  })
})
