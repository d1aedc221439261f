// Session lockout (issue 24 §3): abandoned sessions never lock newcomers out of an McpServer's
// HTTP endpoint (and so of the gateway's, which is one). A session whose client never comes
// back after initialize ends in seconds; at a cap (in all, per principal, per address) the
// least recently used idle session ends to make room, its client getting 404. On the
// TestClock, through the Web adapter (the neutral core).
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as McpServer from "../src/McpServer.js"
import { hangGuard } from "./support/guard.js"

const URL_ = "http://127.0.0.1/mcp"
type Handler = (request: Request) => Promise<Response>

const serve = (options: McpServer.HttpHandlerOptions = {}) =>
  Effect.gen(function*() {
    const server = yield* McpServer.fromItems({ serverInfo: { name: "sessions", version: "1.0.0" } })
    return yield* McpServer.toWebHandler(server, { path: "/mcp", ...options })
  })

const post = (handler: Handler, body: unknown, headers: Record<string, string> = {}) =>
  Effect.promise(() =>
    handler(
      new Request(URL_, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(body)
      })
    )
  )

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } }
}

// A new session's id (the initialize answered 200).
const open = (handler: Handler, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const response = yield* post(handler, initialize, headers)
    expect(response.status).toBe(200)
    return response.headers.get("mcp-session-id")!
  })

// The status of a ping in session `id`.
const ping = (handler: Handler, id: string, headers: Record<string, string> = {}) =>
  Effect.map(
    post(handler, { jsonrpc: "2.0", id: 2, method: "ping" }, { ...headers, "mcp-session-id": id }),
    (response) => response.status
  )

describe("McpServer HTTP sessions", () => {
  it.scoped("a session whose client never comes back after initialize ends after initializeTimeout", () =>
    Effect.gen(function*() {
      const handler = yield* serve({ initializeTimeout: "5 seconds" })
      const abandoned = yield* open(handler)
      const used = yield* open(handler)
      expect(yield* ping(handler, used)).toBe(200)
      yield* TestClock.adjust("4 seconds")
      yield* TestClock.adjust("2 seconds")
      expect(yield* ping(handler, abandoned)).toBe(404)
      // One that came back is idle only after sessionIdleTimeout (30 minutes).
      expect(yield* ping(handler, used)).toBe(200)
    }))

  it.scoped(
    "1,000 abandoned sessions do not lock a newcomer out: the least recently used idle one ends",
    () =>
      Effect.gen(function*() {
        const handler = yield* serve()
        const abandoned: Array<string> = []
        for (let i = 0; i < 1000; i++) abandoned.push(yield* open(handler))
        const newcomer = yield* open(handler)
        expect(yield* ping(handler, newcomer)).toBe(200)
        // The first opened made room; it gets 404 (and would initialize again), the others stay.
        expect(yield* ping(handler, abandoned[0]!)).toBe(404)
        expect(yield* ping(handler, abandoned[1]!)).toBe(200)
      }),
    // A thousand initializes in process: about 12 ms each on this machine at a load of 17.
    hangGuard(60_000)
  )

  it.scoped("caps the sessions of one principal, ending that principal's least recently used", () =>
    Effect.gen(function*() {
      const auth = { authorization: "Bearer s3cret" }
      const handler = yield* serve({ token: Redacted.make("s3cret"), maxSessions: 10, maxSessionsPerPrincipal: 2 })
      const first = yield* open(handler, auth)
      const second = yield* open(handler, auth)
      yield* TestClock.adjust("1 second")
      expect(yield* ping(handler, first, auth)).toBe(200)
      const third = yield* open(handler, auth)
      expect(yield* ping(handler, second, auth)).toBe(404)
      expect(yield* ping(handler, first, auth)).toBe(200)
      expect(yield* ping(handler, third, auth)).toBe(200)
    }))
})
