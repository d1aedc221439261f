// The pieces of a Streamable HTTP connection on a hand-driven wire: the session headers,
// the POST exchange (JSON, event stream, 202, error statuses, a forgotten session), and a
// stream resumed with Last-Event-ID on the TestClock.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import type * as Http from "../../../src/internal/transport/http.js"
import { Connection } from "../../../src/internal/transport/streamableHttpConnection.js"
import * as Post from "../../../src/internal/transport/streamableHttpPost.js"
import { delayMs } from "../../../src/internal/transport/streamableHttpStream.js"
import type * as JsonRpc from "../../../src/JsonRpc.js"
import type * as McpError from "../../../src/McpError.js"
import { BrokenAnswer, type Incoming } from "../../../src/Transport.js"
import { contextOn, fakeWire } from "./fakeWire.js"

const settings = { httpTimeoutMs: 1000, initialDelayMs: 100, maxDelayMs: 1000, maxAttempts: 2 }

const setup = (overrides: Partial<Http.Context> = {}) =>
  Effect.gen(function*() {
    const { sent, wire } = fakeWire()
    const ctx = yield* contextOn(wire, overrides)
    const received: Array<Incoming> = []
    const conn = new Connection(ctx, "http://127.0.0.1:9/mcp", settings, (message) => received.push(message))
    const outcomes: Array<McpError.McpError | undefined> = []
    const refusals: Array<number> = []
    const owner = (takeOver = false): Post.Owner => ({
      done: (_, error) => void outcomes.push(error),
      refused: (_, status) => {
        refusals.push(status)
        return takeOver
      }
    })
    return { conn, ctx, outcomes, owner, received, refusals, sent }
  })

// Lets forked fibers (timeouts, resumptions) run up to their next wait.
const settle = Effect.repeatN(Effect.yieldNow(), 20)

const call = (id: number): JsonRpc.Request => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo" } })
const answer = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [] } })

describe("session headers", () => {
  it.effect("carry nothing of a session before initialize, then its id and revision", () =>
    Effect.gen(function*() {
      const { conn } = yield* setup()
      const before = conn.post
      expect(before).toEqual({
        authorization: "Bearer s3cret",
        accept: "application/json, text/event-stream",
        "content-type": "application/json"
      })
      expect(conn.post).toBe(before)
      conn.initializeId = 0
      conn.setSession("session-1", undefined)
      conn.deliver({ jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-11-25" } })
      expect(conn.post).toMatchObject({ "mcp-session-id": "session-1", "mcp-protocol-version": "2025-11-25" })
      expect(conn.headers({ accept: "text/event-stream" })).toEqual({
        authorization: "Bearer s3cret",
        accept: "text/event-stream",
        "mcp-session-id": "session-1",
        "mcp-protocol-version": "2025-11-25"
      })
      // Only the answer to initialize names the revision.
      conn.deliver({ jsonrpc: "2.0", id: 7, result: { protocolVersion: "1999-01-01" } })
      expect(conn.protocolVersion).toBe("2025-11-25")
    }))

  it.effect("of a 2026-07-28 request: made once per method and target, per call for a tool with mirrored arguments", () =>
    Effect.gen(function*() {
      const { conn } = yield* setup()
      const modern = (method: string, params: Record<string, unknown>): JsonRpc.Request => ({
        jsonrpc: "2.0",
        id: 1,
        method,
        params
      })
      const echo = conn.requestHeaders(modern("tools/call", { name: "echo", arguments: { text: "a" } }), "2026-07-28")
      expect(echo).toEqual({
        authorization: "Bearer s3cret",
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "echo"
      })
      expect(conn.requestHeaders(modern("tools/call", { name: "echo", arguments: { text: "b" } }), "2026-07-28"))
        .toBe(echo)
      const other = conn.requestHeaders(modern("tools/call", { name: "é", arguments: {} }), "2026-07-28")
      expect(other["mcp-name"]).toBe("=?base64?w6k=?=")
      const list = conn.requestHeaders(modern("tools/list", {}), "2026-07-28")
      expect(list).not.toHaveProperty("mcp-name")
      expect(conn.requestHeaders(modern("tools/list", { cursor: "c" }), "2026-07-28")).toBe(list)
      // Once the tool mirrors an argument, each call's headers carry its own value.
      conn.toolMirrors = new Map([["echo", [{ path: ["text"], header: "mcp-param-text" }]]])
      const first = conn.requestHeaders(modern("tools/call", { name: "echo", arguments: { text: "a" } }), "2026-07-28")
      const second = conn.requestHeaders(modern("tools/call", { name: "echo", arguments: { text: "b" } }), "2026-07-28")
      expect([first["mcp-param-text"], second["mcp-param-text"]]).toEqual(["a", "b"])
      // A request of an earlier revision gets the session's headers.
      expect(conn.requestHeaders(call(2), undefined)).toBe(conn.post)
    }))
})

describe("POST exchange", () => {
  it.effect("a JSON answer is delivered in the callback that read it", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, received, sent } = yield* setup()
      new Post.PostedRequest(conn, call(1), owner())
      expect(JSON.parse(sent[0]!.request.body!)).toEqual(call(1))
      sent[0]!.answer(200, { "content-type": "application/json" }, answer(1))
      expect(received).toEqual([JSON.parse(answer(1))])
      expect(outcomes).toEqual([undefined])
    }))

  it.effect("an event-stream answer delivers each message as its event is decoded", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, received, sent } = yield* setup()
      new Post.PostedRequest(conn, call(2), owner())
      sent[0]!.answer(200, { "content-type": "text/event-stream" })
      sent[0]!.chunk(
        `id: 1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n`
      )
      expect(received).toHaveLength(1)
      sent[0]!.chunk(`id: 2\ndata: ${answer(2)}\n\n`)
      expect(received).toHaveLength(2)
      sent[0]!.handler.onEnd()
      expect(outcomes).toEqual([undefined])
    }))

  it.effect("a broken answer in a JSON body or an event is delivered as a BrokenAnswer, and ends the exchange", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, received, sent } = yield* setup()
      const broken = (id: number) => `{"jsonrpc":"2.0","id":${id},"result":1,"error":{}}`
      new Post.PostedRequest(conn, call(4), owner())
      sent[0]!.answer(200, { "content-type": "application/json" }, broken(4))
      new Post.PostedRequest(conn, call(5), owner())
      sent[1]!.answer(200, { "content-type": "text/event-stream" })
      sent[1]!.chunk(`data: ${broken(5)}\n\n`)
      // No event id to resume from: the stream ending is still no error, as the answer came.
      sent[1]!.handler.onEnd()
      expect(received.map((message) => message instanceof BrokenAnswer ? message.id : message)).toEqual([4, 5])
      expect(outcomes).toEqual([undefined, undefined])
    }))

  it.effect("an error status fails the request with an Http error; a 404 in a session ends it", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, sent } = yield* setup()
      new Post.PostedRequest(conn, call(3), owner())
      sent[0]!.answer(500, {}, "boom")
      conn.setSession("session-1", "2025-11-25")
      new Post.PostedRequest(conn, call(4), owner())
      sent[1]!.answer(404, {}, "")
      expect(outcomes.map((error) => error?.reason)).toMatchObject([
        { _tag: "Http", status: 500, method: "tools/call", body: "boom" },
        { _tag: "Closed", sessionExpired: true, message: "the server ended the session (HTTP 404)" }
      ])
    }))

  it.effect("a refused initialize may be taken over (the fallback), and is then not failed", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, refusals, sent } = yield* setup()
      new Post.PostedRequest(conn, { jsonrpc: "2.0", id: 0, method: "initialize", params: {} }, owner(true))
      sent[0]!.answer(405, {}, "")
      expect(refusals).toEqual([405])
      expect(outcomes).toEqual([])
    }))

  it.effect("a notification succeeds once accepted (202)", () =>
    Effect.gen(function*() {
      const { conn, sent } = yield* setup()
      const fiber = yield* Effect.fork(
        Post.notify(conn, { jsonrpc: "2.0", method: "notifications/initialized" }, "initialized")
      )
      yield* settle
      sent[0]!.answer(202, {}, "")
      yield* Fiber.join(fiber)
    }))
})

describe("stream resumption", () => {
  it("waits the server's retry, else a doubling backoff up to the maximum", () => {
    expect(delayMs(settings, 1, 2500)).toBe(2500)
    expect([1, 2, 3, 4, 5].map((attempt) => delayMs(settings, attempt, undefined))).toEqual([100, 200, 400, 800, 1000])
  })

  it.effect("resumes a stream that ended before its answer with Last-Event-ID, after the server's retry", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, received, sent } = yield* setup()
      conn.setSession("session-1", "2025-11-25")
      new Post.PostedRequest(conn, call(5), owner())
      sent[0]!.answer(200, { "content-type": "text/event-stream" }, "id: e1\nretry: 300\ndata:\n\n")
      yield* TestClock.adjust(299)
      expect(sent).toHaveLength(1)
      yield* TestClock.adjust(1)
      yield* settle
      expect(sent[1]!.request).toMatchObject({
        method: "GET",
        headers: { "last-event-id": "e1", "mcp-session-id": "session-1", accept: "text/event-stream" }
      })
      sent[1]!.answer(200, { "content-type": "text/event-stream" })
      sent[1]!.chunk(`id: e2\ndata: ${answer(5)}\n\n`)
      sent[1]!.handler.onEnd()
      yield* settle
      expect(received).toEqual([JSON.parse(answer(5))])
      expect(outcomes).toEqual([undefined])
    }))

  it.effect("fails after the attempts allowed", () =>
    Effect.gen(function*() {
      const { conn, outcomes, owner, sent } = yield* setup()
      new Post.PostedRequest(conn, call(6), owner())
      sent[0]!.answer(200, { "content-type": "text/event-stream" }, "id: e1\ndata:\n\n")
      for (let attempt = 1; attempt <= settings.maxAttempts; attempt++) {
        yield* TestClock.adjust(delayMs(settings, attempt, undefined))
        yield* settle
        sent[attempt]!.answer(200, { "content-type": "text/event-stream" }, ": nothing\n\n")
        yield* settle
      }
      yield* TestClock.adjust(10_000)
      expect(sent).toHaveLength(1 + settings.maxAttempts)
      expect(outcomes.map((error) => error?.message)).toEqual([
        "server 'fixture': lost the stream answering tools/call and could not resume it in 2 attempts"
      ])
    }))
})
