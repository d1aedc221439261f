// The HTTP exchange layer on a hand-driven wire: redirects, size caps, error excerpts, the
// SSE sink, and answers that wait for their reader.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as Http from "../../../src/internal/transport/http.js"
import { SseDecoder } from "../../../src/internal/transport/sseDecoder.js"
import { contextOn, fakeWire } from "./fakeWire.js"

const url = "http://127.0.0.1:9/mcp"
const get = { method: "GET" as const, url, headers: {} }

describe("exchange", () => {
  it.effect("follows a same-origin redirect, and refuses one to another origin", () =>
    Effect.gen(function*() {
      const { sent, wire } = fakeWire()
      const ctx = yield* contextOn(wire)
      const statuses: Array<number> = []
      const failures: Array<string> = []
      const handler: Http.Handler = {
        onResponse: (response) => {
          statuses.push(response.status)
          return Http.IGNORE
        },
        onFailure: (error) => failures.push(error.message)
      }
      Http.exchange(ctx, get, "the stream", handler)
      sent[0]!.answer(307, { location: "/moved?x=1" })
      expect(sent[0]!.aborted).toBe(true)
      expect(sent[1]!.request.url).toBe("http://127.0.0.1:9/moved?x=1")
      sent[1]!.answer(200, {}, "")
      expect(statuses).toEqual([200])

      Http.exchange(ctx, get, "the stream", handler)
      sent[2]!.answer(302, { location: "http://example.com/mcp" })
      expect(failures).toEqual([
        `server 'fixture': the stream was redirected to another origin (http://example.com); set redirects: "any" to allow it`
      ])
      expect(sent).toHaveLength(3)
    }))

  it.effect("says where it could not send, without the query", () =>
    Effect.gen(function*() {
      const { sent, wire } = fakeWire()
      const ctx = yield* contextOn(wire)
      const failures: Array<string> = []
      Http.exchange(ctx, { ...get, url: `${url}?token=s3cret` }, "initialize", {
        onResponse: () => Http.IGNORE,
        onFailure: (error) => failures.push(error.message)
      })
      sent[0]!.handler.onError(new Error("connect ECONNREFUSED"))
      expect(failures).toEqual([`server 'fixture': could not send initialize to ${url}: connect ECONNREFUSED`])
    }))
})

describe("sinks", () => {
  const response = (status: number, headers: Record<string, string> = {}) => {
    const aborted = { value: false }
    return { aborted, response: new Http.Response(status, headers, { abort: () => void (aborted.value = true) }) }
  }

  it.effect("a text body is capped: by its declared length at once, else as it grows", () =>
    Effect.gen(function*() {
      const ctx = yield* contextOn(fakeWire().wire, { maxMessageBytes: 8 })
      const errors: Array<unknown> = []
      const target: Http.TextTarget = { onText: () => {}, onError: (error) => void errors.push(error.reason) }
      const declared = response(200, { "content-length": "100" })
      new Http.TextSink(ctx, declared.response, "the answer", target)
      expect(declared.aborted.value).toBe(true)
      const streamed = response(200)
      const sink = new Http.TextSink(ctx, streamed.response, "the answer", target)
      sink.onData(new Uint8Array(5))
      sink.onData(new Uint8Array(5))
      sink.onEnd()
      expect(streamed.aborted.value).toBe(true)
      expect(errors).toMatchObject([
        { _tag: "Limit", what: "the answer", size: 100, limit: 8 },
        { _tag: "Limit", what: "the answer", size: 10, limit: 8 }
      ])
      const texts: Array<string> = []
      const whole = new Http.TextSink(ctx, response(200).response, "the answer", {
        onText: (text) => void texts.push(text),
        onError: () => {}
      })
      whole.onData(new TextEncoder().encode("{\"a\""))
      whole.onData(new TextEncoder().encode(":1}"))
      whole.onEnd()
      expect(texts).toEqual(["{\"a\":1}"])
    }))

  it.effect("an error status keeps the start of its body and the auth challenge", () =>
    Effect.gen(function*() {
      const ctx = yield* contextOn(fakeWire().wire)
      const messages: Array<string> = []
      const { response: answer } = response(401, { "www-authenticate": "Bearer" })
      const sink = Http.statusErrorSink(ctx, answer, "initialize", (error) => messages.push(error.message))
      sink.onData(new TextEncoder().encode("no\n  entry"))
      sink.onEnd()
      expect(messages).toEqual([
        "server 'fixture' answered initialize with HTTP 401: no entry (WWW-Authenticate: Bearer)"
      ])
    }))

  it.effect("an event stream hands on each event in the callback that decoded it, and stops at an oversize one", () =>
    Effect.gen(function*() {
      const ctx = yield* contextOn(fakeWire().wire, { maxMessageBytes: 16 })
      const seen: Array<string> = []
      const ends: Array<unknown> = []
      const { aborted, response: answer } = response(200)
      const sink = new Http.EventSink(ctx, answer, "tools/call", new SseDecoder(16), {
        onEvent: (event) => void seen.push(event.data),
        onStreamEnd: (error) => void ends.push(error?.reason)
      })
      sink.onData(new TextEncoder().encode("data: one\n\nda"))
      expect(seen).toEqual(["one"])
      sink.onData(new TextEncoder().encode("ta: two\n\n"))
      expect(seen).toEqual(["one", "two"])
      sink.onData(new TextEncoder().encode(`data: ${"x".repeat(40)}`))
      expect(aborted.value).toBe(true)
      expect(ends).toMatchObject([{ _tag: "Limit", what: "an event of tools/call", limit: 16 }])
      sink.onEnd()
      expect(ends).toHaveLength(1)
    }))
})

describe("open", () => {
  it.effect("keeps the body that arrives before it is read", () =>
    Effect.gen(function*() {
      const { sent, wire } = fakeWire()
      const ctx = yield* contextOn(wire)
      const fiber = yield* Effect.fork(Http.open(ctx, get, "the stream"))
      yield* Effect.yieldNow()
      sent[0]!.answer(500, {}, "database is locked")
      const opened = yield* fiber
      expect((yield* Http.statusError(ctx, opened, "the stream", 1000)).message).toBe(
        "server 'fixture' answered the stream with HTTP 500: database is locked"
      )
    }))

  it.effect("an error status whose body stalls is reported at the timeout with what came, and hung up", () =>
    Effect.gen(function*() {
      const { sent, wire } = fakeWire()
      const ctx = yield* contextOn(wire)
      const fiber = yield* Effect.fork(Http.open(ctx, get, "the stream"))
      yield* Effect.yieldNow()
      sent[0]!.answer(503)
      sent[0]!.chunk("busy, try")
      const opened = yield* fiber
      const error = yield* Effect.fork(Http.statusError(ctx, opened, "the stream", 1000))
      yield* TestClock.adjust("999 millis")
      expect(error.unsafePoll()).toBe(null)
      yield* TestClock.adjust("1 millis")
      expect((yield* error).message).toBe("server 'fixture' answered the stream with HTTP 503: busy, try")
      expect(sent[0]!.aborted).toBe(true)
    }))

  it.effect("interruption aborts the exchange", () =>
    Effect.gen(function*() {
      const { sent, wire } = fakeWire()
      const ctx = yield* contextOn(wire)
      const fiber = yield* Effect.fork(Http.open(ctx, get, "the stream"))
      yield* Effect.yieldNow()
      yield* fiber.interruptAsFork(fiber.id())
      yield* Effect.yieldNow()
      expect(sent[0]!.aborted).toBe(true)
    }))
})
