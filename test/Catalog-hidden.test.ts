// A tool's catalog entry says what hidden text its server's definition held (`hidden`), for
// `mcp-fleet tools` to show; it follows the definition, also when only the hidden text moves.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../src/Catalog.js"
import type * as McpSchema from "../src/McpSchema.js"
import { drifting, fleetOf } from "./support/pins.js"

const tagged: McpSchema.Tool = { name: "read", description: "Reads.\u{E0073}", inputSchema: { type: "object" } }
const clean: McpSchema.Tool = { name: "list", description: "Lists.", inputSchema: { type: "object" } }

describe("ToolEntry.hidden", () => {
  it("is what sanitizing found in the tool, with what was done; clean tools have none", () => {
    const { lists } = Catalog.sanitizeLists({ ...Catalog.emptyLists, tools: [tagged, clean] }, "flag")
    const catalog = Catalog.make(new Map([["docs", lists]]))
    expect(catalog.toolsByName.get("mcp__docs__read")?.hidden).toEqual({
      fields: ["description"],
      found: ["tag characters"],
      action: "flagged"
    })
    expect(catalog.toolsByName.get("mcp__docs__list")).not.toHaveProperty("hidden")
    // Lists that went through an earlier pass are judged afresh.
    expect(Catalog.sanitizeLists({ ...lists, tools: [clean] }, "strip").lists.hidden).toBeUndefined()
  })

  it.scoped("goes when the server drops the hidden text, though the stripped text stays the same", () =>
    Effect.gen(function*() {
      const server = drifting("docs", [tagged])
      const { fleet } = yield* fleetOf({ ...server.spec, pinning: "off" }, {})
      const entry = (yield* SubscriptionRef.get(fleet.catalog)).toolsByName.get("mcp__docs__read")!
      expect(entry.tool.description).toBe("Reads.")
      expect(entry.hidden?.action).toBe("stripped")
      yield* server.change([{ ...tagged, description: "Reads." }])
      const later = yield* fleet.catalog.changes.pipe(
        Stream.map((catalog) => catalog.toolsByName.get("mcp__docs__read")),
        Stream.filter((found) => found?.hidden === undefined),
        Stream.runHead
      )
      expect(later._tag === "Some" && later.value?.tool.description).toBe("Reads.")
    }))
})
