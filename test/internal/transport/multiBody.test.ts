// A POST answered with an application/json body that is not exactly one message, as the
// conformance repo's reference server (SDK 1.29) answers some 2026-07-28 requests: every
// complete JSON-RPC message is taken, as soon as it is complete; a body without the answer
// fails its request at once with a Protocol error quoting it.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { JsonValues } from "../../../src/internal/transport/jsonValues.js"
import { Connection } from "../../../src/internal/transport/streamableHttpConnection.js"
import * as Post from "../../../src/internal/transport/streamableHttpPost.js"
import type * as JsonRpc from "../../../src/JsonRpc.js"
import type * as McpError from "../../../src/McpError.js"
import type { Incoming } from "../../../src/Transport.js"
import { contextOn, fakeWire } from "./fakeWire.js"

const settings = { httpTimeoutMs: 1000, initialDelayMs: 100, maxDelayMs: 1000, maxAttempts: 2 }

const setup = Effect.gen(function*() {
  const { sent, wire } = fakeWire()
  const ctx = yield* contextOn(wire)
  const received: Array<Incoming> = []
  const conn = new Connection(ctx, "http://127.0.0.1:9/mcp", settings, (message) => received.push(message))
  const outcomes: Array<McpError.McpError | undefined> = []
  const owner: Post.Owner = { done: (_, error) => void outcomes.push(error), refused: () => false }
  return { conn, outcomes, owner, received, sent }
})

const call = (id: number): JsonRpc.Request => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "test_logging_tool", _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }
})
const progress = JSON.stringify({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: "t", progress: 50 }
})
const answer = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [] } })
const json = { "content-type": "application/json" }

describe("an application/json body with several messages", () => {
  it.effect("takes each message, newline-delimited, and the answer ends the request", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, received, sent } = yield* setup
      new Post.PostedRequest(conn, call(1), owner)
      sent[0]!.answer(200, json, `${progress}\n${answer(1)}`)
      expect(received.map((m) => "method" in m ? m.method : (m as { id: unknown }).id)).toEqual([
        "notifications/progress",
        1
      ])
      expect(outcomes).toEqual([undefined])
    }))

  it.effect("takes each message as soon as it is complete (a body held open, objects back to back, pretty-printed)", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, received, sent } = yield* setup
      new Post.PostedRequest(conn, call(2), owner)
      sent[0]!.answer(200, json)
      sent[0]!.chunk(progress.slice(0, 20))
      expect(received).toEqual([])
      sent[0]!.chunk(progress.slice(20))
      expect(received).toHaveLength(1)
      sent[0]!.chunk(JSON.stringify(JSON.parse(answer(2)), null, 2))
      expect(received).toHaveLength(2)
      sent[0]!.handler.onEnd()
      expect(outcomes).toEqual([undefined])
    }))

  it.effect("fails the request at once, quoting the body, when the body holds no answer to it", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, sent } = yield* setup
      new Post.PostedRequest(conn, call(3), owner)
      sent[0]!.answer(200, json, `${progress}\n${answer(99)}`)
      expect(outcomes).toHaveLength(1)
      const error = outcomes[0]!
      expect(error.reason._tag).toBe("Protocol")
      expect(error.message).toContain("server 'fixture' answered tools/call with error -32600")
      expect(error.message).toContain("holds no answer to the request")
      expect(error.message).toContain(`"id":99`)
    }))

  it.effect("fails the request at once on a body that is no JSON at all", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, sent } = yield* setup
      new Post.PostedRequest(conn, call(4), owner)
      sent[0]!.answer(200, json, "OK, done")
      expect(outcomes[0]?.message).toContain("OK, done")
    }))
})

describe("JsonValues", () => {
  it("splits values back to back, across pieces, with braces inside strings", () => {
    const values = new JsonValues()
    expect(values.push(`{"a":"}{\\"x"}{"b":`)).toEqual([`{"a":"}{\\"x"}`])
    expect(values.pending).toBeGreaterThan(0)
    expect(values.push(`[1,{"c":2}]}\n  [3]\nstray words\n{`)).toEqual([`{"b":[1,{"c":2}]}`, "[3]", "stray words"])
    expect(values.rest()).toBe("{")
  })
})
