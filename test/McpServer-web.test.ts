// An McpServer served through McpServer.toWebHandler with plain fetch Request and Response
// objects and no socket: a legacy session (initialize, a tool call answered on an SSE
// stream, the standing GET stream, DELETE), a modern (2026-07-28) request on its own, the
// body limit and CORS — the neutral core through its Web adapter.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Gateway from "../src/Gateway.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "../src/McpServer.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { Platform } from "./support/platform.js"

const URL_ = "http://127.0.0.1/mcp"
const LEGACY = "2025-11-25"
const MODERN = "2026-07-28"

const text = (value: string): McpSchema.CallToolResult => ({ content: [{ type: "text", text: value }] })

// Both tools in one: `count` reports progress to 3 before it answers, `echo` answers at once.
const tools = ["echo", "count"].map((name) =>
  McpServer.tool({
    name,
    description: `the ${name} tool`,
    parameters: Schema.Struct({ text: Schema.optional(Schema.String) }),
    handler: (args, ctx) =>
      name === "echo"
        ? Effect.succeed(text(args.text ?? ""))
        : Effect.as(Effect.forEach([1, 2, 3], (i) => ctx.progress(i, 3), { discard: true }), text("counted to 3"))
  })
)

const serve = (options: McpServer.HttpHandlerOptions = {}) =>
  Effect.gen(function*() {
    const server = yield* McpServer.fromItems({ serverInfo: { name: "web", version: "1.0.0" }, tools })
    const handler = yield* McpServer.toWebHandler(server, { path: "/mcp", ...options })
    return { server, handler }
  })

let nextId = 1

const request = (method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id: nextId++,
  method,
  params
})

const post = (body: unknown, headers: Record<string, string> = {}) =>
  new Request(URL_, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body)
  })

const call = (handler: (request: Request) => Promise<Response>, request: Request) =>
  Effect.promise(() => handler(request))

const json = (response: Response) => Effect.promise(() => response.json() as Promise<any>)

// The data of every event of a whole SSE body (a priming event has none).
const events = (response: Response) =>
  Effect.promise(async () =>
    (await response.text()).split("\n")
      .filter((line) => line.startsWith("data:") && line.slice(5).trim() !== "")
      .map((line) => JSON.parse(line.slice(5)))
  )

// A legacy session opened by initialize and its initialized notification: its id.
const initialize = (handler: (request: Request) => Promise<Response>) =>
  Effect.gen(function*() {
    const opened = yield* call(
      handler,
      post(request("initialize", {
        protocolVersion: LEGACY,
        capabilities: {},
        clientInfo: { name: "web-test", version: "1.0.0" }
      }))
    )
    expect(opened.status).toBe(200)
    expect(opened.headers.get("content-type")).toBe("application/json")
    const session = opened.headers.get("mcp-session-id")!
    expect(session).toMatch(/^[0-9a-f-]{36}$/)
    expect((yield* json(opened)).result.protocolVersion).toBe(LEGACY)
    const initialized = yield* call(
      handler,
      post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": session })
    )
    expect(initialized.status).toBe(202)
    return session
  })

describe("McpServer.toWebHandler, with Request and Response alone", () => {
  it.scopedLive("a legacy session: initialize, a tool call answered as JSON and one on an SSE stream, DELETE", () =>
    Effect.gen(function*() {
      const { handler, server } = yield* serve()
      const session = yield* initialize(handler)
      expect(server.sessions()).toBe(1)
      const headers = { "mcp-session-id": session, "mcp-protocol-version": LEGACY }

      const echoed = yield* call(
        handler,
        post(request("tools/call", { name: "echo", arguments: { text: "hi" } }), headers)
      )
      expect(echoed.headers.get("content-type")).toBe("application/json")
      expect((yield* json(echoed)).result).toEqual(text("hi"))

      // Progress before the answer: an SSE stream, its events the notifications then the result.
      const counting = request("tools/call", { name: "count", arguments: {}, _meta: { progressToken: "p" } })
      const counted = yield* call(handler, post(counting, headers))
      expect(counted.status).toBe(200)
      expect(counted.headers.get("content-type")).toBe("text/event-stream")
      const messages = yield* events(counted)
      expect(messages.filter((m) => m.method === "notifications/progress").map((m) => m.params.progress))
        .toEqual([1, 2, 3])
      expect(messages.at(-1)).toEqual({ jsonrpc: "2.0", id: counting.id, result: text("counted to 3") })

      const deleted = yield* call(handler, new Request(URL_, { method: "DELETE", headers }))
      expect(deleted.status).toBe(200)
      expect(server.sessions()).toBe(0)
      const gone = yield* call(handler, post(request("tools/list"), headers))
      expect(gone.status).toBe(404)
    }))

  it.scopedLive("the standing GET stream carries the session's notifications; cancelling its body leaves", () =>
    Effect.gen(function*() {
      const { handler, server } = yield* serve()
      const session = yield* initialize(handler)
      const get = () =>
        call(handler, new Request(URL_, { headers: { accept: "text/event-stream", "mcp-session-id": session } }))
      const standing = yield* get()
      expect(standing.status).toBe(200)
      expect(standing.headers.get("content-type")).toBe("text/event-stream")
      // One standing stream per session.
      expect((yield* get()).status).toBe(409)
      const reader = standing.body!.getReader()
      const decoder = new TextDecoder()
      let seen = ""
      const readUntil = (needle: string) =>
        Effect.promise(async () => {
          while (!seen.includes(needle)) {
            const { done, value } = await reader.read()
            if (done) break
            seen += decoder.decode(value, { stream: true })
          }
          return seen
        })
      expect(yield* readUntil(": stream open")).toContain(": stream open")
      yield* server.notifyListChanged("tools")
      expect(yield* readUntil("notifications/tools/list_changed")).toContain("notifications/tools/list_changed")
      // The client goes away: the session may open its stream again.
      yield* Effect.promise(() => reader.cancel())
      const again = yield* get()
      expect(again.status).toBe(200)
      yield* Effect.promise(() => again.body!.cancel())
    }))

  it.scopedLive("a modern request is answered on its own, with no session", () =>
    Effect.gen(function*() {
      const { handler, server } = yield* serve()
      const meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "web-test", version: "1.0.0" }
      }
      const modern = (method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) =>
        post(request(method, { ...params, _meta: meta }), {
          "mcp-protocol-version": MODERN,
          "mcp-method": method,
          ...headers
        })
      const answered = yield* call(
        handler,
        modern("tools/call", { name: "echo", arguments: { text: "modern" } }, { "mcp-name": "echo" })
      )
      expect(answered.status).toBe(200)
      expect(answered.headers.get("mcp-session-id")).toBeNull()
      expect((yield* json(answered)).result).toMatchObject(text("modern"))
      // The revision's statuses: an unknown method is 404.
      const unknown = yield* call(handler, modern("no/such/method", {}))
      expect(unknown.status).toBe(404)
      expect((yield* json(unknown)).error.code).toBe(-32601)
      expect(server.sessions()).toBe(0)
    }))

  it.scopedLive("a body over maxMessageBytes is 413, declared or streamed", () =>
    Effect.gen(function*() {
      const { handler, server } = yield* serve({ maxMessageBytes: 1024 })
      // A declared length over the limit is refused before the body is read.
      const declared = yield* call(handler, post(request("ping"), { "content-length": "4096" }))
      expect(declared.status).toBe(413)
      expect((yield* json(declared)).error.message).toContain("1024")
      // A body of unknown length is cut off once it passes the limit.
      const big = request("initialize", { padding: "x".repeat(4096) })
      const bytes = new TextEncoder().encode(JSON.stringify(big))
      const streamed = yield* call(
        handler,
        new Request(URL_, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: new ReadableStream<Uint8Array>({
            start: (controller) => {
              for (let i = 0; i < bytes.length; i += 512) controller.enqueue(bytes.slice(i, i + 512))
              controller.close()
            }
          }),
          duplex: "half"
        } as RequestInit)
      )
      expect(streamed.status).toBe(413)
      expect(server.sessions()).toBe(0)
    }))

  it.scopedLive("CORS: an allowed Origin's preflight is answered and its answers readable; a foreign one is 403", () =>
    Effect.gen(function*() {
      const { handler } = yield* serve({ allowedOrigins: ["https://app.example.com"] })
      const preflight = (origin: string) =>
        call(
          handler,
          new Request(URL_, {
            method: "OPTIONS",
            headers: { origin, "access-control-request-method": "POST" }
          })
        )
      const allowed = yield* preflight("https://app.example.com")
      expect(allowed.status).toBe(204)
      expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example.com")
      expect(allowed.headers.get("access-control-allow-methods")).toContain("POST")
      expect(allowed.headers.get("access-control-allow-headers")).toContain("mcp-session-id")
      expect((yield* preflight("https://evil.example.com")).status).toBe(403)
      const opened = yield* call(
        handler,
        post(
          request("initialize", { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "b", version: "1" } }),
          { origin: "https://app.example.com" }
        )
      )
      expect(opened.status).toBe(200)
      expect(opened.headers.get("access-control-allow-origin")).toBe("https://app.example.com")
      expect(opened.headers.get("access-control-expose-headers")).toContain("mcp-session-id")
    }))
})

describe("Gateway.toWebHandler", () => {
  it.scopedLive("serves the fleet as (Request) => Promise<Response>", () =>
    Effect.gen(function*() {
      const handler = yield* Gateway.toWebHandler({ path: "/mcp" })
      const session = yield* initialize(handler)
      const listed = yield* call(
        handler,
        post(request("tools/list"), { "mcp-session-id": session, "mcp-protocol-version": LEGACY })
      )
      expect((yield* json(listed)).result.tools.map((tool: McpSchema.Tool) => tool.name)).toEqual(["mcp__fake__ping"])
    }).pipe(
      Effect.provide(
        Policy.layer({}).pipe(
          Layer.provideMerge(ServerRegistry.layer({
            servers: [{
              name: "fake",
              transport: {
                type: "custom",
                key: "fake",
                connect: Effect.map(
                  FakeServer.make({
                    name: "fake",
                    tools: [{
                      tool: { name: "ping", inputSchema: { type: "object" } },
                      call: () => Effect.succeed(text("pong"))
                    }]
                  }),
                  (server) => server.transport
                )
              }
            }]
          })),
          Layer.provide(Platform)
        )
      )
    ))
})
