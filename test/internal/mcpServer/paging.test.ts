import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { decodeCursor, encodeCursor, page } from "../../../src/internal/mcpServer/paging.js"

const request = (cursor?: unknown) => ({
  jsonrpc: "2.0" as const,
  id: 1,
  method: "tools/list",
  params: cursor === undefined ? {} : { cursor }
})

describe("McpServer paging", () => {
  it("a cursor names its list and offset, and nothing else decodes", () => {
    expect(decodeCursor("tools", encodeCursor("tools", 3), 5)).toBe(3)
    expect(decodeCursor("tools", undefined, 5)).toBe(0)
    expect(decodeCursor("prompts", encodeCursor("tools", 3), 5)).toBeUndefined()
    expect(decodeCursor("tools", encodeCursor("tools", 6), 5)).toBeUndefined()
    expect(decodeCursor("tools", encodeCursor("tools", -1), 5)).toBeUndefined()
    expect(decodeCursor("tools", 42, 5)).toBeUndefined()
    expect(decodeCursor("tools", "not a cursor", 5)).toBeUndefined()
    expect(decodeCursor("tools", Buffer.from("7").toString("base64url"), 5)).toBeUndefined()
  })

  it.effect("pages follow each other to the end; a bad cursor is -32602", () =>
    Effect.gen(function*() {
      const items = [1, 2, 3, 4, 5]
      const first = yield* page("tools", "tools", items, request(), 2)
      expect(first.tools).toEqual([1, 2])
      const second = yield* page("tools", "tools", items, request(first.nextCursor), 2)
      expect(second.tools).toEqual([3, 4])
      const last = yield* page("tools", "tools", items, request(second.nextCursor), 2)
      expect(last).toEqual({ tools: [5] })
      const bad = yield* Effect.flip(page("tools", "tools", items, request("nope"), 2))
      expect(bad).toMatchObject({ code: -32602, message: `Invalid cursor: "nope"` })
    }))
})
