// The gateway's HTTP edge with raw requests, in front of in-memory fake servers: answers as
// JSON or SSE, batches, a dropped stream resumed with Last-Event-ID, the GET stream, and the
// checks on headers (Accept, Content-Type, Host, Origin, the revision) and idle sessions.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as net from "node:net"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import type * as ServerSpec from "../../src/ServerSpec.js"
import * as FakeServer from "../../src/testing/FakeServer.js"
import { text } from "../../src/testing/Results.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"

// A gateway over HTTP fronting `servers`, ready, on a free port; all of it lives as long as
// the test's Scope.
// A server with one tool, `a`, answering "a".
const alphaA = () =>
  FakeServer.spec({
    name: "alpha",
    tools: [{ tool: { name: "a", inputSchema: { type: "object" } }, call: () => Effect.succeed(text("a")) }]
  })

const gateway = (servers: ReadonlyArray<ServerSpec.ServerSpec>, options: Partial<NodeGateway.HttpOptions> = {}) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      Policy.layer({}).pipe(Layer.provideMerge(ServerRegistry.layer()), Layer.provide(Platform))
    )
    return yield* Effect.gen(function*() {
      const registry = yield* ServerRegistry.ServerRegistry
      yield* registry.reconcile(servers)
      yield* registry.awaitReady({ servers: "settled" })
      return yield* NodeGateway.serveHttp({ port: 0, ...options })
    }).pipe(Effect.provide(context))
  })

const headers = (session?: string, extra: Record<string, string> = {}) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  ...(session === undefined ? {} : { "mcp-session-id": session }),
  ...extra
})

const post = (url: string, body: unknown, session?: string, extra: Record<string, string> = {}) =>
  Effect.promise((signal) =>
    fetch(url, { method: "POST", headers: headers(session, extra), body: JSON.stringify(body), signal })
  )

const initialize = (id = 0) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
})

const open = (url: string) =>
  Effect.gen(function*() {
    const response = yield* post(url, initialize())
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    const session = response.headers.get("mcp-session-id")!
    yield* Effect.promise(() => response.text())
    expect((yield* post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, session)).status).toBe(202)
    return session
  })

interface SseEvent {
  readonly id?: string
  readonly retry?: string
  readonly data: string
}

// Reads SSE events from a body until `stop` says enough; returns them and the reader, still open.
const readEvents = (body: ReadableStream<Uint8Array>, stop: (events: ReadonlyArray<SseEvent>) => boolean) =>
  Effect.promise(async () => {
    const reader = body.getReader()
    const decoder = new TextDecoder()
    const events: Array<SseEvent> = []
    let buffer = ""
    while (!stop(events)) {
      const { done, value } = await reader.read()
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      let end: number
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const fields: Record<string, string> = {}
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue
          const colon = line.indexOf(":")
          fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, "")
        }
        if (Object.keys(fields).length > 0) events.push({ ...fields, data: fields.data ?? "" })
      }
    }
    return { events, reader }
  })

const json = (event: SseEvent) => JSON.parse(event.data)

describe("Gateway HTTP edge", () => {
  it.scopedLive("a tool call that sends progress is answered on an SSE stream that starts with a priming event; one answered at once, and other requests, with JSON; batches with a batch", () =>
    Effect.gen(function*() {
      const url = yield* gateway([
        FakeServer.spec({
          name: "alpha",
          tools: [{
            tool: { name: "steps", inputSchema: { type: "object" } },
            call: (_, context) => Effect.zipRight(context.progress(1, 2, "half"), Effect.succeed(text("done")))
          }, {
            tool: { name: "quick", inputSchema: { type: "object" } },
            call: () => Effect.succeed(text("now"))
          }]
        })
      ])
      const session = yield* open(url)
      const call = yield* post(url, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "mcp__alpha__steps", arguments: {}, _meta: { progressToken: "p1" } }
      }, session)
      expect(call.headers.get("content-type")).toContain("text/event-stream")
      const { events } = yield* readEvents(call.body!, () => false)
      expect(events[0]).toMatchObject({ id: expect.stringMatching(/:0$/), retry: "1000", data: "" })
      expect(json(events[1]!)).toMatchObject({
        method: "notifications/progress",
        params: { progressToken: "p1", progress: 1, total: 2, message: "half" }
      })
      expect(json(events[2]!)).toMatchObject({ id: 1, result: { content: [{ type: "text", text: "done" }] } })
      expect(events).toHaveLength(3)

      // Without progress, an answer that comes at once is one JSON body: nothing to stream.
      const quick = yield* post(url, {
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "mcp__alpha__quick", arguments: {} }
      }, session)
      expect(quick.headers.get("content-type")).toContain("application/json")
      expect(yield* Effect.promise(() => quick.json())).toMatchObject({ id: 5, result: { content: [{ text: "now" }] } })

      const listed = yield* post(url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, session)
      expect(listed.headers.get("content-type")).toContain("application/json")
      expect(yield* Effect.promise(() => listed.json())).toMatchObject({
        id: 2,
        result: { tools: [{ name: "mcp__alpha__steps" }, { name: "mcp__alpha__quick" }] }
      })

      const batch = yield* post(url, [{ jsonrpc: "2.0", id: 3, method: "ping" }, {
        jsonrpc: "2.0",
        id: 4,
        method: "nope"
      }], session)
      const answers = (yield* Effect.promise(() => batch.json())) as Array<any>
      expect(answers.map((answer) => answer.id).sort()).toEqual([3, 4])
      expect(answers.find((answer) => answer.id === 4).error.code).toBe(-32601)
    }))

  it.scopedLive("a POST stream cut before its answer is resumed by a GET with Last-Event-ID", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const url = yield* gateway([
        FakeServer.spec({
          name: "alpha",
          tools: [{
            tool: { name: "wait", inputSchema: { type: "object" } },
            call: () => Effect.as(Deferred.await(release), text("late"))
          }]
        })
      ])
      const session = yield* open(url)
      const abort = new AbortController()
      const call = yield* Effect.promise(() =>
        fetch(url, {
          method: "POST",
          headers: headers(session),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 7,
            method: "tools/call",
            params: { name: "mcp__alpha__wait", arguments: {} }
          }),
          signal: abort.signal
        })
      )
      const { events } = yield* readEvents(call.body!, (seen) => seen.length === 1)
      const priming = events[0]!.id!
      abort.abort()
      yield* Deferred.succeed(release, undefined)
      const resumed = yield* Effect.promise(() =>
        fetch(url, { headers: { accept: "text/event-stream", "mcp-session-id": session, "last-event-id": priming } })
      )
      expect(resumed.status).toBe(200)
      const rest = yield* readEvents(resumed.body!, () => false)
      expect(rest.events.map(json)).toEqual([{
        jsonrpc: "2.0",
        id: 7,
        result: { content: [{ type: "text", text: "late" }] }
      }])
    }))

  it.scopedLive("a second GET stream is 409; Accept, Content-Type, Host and Origin are checked; allowed Origins get CORS", () =>
    Effect.gen(function*() {
      const url = yield* gateway([
        alphaA()
      ], {
        allowedOrigins: ["https://app.example.com"]
      })
      const session = yield* open(url)
      const stream = yield* Effect.promise(() =>
        fetch(url, { headers: { accept: "text/event-stream", "mcp-session-id": session } })
      )
      expect(stream.status).toBe(200)
      const second = yield* Effect.promise(() =>
        fetch(url, { headers: { accept: "text/event-stream", "mcp-session-id": session } })
      )
      expect(second.status).toBe(409)

      const noAccept = yield* Effect.promise(() =>
        fetch(url, { headers: { accept: "application/json", "mcp-session-id": session } })
      )
      expect(noAccept.status).toBe(406)
      const badType = yield* post(url, initialize(), undefined, { "content-type": "text/plain" })
      expect(badType.status).toBe(415)
      const parse = yield* Effect.promise(() =>
        fetch(url, { method: "POST", headers: headers(session), body: "{not json" })
      )
      expect(parse.status).toBe(400)
      expect(yield* Effect.promise(() => parse.json())).toMatchObject({ error: { code: -32700 } })
      const allowed = yield* post(url, initialize(), undefined, { origin: "https://app.example.com" })
      expect(allowed.status).toBe(200)
      expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example.com")
      expect(allowed.headers.get("access-control-expose-headers")).toBe("mcp-session-id, www-authenticate")
      const preflight = yield* Effect.promise(() =>
        fetch(url, {
          method: "OPTIONS",
          headers: { origin: "https://app.example.com", "access-control-request-method": "POST" }
        })
      )
      expect(preflight.status).toBe(204)
      expect(preflight.headers.get("access-control-allow-headers")).toContain("mcp-session-id")
      expect((yield* post(url, initialize(), undefined, { origin: "https://evil.example.com" })).status).toBe(403)
      // A rebinding attack's request names the attacker's host.
      const host = yield* Effect.promise(() =>
        new Promise<number>((resolve, reject) => {
          const { hostname, pathname, port } = new URL(url)
          import("node:http").then((http) =>
            http.request({
              hostname,
              port,
              path: pathname,
              method: "POST",
              headers: { ...headers(), host: "evil.example.com" }
            }, (res) => {
              res.resume()
              resolve(res.statusCode!)
            }).on("error", reject).end(JSON.stringify(initialize()))
          )
        })
      )
      expect(host).toBe(403)
      yield* Effect.promise(() => stream.body!.cancel())
    }))

  it.scopedLive("methods named after Object.prototype members are -32601 over HTTP, and the session goes on", () =>
    Effect.gen(function*() {
      const url = yield* gateway([
        alphaA()
      ])
      const session = yield* open(url)
      const methods = ["constructor", "__proto__", "toString", "hasOwnProperty"]
      for (const [i, method] of methods.entries()) {
        const answer = yield* post(url, { jsonrpc: "2.0", id: i, method, params: {} }, session)
        expect(answer.status).toBe(200)
        expect(yield* Effect.promise(() => answer.json())).toMatchObject({ id: i, error: { code: -32601 } })
      }
      const batch = yield* post(url, methods.map((method, i) => ({ jsonrpc: "2.0", id: 10 + i, method })), session)
      const answers = (yield* Effect.promise(() => batch.json())) as Array<any>
      expect(answers.map((answer) => answer.error.code)).toEqual([-32601, -32601, -32601, -32601])
      // A tool named so is unknown, and its answer, ready at once, comes as JSON.
      const call = yield* post(url, {
        jsonrpc: "2.0",
        id: 20,
        method: "tools/call",
        params: { name: "__proto__", arguments: {} }
      }, session)
      expect(yield* Effect.promise(() => call.json())).toMatchObject({ id: 20, error: { code: -32602 } })
      // A resumption naming a stream after a prototype member finds none.
      const resumed = yield* Effect.promise(() =>
        fetch(url, {
          headers: { accept: "text/event-stream", "mcp-session-id": session, "last-event-id": "constructor:0" }
        })
      )
      expect(resumed.status).toBe(200)
      yield* Effect.promise(() => resumed.body!.cancel())
      const ping = yield* post(url, { jsonrpc: "2.0", id: 30, method: "ping" }, session)
      expect(yield* Effect.promise(() => ping.json())).toEqual({ jsonrpc: "2.0", id: 30, result: {} })
      // An unknown session named after a prototype member is 404.
      expect((yield* post(url, { jsonrpc: "2.0", id: 31, method: "ping" }, "constructor")).status).toBe(404)
    }))

  it.scopedLive("layerHttp serves for as long as the layer lives", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const probe = net.createServer().listen(0, "127.0.0.1", () => {
            const { port } = probe.address() as net.AddressInfo
            probe.close(() => resolve(port))
          })
        })
      )
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(
        NodeGateway.layerHttp({ port }).pipe(
          Layer.provide(Policy.layer({}).pipe(Layer.provideMerge(ServerRegistry.layer()), Layer.provide(Platform)))
        ),
        scope
      )
      const url = `http://127.0.0.1:${port}/mcp`
      const session = yield* open(url)
      const ping = yield* post(url, { jsonrpc: "2.0", id: 1, method: "ping" }, session)
      expect(yield* Effect.promise(() => ping.json())).toEqual({ jsonrpc: "2.0", id: 1, result: {} })
      yield* Scope.close(scope, Exit.void)
      const refused = yield* Effect.either(
        Effect.tryPromise(() => fetch(url, { method: "POST", headers: headers(), body: JSON.stringify(initialize()) }))
      )
      expect(refused._tag).toBe("Left")
    }))

  it.scopedLive("a body over the limit is 413, announced or not; another path is 404; a port in use fails to listen", () =>
    Effect.gen(function*() {
      const url = yield* gateway([], { maxMessageBytes: 1024 })
      const session = yield* open(url)
      const big = { jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(4096) } }
      const announced = yield* post(url, big, session)
      expect(announced.status).toBe(413)
      expect(yield* Effect.promise(() => announced.json())).toMatchObject({ error: { code: -32600 } })
      // Sent in chunks, with no length announced: the limit holds on what is read.
      const chunks = new ReadableStream({
        start: (controller) => {
          const bytes = new TextEncoder().encode(JSON.stringify(big))
          for (let i = 0; i < bytes.length; i += 512) controller.enqueue(bytes.slice(i, i + 512))
          controller.close()
        }
      })
      const streamed = yield* Effect.promise(() =>
        fetch(url, { method: "POST", headers: headers(session), body: chunks, duplex: "half" } as RequestInit)
      )
      expect(streamed.status).toBe(413)
      expect(streamed.headers.get("connection")).toBe("close")
      const ping = yield* post(url, { jsonrpc: "2.0", id: 2, method: "ping" }, session)
      expect(yield* Effect.promise(() => ping.json())).toEqual({ jsonrpc: "2.0", id: 2, result: {} })
      expect((yield* post(url.replace(/\/mcp$/, "/other"), initialize())).status).toBe(404)
      const port = Number(new URL(url).port)
      const taken = yield* Effect.either(gateway([], { port }))
      expect(taken._tag === "Left" && taken.left.message).toContain(`could not listen on 127.0.0.1:${port}`)
    }))

  it.live("closing the gateway's Scope ends its sessions' streams and its connections", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const url = yield* gateway([]).pipe(Scope.extend(scope))
      const session = yield* open(url)
      const stream = yield* Effect.promise(() =>
        fetch(url, { headers: { accept: "text/event-stream", "mcp-session-id": session } })
      )
      expect(stream.status).toBe(200)
      const reading = yield* Effect.fork(readEvents(stream.body!, () => false))
      yield* Scope.close(scope, Exit.void).pipe(
        Effect.timeoutFail({ duration: hangGuard(5_000), onTimeout: () => "the gateway did not close" })
      )
      yield* Fiber.join(reading).pipe(
        Effect.timeoutFail({ duration: hangGuard(5_000), onTimeout: () => "the stream did not end" })
      )
    }))

  it.scopedLive("a session idle past the timeout ends", () =>
    Effect.gen(function*() {
      const url = yield* gateway([], { sessionIdleTimeout: "200 millis" })
      const session = yield* open(url)
      expect((yield* post(url, { jsonrpc: "2.0", id: 1, method: "ping" }, session)).status).toBe(200)
      // Every request counts as activity, so the test can only wait, then look once.
      yield* Effect.sleep("700 millis")
      const status = (yield* post(url, { jsonrpc: "2.0", id: 2, method: "ping" }, session)).status
      expect(status).toBe(404)
    }))

  it.scopedLive("ending a session answers its requests still waiting", () =>
    Effect.gen(function*() {
      const alpha = FakeServer.spec({
        name: "alpha",
        prompts: [{ prompt: { name: "slow" }, get: () => ({ messages: [] }) }],
        handlers: { "prompts/get": () => Effect.never }
      })
      const url = yield* gateway([alpha])
      const session = yield* open(url)
      const waiting = yield* post(url, {
        jsonrpc: "2.0",
        id: 5,
        method: "prompts/get",
        params: { name: "mcp__alpha__slow" }
      }, session).pipe(
        Effect.flatMap((response) => Effect.promise(() => response.json())),
        Effect.fork
      )
      // Once the server has the request, it is in flight.
      yield* Effect.sync(() => alpha.current().requests.some((request) => request.method === "prompts/get")).pipe(
        Effect.repeat({ until: (seen) => seen, schedule: Schedule.spaced("10 millis") })
      )
      const ended = yield* Effect.promise(() =>
        fetch(url, { method: "DELETE", headers: { "mcp-session-id": session } })
      )
      expect(ended.status).toBe(200)
      expect(yield* Fiber.join(waiting)).toMatchObject({ id: 5, error: { code: -32603 } })
    }))
})
