/**
 * Merging configs alone: per-server rules, per-tool limits, and a default that only gets
 * stricter.
 */
import { describe, expect, it } from "@effect/vitest"
import { merge } from "../../../src/internal/policy/merge.js"

describe("merge", () => {
  it("merges per-tool limits field by field, and keeps what only one side has", () => {
    expect(merge(
      { tools: { a: { timeout: 1, maxConcurrent: 1 } }, servers: { s: { deny: ["x"] } } },
      { tools: { a: { timeout: 2 }, b: { maxResultBytes: 10 } }, audit: "/a.jsonl" }
    )).toEqual({
      tools: { a: { timeout: 2, maxConcurrent: 1 }, b: { maxResultBytes: 10 } },
      servers: { s: { deny: ["x"] } },
      audit: "/a.jsonl"
    })
  })

  it("a later file cannot loosen a default, and {} changes nothing", () => {
    expect(merge({ default: "ask" }, { default: "allow" })).toEqual({ default: "ask" })
    expect(merge({ servers: { s: { default: "allow" } } }, { servers: { s: { default: "deny" } } }))
      .toEqual({ servers: { s: { default: "deny" } } })
    expect(merge({ deny: ["x"] }, {})).toEqual({ deny: ["x"] })
    expect(merge({}, {})).toEqual({})
  })
})
