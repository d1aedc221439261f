import { describe, expect, it } from "@effect/vitest"
import { definitionDiff } from "../../../src/internal/toolPins/diff.js"

describe("toolPins/diff", () => {
  it("shows each changed field as a line diff, removals first; unchanged fields not at all", () => {
    const before = { name: "t", description: "one\ntwo\nthree", inputSchema: { type: "object" as const } }
    const after = { ...before, description: "one\n2\nthree" }
    expect(definitionDiff(before, after)).toEqual(["description:", "    one", "  - two", "  + 2", "    three"])
  })

  it("shows every field of a new tool as added, and hidden characters as code points", () => {
    const after = { name: "t", description: "hi\u200B\u001b[2J", inputSchema: { type: "object" as const } }
    expect(definitionDiff(undefined, after)).toEqual([
      "name:",
      "  + t",
      "description:",
      "  + hi⟦U+200B⟧⟦U+001B⟧[2J",
      "inputSchema:",
      "  + {",
      "  +   \"type\": \"object\"",
      "  + }"
    ])
  })
})
