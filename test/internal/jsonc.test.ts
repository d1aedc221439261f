/**
 * The one JSONC reader of config files: comments and trailing commas, and errors that
 * name a place but never quote the text.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Jsonc from "../../src/internal/jsonc.js"

describe("jsonc", () => {
  it("reads comments and trailing commas", () => {
    const text = `{\n  // a comment\n  "a": [1, 2,], /* another */\n  "b": "x // not a comment",\n}`
    expect(Jsonc.parse(text)).toEqual(Either.right({ a: [1, 2], b: "x // not a comment" }))
  })

  it("fails with a code, a line and a column, never the text", () => {
    const result = Jsonc.parse(`{\n  "a": sk-live-123\n}`)
    if (Either.isRight(result)) throw new Error("expected a failure")
    expect(result.left.line).toBe(2)
    expect(result.left.column).toBe(8)
    expect(Jsonc.describe(result.left)).toBe("InvalidSymbol at line 2, column 8")
  })

  it("an empty text is no value; parseTree keeps offsets for edits", () => {
    expect(Either.isLeft(Jsonc.parse(""))).toBe(true)
    const tree = Jsonc.parseTree(`{ "a": 1 }`)
    if (Either.isLeft(tree)) throw new Error("expected a tree")
    expect(tree.right.children?.[0]?.offset).toBe(2)
  })
})
