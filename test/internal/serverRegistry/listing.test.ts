import { describe, expect, it } from "@effect/vitest"
import * as Catalog from "../../../src/Catalog.js"
import { changes } from "../../../src/internal/serverRegistry/listing.js"

const tool = (name: string, description = name) => ({ name, description, inputSchema: { type: "object" as const } })

describe("listing", () => {
  it("tells nothing when the lists are the same", () => {
    const lists = { ...Catalog.emptyLists, tools: [tool("a")] }
    expect(changes("s", lists, { ...lists, tools: [tool("a")] })).toEqual([])
  })

  it("tells each kind that changed, as one event per kind", () => {
    const before = { ...Catalog.emptyLists, tools: [tool("a"), tool("b")] }
    const after = {
      ...Catalog.emptyLists,
      tools: [tool("a", "new"), tool("c")],
      prompts: [{ name: "p" }]
    }
    const events = changes("s", before, after)
    expect(events.map((event) => event._tag)).toEqual(["ToolsChanged", "PromptsChanged"])
    expect(events[0]).toMatchObject({
      server: "s",
      added: [tool("c")],
      removed: [tool("b")],
      changed: [tool("a", "new")]
    })
  })
})
