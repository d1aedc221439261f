/**
 * The result size limit alone: measuring, cutting at the byte, and failing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type * as Catalog from "../../../src/Catalog.js"
import {
  enforce,
  fittingPrefix,
  jsonBytes,
  truncate,
  truncationMarker
} from "../../../src/internal/policy/resultSize.js"
import type * as McpSchema from "../../../src/McpSchema.js"

const entry = { name: "mcp__a__t", server: "a", tool: { name: "t" } } as unknown as Catalog.ToolEntry
const result = (...texts: ReadonlyArray<string>): McpSchema.CallToolResult => ({
  content: texts.map((text) => ({ type: "text", text })),
  structuredContent: { n: 1 }
})

describe("resultSize", () => {
  it("fittingPrefix counts JSON escapes and never splits a surrogate pair", () => {
    expect(fittingPrefix("abc", 2)).toBe(2)
    expect(fittingPrefix("a\"b", 2)).toBe(1) // the quote takes two bytes
    expect(fittingPrefix("é", 1)).toBe(0)
    expect(fittingPrefix("😀x", 3)).toBe(0)
    expect(fittingPrefix("😀x", 4)).toBe(2)
  })

  it("truncate keeps what fits, cuts the next text, drops structuredContent, ends with the marker", () => {
    const big = result("first", "x".repeat(500), "third")
    const size = jsonBytes(big)
    const cut = truncate(big, 160, size)
    expect(jsonBytes(cut)).toBeLessThanOrEqual(160)
    expect(cut.structuredContent).toBeUndefined()
    expect(cut.content.map((block) => (block as McpSchema.TextContent).text.slice(0, 5))).toEqual([
      "first",
      "xxxxx",
      "[trun"
    ])
    expect(cut.content.at(-1)).toEqual({ type: "text", text: truncationMarker(160, size) })
  })

  it("enforce: untouched within the limit, cut by default, a Limit error with onOversize fail", () => {
    const small = result("ok")
    expect(enforce(entry, small, {}, false)).toEqual({
      outcome: Either.right(small),
      bytes: undefined,
      truncated: false
    })
    expect(enforce(entry, small, {}, true).bytes).toBe(jsonBytes(small))
    const big = result("y".repeat(300))
    const cut = enforce(entry, big, { maxResultBytes: 100 }, false)
    expect(cut.truncated).toBe(true)
    expect(cut.bytes).toBe(jsonBytes(big))
    const failed = enforce(entry, big, { maxResultBytes: 100, onOversize: "fail" }, false)
    expect(failed.bytes).toBe(jsonBytes(big))
    expect(Either.isLeft(failed.outcome) && failed.outcome.left.reason).toMatchObject({
      _tag: "Limit",
      what: "the result of tool 't' in bytes",
      size: jsonBytes(big),
      limit: 100
    })
  })
})
