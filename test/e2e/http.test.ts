// The Streamable HTTP and legacy HTTP+SSE transports against fixture servers on 127.0.0.1,
// each built to produce one edge case: JSON and SSE answers, sessions expiring, streams
// cut and resumed, the GET stream dropping, auth, silence, oversize and garbage answers.
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as HttpClientUndici from "../../src/HttpClientUndici.js"
import * as McpClient from "../../src/McpClient.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import * as StreamableHttp from "../../src/StreamableHttp.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import { stateOf, until } from "../support/events.js"
import { hangGuard } from "../support/guard.js"
import { echo, json, mcp, type Seen, serve, sse, status } from "../support/httpServer.js"
import { Platform } from "../support/platform.js"

// The stateful Streamable HTTP (2025-11-25, no probe); 2026-07-28 has tests of its own.
const connect = (url: string, options: Partial<StreamableHttp.Options> = {}) =>
  Effect.gen(function*() {
    const transport = yield* StreamableHttp.make({ name: "fixture", url, ...options })
    const client = yield* McpClient.make({ requestTimeout: "10 seconds", protocolVersion: "2025-11-25" }).pipe(
      Effect.provideService(Transport, transport)
    )
    return { client, transport }
  })

const isCall = (request: Seen) => request.body?.method === "tools/call"
const isGet = (request: Seen) => request.method === "GET"

// Collects log lines, to check what a skipped message said.
const capture = () => {
  const lines: Array<string> = []
  const layer = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => lines.push(String(message))))
  return { lines, layer }
}

describe("Streamable HTTP", () => {
  for (const answer of ["json", "sse"] as const) {
    it.scopedLive(`speaks to a server answering with ${answer}, with the session and revision headers`, () =>
      Effect.gen(function*() {
        const fixture = yield* serve(mcp({ answer }).handler)
        const scope = yield* Scope.make()
        const { client, transport } = yield* connect(fixture.url, {
          headers: { authorization: Redacted.make("Bearer s3cret"), "x-team": "core" }
        }).pipe(Scope.extend(scope))
        expect(client.protocolVersion).toBe("2025-11-25")
        expect(transport.kind).toBe("http")
        expect(transport.info()).toEqual({ url: fixture.url, sessionId: "session-1" })
        const result = yield* client.callTool("echo", { text: "hello" })
        expect(firstText(result)).toBe("hello")

        const [initialize, ...rest] = fixture.seen
        expect(initialize!.headers["accept"]).toBe("application/json, text/event-stream")
        expect(initialize!.headers["content-type"]).toBe("application/json")
        expect(initialize!.headers["authorization"]).toBe("Bearer s3cret")
        expect(initialize!.headers["x-team"]).toBe("core")
        expect(initialize!.headers["mcp-session-id"]).toBeUndefined()
        expect(initialize!.headers["mcp-protocol-version"]).toBeUndefined()
        for (const request of rest) {
          expect(request.headers["mcp-session-id"]).toBe("session-1")
          expect(request.headers["mcp-protocol-version"]).toBe("2025-11-25")
        }
        expect(rest.map((request) => request.body?.method ?? request.method)).toEqual([
          "notifications/initialized",
          "GET",
          "tools/list",
          "tools/call"
        ])
        yield* Scope.close(scope, Exit.void)
        const last = fixture.seen.at(-1)!
        expect(last.method).toBe("DELETE")
        expect(last.headers["mcp-session-id"]).toBe("session-1")
      }).pipe(Effect.provide(HttpClientUndici.layer)))
  }

  for (const answer of ["json", "sse"] as const) {
    it.scopedLive(`works on any HttpClient (fetch), answering with ${answer}`, () =>
      Effect.gen(function*() {
        const fixture = yield* serve(mcp({ answer }).handler)
        const { client } = yield* connect(fixture.url)
        expect(firstText(yield* client.callTool("echo", { text: "fetched" }))).toBe("fetched")
        expect(fixture.seen.map((request) => request.body?.method ?? request.method)).toEqual([
          "initialize",
          "notifications/initialized",
          "GET",
          "tools/list",
          "tools/call"
        ])
      }).pipe(Effect.provide(FetchHttpClient.layer)))
  }

  it.scopedLive("a client derived from HttpClientUndici (middleware) is used as given, not bypassed", () =>
    Effect.gen(function*() {
      const fixture = yield* serve(mcp().handler)
      const { client } = yield* connect(fixture.url).pipe(
        Effect.provide(Layer.effect(
          HttpClient.HttpClient,
          Effect.map(HttpClient.HttpClient, HttpClient.mapRequest(HttpClientRequest.setHeader("x-via", "middleware")))
        ))
      )
      expect(firstText(yield* client.callTool("echo", { text: "through" }))).toBe("through")
      expect(fixture.seen.map((request) => request.headers["x-via"])).toEqual(fixture.seen.map(() => "middleware"))
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  for (const [name, layer] of [["undici", HttpClientUndici.layer], ["fetch", FetchHttpClient.layer]] as const) {
    it.scopedLive(`an unreachable server's error names the URL without its credentials or query (${name})`, () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const fixture = yield* serve(mcp().handler).pipe(Scope.extend(scope))
        yield* Scope.close(scope, Exit.void)
        const url = fixture.url.replace("http://", "http://user:s3cret@") + "?token=s3cret"
        const error = failure(yield* Effect.exit(connect(url)))
        expect(error.reason._tag).toBe("Transport")
        expect(error.message).toContain(`server 'fixture': could not send initialize to ${fixture.url}:`)
        expect(error.message).not.toContain("s3cret")
      }).pipe(Effect.provide(layer)))
  }

  it.scopedLive("ends the connection when the server forgets the session (404); the refused request fails with that error", () =>
    Effect.gen(function*() {
      const server = mcp()
      const fixture = yield* serve(server.handler)
      const { client, transport } = yield* connect(fixture.url)
      server.sessions.clear()
      const error = failure(yield* Effect.exit(client.callTool("echo", { text: "a" })))
      // The first request out on the forgotten session is refused (callTool may list first).
      const refused = fixture.seen.at(-1)!.body?.method
      expect(error.reason).toMatchObject({ _tag: "Closed", sessionExpired: true, method: refused })
      expect(error.message).toBe(
        `server 'fixture': the server ended the session (HTTP 404) before answering ${refused}`
      )
      const closed = yield* client.closed
      expect(closed.reason).toMatchObject({ _tag: "Closed", sessionExpired: true })
      expect(
        failure(yield* Effect.exit(transport.send({ jsonrpc: "2.0", method: "notifications/initialized" }))).reason._tag
      )
        .toBe("Closed")
      // The transport neither initializes again nor invents notifications: its owner reconnects.
      expect(fixture.seen.filter((request) => request.body?.method === "initialize")).toHaveLength(1)
      expect(fixture.seen.at(-1)!.body?.method).toBe(refused)
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scoped("resumes a stream cut before its answer with Last-Event-ID, after exactly the server's retry", () =>
    Effect.gen(function*() {
      const server = mcp()
      const fixture = yield* serve((request) => {
        if (isCall(request)) {
          return Effect.succeed(sse([{ id: "e1", retry: 1000, data: "" }, {
            id: "e2",
            event: "message",
            data: {
              jsonrpc: "2.0",
              method: "notifications/progress",
              params: { progressToken: request.body.params._meta?.progressToken ?? 0, progress: 1 }
            }
          }]))
        }
        if (isGet(request) && request.headers["last-event-id"] === "e2") {
          return Effect.succeed(
            sse([{
              id: "e3",
              event: "message",
              data: { jsonrpc: "2.0", id: 2, result: echo({ params: { arguments: { text: "late" } } }) }
            }])
          )
        }
        return server.handler(request)
      })
      const { client } = yield* connect(fixture.url)
      const call = yield* Effect.fork(client.callTool("echo", { text: "x" }))
      yield* fixture.next(isCall)
      const now = yield* TestClock.currentTimeMillis
      const retryAt = now + 1000
      yield* waitForSleep(retryAt)
      yield* TestClock.adjust(999)
      expect(Chunk.toArray(yield* TestClock.sleeps())).toContain(retryAt)
      expect(fixture.seen.filter((request) => isGet(request) && request.headers["last-event-id"] !== undefined))
        .toEqual([])
      yield* TestClock.adjust(1)
      const resumed = yield* fixture.next((request) => isGet(request) && request.headers["last-event-id"] !== undefined)
      expect(resumed.headers["last-event-id"]).toBe("e2")
      expect(resumed.headers["mcp-session-id"]).toBe("session-1")
      expect(firstText(yield* Fiber.join(call))).toBe("late")
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("fails a request whose stream ended with no event id to resume from; the next call works", () =>
    Effect.gen(function*() {
      const server = mcp()
      let cut = true
      const fixture = yield* serve((request) => {
        if (isCall(request) && cut) {
          cut = false
          return Effect.succeed(sse([{ comment: "working" }]))
        }
        return server.handler(request)
      })
      const { client } = yield* connect(fixture.url)
      const error = failure(yield* Effect.exit(client.callTool("echo", { text: "x" })))
      expect(error.reason._tag).toBe("Closed")
      expect(error.message).toBe(
        "server 'fixture': the stream answering tools/call ended before the answer, with no event id to resume from before answering tools/call"
      )
      expect(firstText(yield* client.callTool("echo", { text: "y" }))).toBe("y")
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("gives up resuming after the attempts allowed, with an error, never a hang", () =>
    Effect.gen(function*() {
      const server = mcp()
      const fixture = yield* serve((request) => {
        if (isCall(request)) return Effect.succeed(sse([{ id: "e1", retry: 5, data: "" }]))
        if (isGet(request) && request.headers["last-event-id"] !== undefined) return Effect.succeed(sse([{ retry: 5 }]))
        return server.handler(request)
      })
      const { client } = yield* connect(fixture.url, { reconnect: { maxAttempts: 3 } })
      const error = failure(yield* Effect.exit(client.callTool("echo", { text: "x" })))
      expect(error.message).toContain("lost the stream answering tools/call and could not resume it in 3 attempts")
      expect(fixture.seen.filter((request) => request.headers["last-event-id"] === "e1")).toHaveLength(3)
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("keeps the GET stream of server messages: a dropped stream comes back with Last-Event-ID", () =>
    Effect.gen(function*() {
      const server = mcp()
      const listChanged = { jsonrpc: "2.0", method: "notifications/tools/list_changed" }
      const subscribed = yield* Deferred.make<void>()
      const fixture = yield* serve((request) => {
        if (!isGet(request)) return server.handler(request)
        // The first stream sends one message (once the test listens) and drops; the resumed
        // one sends another and stays.
        return Effect.succeed(
          request.headers["last-event-id"] === undefined
            ? sse([{ id: "g1", retry: 10, event: "message", data: listChanged }], { after: Deferred.await(subscribed) })
            : sse([{
              id: "g2",
              event: "message",
              data: { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "back" } }
            }], { open: true })
        )
      })
      const { client } = yield* connect(fixture.url)
      const notifications = yield* client.subscribe
      yield* Deferred.succeed(subscribed, undefined)
      const first = yield* Queue.take(notifications)
      const second = yield* Queue.take(notifications)
      expect([first.method, second.method]).toEqual(["notifications/tools/list_changed", "notifications/message"])
      const gets = fixture.seen.filter(isGet)
      expect(gets.map((request) => request.headers["last-event-id"])).toEqual([undefined, "g1"])
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("reports an HTTP error status for that request only, with the body's start", () =>
    Effect.gen(function*() {
      const server = mcp()
      let fail = true
      const fixture = yield* serve((request) => {
        if (isCall(request) && fail) {
          fail = false
          return Effect.succeed(status(500, "Internal error:\n  database is locked"))
        }
        return server.handler(request)
      })
      const { client } = yield* connect(fixture.url)
      const error = failure(yield* Effect.exit(client.callTool("echo", { text: "x" })))
      expect(error.reason).toMatchObject({ _tag: "Http", status: 500, method: "tools/call" })
      expect(error.message).toBe(
        "server 'fixture' answered tools/call with HTTP 500: Internal error: database is locked"
      )
      expect(firstText(yield* client.callTool("echo", { text: "y" }))).toBe("y")
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("says what a 401 wants, with the WWW-Authenticate challenge", () =>
    Effect.gen(function*() {
      const fixture = yield* serve(() =>
        Effect.succeed(
          status(401, "", {
            "www-authenticate": `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`
          })
        )
      )
      const error = failure(yield* Effect.exit(connect(fixture.url)))
      expect(error.reason).toMatchObject({ _tag: "Http", status: 401, method: "initialize" })
      expect(error.message).toBe(
        `server 'fixture' answered initialize with HTTP 401 (WWW-Authenticate: Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource")`
      )
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("times out a request the server never answers, cancels it, and stops reading its answer", () =>
    Effect.gen(function*() {
      const server = mcp()
      const fixture = yield* serve((request) =>
        isCall(request) && request.body.params.arguments.text === "hang" ? Effect.never : server.handler(request)
      )
      const { client } = yield* connect(fixture.url)
      const error = failure(yield* Effect.exit(client.callTool("echo", { text: "hang" }, { timeout: "200 millis" })))
      expect(error.reason).toMatchObject({ _tag: "Timeout", method: "tools/call", afterMs: 200 })
      const cancelled = yield* fixture.next((request) => request.body?.method === "notifications/cancelled")
      expect(cancelled.body.params.requestId).toBe(fixture.seen.find(isCall)!.body.id)
      // The server sees the client hang up.
      yield* fixture.hangup
      expect(firstText(yield* client.callTool("echo", { text: "y" }))).toBe("y")
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("fails an oversize answer (JSON body or SSE event) with a Limit error; the next call works", () =>
    Effect.gen(function*() {
      const server = mcp()
      const big = "x".repeat(4096)
      const fixture = yield* serve((request) => {
        if (isCall(request) && request.body.params.arguments.text === "json") {
          return Effect.succeed(
            json({ jsonrpc: "2.0", id: request.body.id, result: echo({ params: { arguments: { text: big } } }) })
          )
        }
        if (isCall(request) && request.body.params.arguments.text === "sse") {
          return Effect.succeed(
            sse([{
              id: "1",
              event: "message",
              data: { jsonrpc: "2.0", id: request.body.id, result: echo({ params: { arguments: { text: big } } }) }
            }])
          )
        }
        return server.handler(request)
      })
      const { client } = yield* connect(fixture.url, { maxMessageBytes: 2048 })
      const viaJson = failure(yield* Effect.exit(client.callTool("echo", { text: "json" })))
      expect(viaJson.reason).toMatchObject({ _tag: "Limit", what: "the answer to tools/call", limit: 2048 })
      expect(viaJson.message).toMatch(/^server 'fixture': the answer to tools\/call of \d+ exceeds the limit of 2048$/)
      const viaSse = failure(yield* Effect.exit(client.callTool("echo", { text: "sse" })))
      expect(viaSse.reason).toMatchObject({ _tag: "Limit", what: "an event of tools/call", limit: 2048 })
      expect(firstText(yield* client.callTool("echo", { text: "fine" }))).toBe("fine")
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("skips garbage events and keep-alives with a warning naming the server", () => {
    const logs = capture()
    return Effect.gen(function*() {
      const server = mcp()
      const fixture = yield* serve((request) =>
        isCall(request)
          ? Effect.succeed(sse([
            { comment: "keep-alive" },
            { event: "message", data: "this is not json" },
            { event: "message", data: { hello: "world" } },
            { event: "ping", data: "ignored: not a message event" },
            { id: "9", event: "message", data: { jsonrpc: "2.0", id: request.body.id, result: echo(request.body) } }
          ]))
          : server.handler(request)
      )
      const { client } = yield* connect(fixture.url)
      expect(firstText(yield* client.callTool("echo", { text: "ok" }))).toBe("ok")
      expect(logs.lines).toEqual([
        "server 'fixture' sent an event that is not JSON; skipped: this is not json",
        `server 'fixture' sent an event that is not a JSON-RPC message: "jsonrpc" must be "2.0"; skipped: {"hello":"world"}`
      ])
    }).pipe(Effect.provide(HttpClientUndici.layer), Effect.provide(logs.layer))
  })

  it.scopedLive("follows a same-origin redirect and refuses one to another origin", () =>
    Effect.gen(function*() {
      const server = mcp()
      const elsewhere = yield* serve(server.handler)
      const fixture = yield* serve((request) => {
        if (request.url === "/old") return Effect.succeed(status(307, "", { location: "/mcp" }))
        if (request.url === "/away") return Effect.succeed(status(308, "", { location: elsewhere.url }))
        return server.handler(request)
      })
      const base = fixture.url.replace("/mcp", "")
      const { client } = yield* connect(`${base}/old`)
      expect(firstText(yield* client.callTool("echo", { text: "moved" }))).toBe("moved")
      const error = failure(yield* Effect.exit(connect(`${base}/away`)))
      expect(error.message).toBe(
        `server 'fixture': initialize was redirected to another origin (http://127.0.0.1:${elsewhere.port}); set redirects: "any" to allow it`
      )
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("ends the connection when the server cannot be reached, naming the URL", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const fixture = yield* serve(mcp().handler).pipe(Scope.extend(scope))
      yield* Scope.close(scope, Exit.void)
      const error = failure(yield* Effect.exit(connect(fixture.url)))
      expect(error.reason._tag).toBe("Transport")
      expect(error.message).toContain(`server 'fixture': could not send initialize to ${fixture.url}:`)
      expect(error.message).toContain("ECONNREFUSED")
    }).pipe(Effect.provide(HttpClientUndici.layer)))
})

describe("legacy HTTP+SSE", () => {
  it.scopedLive("refuses an endpoint event that points to another origin", () =>
    Effect.gen(function*() {
      const fixture = yield* serve((request) =>
        Effect.succeed(
          request.method === "GET"
            ? sse([{ event: "endpoint", data: "http://example.com/messages?session=1" }], { open: true })
            : status(405)
        )
      )
      const error = failure(yield* Effect.exit(connect(fixture.url)))
      expect(error.message).toBe(
        "server 'fixture': the endpoint event points to another origin (http://example.com); refused before answering initialize"
      )
    }).pipe(Effect.provide(HttpClientUndici.layer)))
})

describe("fleet with HTTP servers", () => {
  it.scopedLive("a server that wants credentials is NeedsAuth; secrets stay out of its status", () =>
    Effect.gen(function*() {
      const server = mcp()
      const fixture = yield* serve((request) =>
        request.headers["authorization"] === "Bearer right"
          ? server.handler(request)
          : Effect.succeed(status(401, "", { "www-authenticate": "Bearer" }))
      )
      const fleet = yield* ServerRegistry.make()
      const events = yield* fleet.subscribe
      const spec = (token: string) => ({
        name: "remote",
        transport: {
          type: "http" as const,
          url: fixture.url,
          headers: { authorization: Redacted.make(`Bearer ${token}`) }
        }
      })
      yield* fleet.reconcile([spec("wrong")])
      const changed = yield* until(events, stateOf("remote", "NeedsAuth"))
      expect(changed.state._tag === "NeedsAuth" && changed.state.error.message).toBe(
        "server 'remote' answered server/discover with HTTP 401 (WWW-Authenticate: Bearer)"
      )
      const [status_] = yield* fleet.status
      expect(JSON.stringify(status_)).not.toContain("wrong")
      // The refused probe is all that was sent: a refusal of our credentials is no fallback.
      expect(fixture.seen.map((request) => request.body?.method)).toEqual(["server/discover"])
      yield* fleet.reconcile([spec("right")])
      yield* until(events, stateOf("remote", "Ready"))
      const result = yield* fleet.callTool("mcp__remote__echo", { text: "in" })
      expect(firstText(result)).toBe("in")
    }).pipe(Effect.provide(Platform)))

  for (const code of [401, 403]) {
    it.scopedLive(`a ${code} after start-up puts the server in NeedsAuth; the refused call fails with it`, () =>
      Effect.gen(function*() {
        const server = mcp()
        let revoked = false
        const fixture = yield* serve((request) =>
          revoked && request.method === "POST"
            ? Effect.succeed(status(code, "", { "www-authenticate": "Bearer" }))
            : server.handler(request)
        )
        const fleet = yield* ServerRegistry.make()
        const events = yield* fleet.subscribe
        yield* fleet.reconcile([{ name: "remote", transport: { type: "http", url: fixture.url } }])
        yield* until(events, stateOf("remote", "Ready"))
        revoked = true
        const refused = failure(yield* Effect.exit(fleet.callTool("mcp__remote__echo", { text: "x" })))
        expect(refused.reason).toMatchObject({ _tag: "Http", status: code, method: "tools/call" })
        const changed = yield* until(events, stateOf("remote", "NeedsAuth")).pipe(Effect.timeout(hangGuard(10_000)))
        expect(changed.state._tag === "NeedsAuth" && changed.state.error.message).toBe(
          `server 'remote' answered tools/call with HTTP ${code} (WWW-Authenticate: Bearer)`
        )
        // Not asked again until its config changes or it is restarted.
        const later = failure(yield* Effect.exit(fleet.callTool("mcp__remote__echo", { text: "y" })))
        expect(later.reason).toMatchObject({ _tag: "Unavailable", state: "NeedsAuth" })
        expect(fixture.seen.filter((request) => request.body?.method === "initialize")).toHaveLength(1)
      }).pipe(Effect.provide(Platform)))
  }

  it.scopedLive("after the server forgets the session, the fleet reconnects on a new session and calls work again", () =>
    Effect.gen(function*() {
      const server = mcp()
      const fixture = yield* serve(server.handler)
      const fleet = yield* ServerRegistry.make({
        restart: { initialDelay: "20 millis", maxDelay: "100 millis", factor: 2, jitter: 0, stableAfter: "1 minute" }
      })
      const events = yield* fleet.subscribe
      yield* fleet.reconcile([{ name: "remote", transport: { type: "http", url: fixture.url } }])
      yield* until(events, stateOf("remote", "Ready"))
      server.sessions.clear()
      // The call refused for the forgotten session fails with it, unless the fleet sends it again.
      const first = yield* Effect.exit(fleet.callTool("mcp__remote__echo", { text: "lost" }))
      if (Exit.isFailure(first)) expect(failure(first).reason).toMatchObject({ _tag: "Closed", sessionExpired: true })
      yield* until(events, stateOf("remote", "Ready"))
      expect(firstText(yield* fleet.callTool("mcp__remote__echo", { text: "again" }))).toBe("again")
      const initializes = fixture.seen.filter((request) => request.body?.method === "initialize")
      expect(initializes).toHaveLength(2)
      expect(initializes[1]!.headers["mcp-session-id"]).toBeUndefined()
      expect(fixture.seen.filter((request) => request.body?.method === "tools/list").length).toBeGreaterThanOrEqual(2)
    }).pipe(Effect.provide(Platform)))

  it.scopedLive("reconnects a server that goes away and comes back, and refreshes its catalog", () =>
    Effect.gen(function*() {
      const first = yield* Scope.make()
      const fixture = yield* serve(mcp({ tools: ["a"] }).handler).pipe(Scope.extend(first))
      const fleet = yield* ServerRegistry.make({
        restart: { initialDelay: "20 millis", maxDelay: "100 millis", factor: 2, jitter: 0, stableAfter: "1 minute" }
      })
      const events = yield* fleet.subscribe
      yield* fleet.reconcile([{ name: "remote", transport: { type: "http", url: fixture.url } }])
      yield* until(events, stateOf("remote", "Ready"))
      yield* Scope.close(first, Exit.void)
      const error = failure(yield* Effect.exit(fleet.callTool("mcp__remote__a", { text: "x" })))
      expect(error.reason._tag).toBe("Transport")
      yield* until(events, stateOf("remote", "Failed"))
      yield* serve(mcp({ tools: ["a", "b"] }).handler, fixture.port)
      // The new lists are in place before the server is Ready again.
      const added = yield* until(
        events,
        (event): event is Extract<typeof event, { _tag: "ToolsChanged" }> =>
          event._tag === "ToolsChanged" && event.server === "remote"
      )
      expect(added.added.map((tool) => tool.name)).toEqual(["b"])
      yield* until(events, stateOf("remote", "Ready"))
      expect(firstText(yield* fleet.callTool("mcp__remote__b", { text: "back" }))).toBe("back")
    }).pipe(Effect.provide(Platform)))
})

// Waits until some fiber sleeps until `at` on the TestClock: the client has read the end
// of the stream and is waiting to resume it.
const waitForSleep = (at: number) =>
  Effect.promise(() => new Promise((resolve) => setImmediate(resolve))).pipe(
    Effect.zipRight(TestClock.sleeps()),
    Effect.repeat({ until: (sleeps) => Chunk.some(sleeps, (wake) => wake === at) })
  )
