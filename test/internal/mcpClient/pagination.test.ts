import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { listAll } from "../../../src/internal/mcpClient/pagination.js"
import * as McpSchema from "../../../src/McpSchema.js"
import { failure } from "../../../src/testing/Results.js"

type Page = { readonly items: ReadonlyArray<number>; readonly nextCursor?: string | undefined }

// A server whose pages are `pages`, keyed by the cursor that asks for them ("" for the first).
const paged = (pages: Record<string, Page>) => {
  const asked: Array<string | undefined> = []
  const request = (_method: string, params: Record<string, unknown> | undefined) =>
    Effect.sync(() => {
      const cursor = params?.cursor as string | undefined
      asked.push(cursor)
      return pages[cursor ?? ""] as any
    })
  return { asked, request }
}

const list = (pages: Record<string, Page>, limits = { maxPages: 10, maxItems: 10 }) => {
  const server = paged(pages)
  const run = listAll(
    "s",
    limits,
    server.request,
    "things/list",
    McpSchema.EmptyResult as any,
    (page: Page) => page.items
  )
  return { run, asked: server.asked }
}

describe("pagination", () => {
  it.effect("follows nextCursor to the last page", () =>
    Effect.gen(function*() {
      const { asked, run } = list({
        "": { items: [1, 2], nextCursor: "a" },
        a: { items: [3], nextCursor: "b" },
        b: { items: [] }
      })
      expect(yield* run).toEqual([1, 2, 3])
      expect(asked).toEqual([undefined, "a", "b"])
    }))

  it.effect("fails on a repeated cursor, too many pages or too many items", () =>
    Effect.gen(function*() {
      const loop = failure(
        yield* Effect.exit(list({ "": { items: [], nextCursor: "a" }, a: { items: [], nextCursor: "a" } }).run)
      )
      expect(loop.reason).toMatchObject({ _tag: "Validation", method: "things/list" })
      expect(loop.message).toBe("server 's' (things/list): the server repeated the cursor \"a\"")
      const endless: Record<string, Page> = {}
      for (let i = 0; i < 5; i++) endless[i === 0 ? "" : String(i)] = { items: [], nextCursor: String(i + 1) }
      const pages = failure(yield* Effect.exit(list(endless, { maxPages: 3, maxItems: 10 }).run))
      expect(pages.reason).toMatchObject({ _tag: "Limit", what: "things/list: the number of pages", size: 4, limit: 3 })
      const items = failure(yield* Effect.exit(list({ "": { items: [1, 2, 3] } }, { maxPages: 3, maxItems: 2 }).run))
      expect(items.reason).toMatchObject({ _tag: "Limit", what: "things/list: the number of items", size: 3, limit: 2 })
    }))
})
