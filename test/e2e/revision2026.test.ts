// Revision 2026-07-28 in the client: the revision chosen by a server/discover probe (over
// Memory with a raw Peer as the server, on the TestClock), the fallback to initialize for
// older servers (Memory, a stdio process, HTTP), the -32022 retry, the `_meta` of every
// request, the log level in `_meta`, the ttl cache, and over HTTP on 127.0.0.1 the request
// metadata headers and the tools dropped for invalid x-mcp-header annotations.
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import { fileURLToPath } from "node:url"
import * as HttpClientUndici from "../../src/HttpClientUndici.js"
import { encodeValue } from "../../src/internal/headerValues.js"
import { annotations } from "../../src/internal/transport/mcpHeaders.js"
import type * as JsonRpc from "../../src/JsonRpc.js"
import * as McpClient from "../../src/McpClient.js"
import * as McpSchema from "../../src/McpSchema.js"
import * as McpServer from "../../src/McpServer.js"
import * as Memory from "../../src/Memory.js"
import * as Peer from "../../src/Peer.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import * as Stdio from "../../src/Stdio.js"
import * as StreamableHttp from "../../src/StreamableHttp.js"
import * as FakeServer from "../../src/testing/FakeServer.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import { stateOf, until } from "../support/events.js"
import { hangGuard } from "../support/guard.js"
import { json, mcp, type Seen, serve } from "../support/httpServer.js"
import { Platform } from "../support/platform.js"

const VERSION = "2026-07-28"
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))

const discovered = (extra: Record<string, unknown> = {}) => ({
  resultType: "complete",
  supportedVersions: [VERSION],
  capabilities: { tools: {}, logging: {}, resources: {} },
  _meta: { [McpSchema.MetaKey.ServerInfo]: { name: "modern", version: "2.0.0" } },
  instructions: "be stateless",
  ttlMs: 0,
  cacheScope: "public",
  ...extra
})

const tool = (name: string, inputSchema: Record<string, unknown> = { type: "object" }) => ({ name, inputSchema })

const echoItem = (name: string) =>
  McpServer.tool({ name, inputSchema: { type: "object" }, handler: () => Effect.succeed({ content: [] }) })

const defaults: Record<string, Peer.Handler> = {
  [McpSchema.DISCOVER_METHOD]: () => Effect.succeed(discovered()),
  "tools/list": () => Effect.succeed({ tools: [tool("echo")], ttlMs: 60_000, cacheScope: "public" }),
  "tools/call": (request) =>
    Effect.succeed({ content: [{ type: "text", text: String((request.params?.arguments as any)?.text) }] }),
  "resources/read": (request) =>
    Effect.succeed({ contents: [{ uri: request.params?.uri, text: "x" }], ttlMs: 1_000, cacheScope: "private" })
}

// A server over Memory that records every request and answers with `handlers` (and the
// defaults); `peer` speaks for it (notifications).
const memoryServer = (handlers: Record<string, Peer.Handler> = {}) =>
  Effect.gen(function*() {
    const [client, server] = yield* Memory.makePair({ server: "modern" })
    const requests: Array<JsonRpc.Request> = []
    const recorded = Object.fromEntries(
      Object.entries({ ...defaults, ...handlers }).map(([method, handler]) => [
        method,
        (request: JsonRpc.Request) => Effect.zipRight(Effect.sync(() => requests.push(request)), handler(request))
      ])
    )
    const peer = yield* Peer.make({ handlers: recorded }).pipe(Effect.provideService(Transport, server))
    return { transport: client, requests, peer, methods: () => requests.map((request) => request.method) }
  })

const connect = (transport: Transport, options: McpClient.Options = {}) =>
  McpClient.make({ clientInfo: { name: "tester", version: "1.0.0" }, ...options }).pipe(
    Effect.provideService(Transport, transport)
  )

const metaOf = (request: JsonRpc.Request) => request.params?._meta as Record<string, unknown> | undefined

const unsupportedVersion = (supported: ReadonlyArray<string>) =>
  new Peer.HandlerError({
    code: -32022,
    message: "Unsupported protocol version",
    data: { supported, requested: VERSION }
  })

describe("revision 2026-07-28: the revision chosen", () => {
  it.scoped("connects with server/discover, no initialize; every request carries the revision, identity and capabilities", () =>
    Effect.gen(function*() {
      const server = yield* memoryServer()
      const client = yield* connect(server.transport)
      expect(client.protocolVersion).toBe(VERSION)
      expect(client.serverInfo).toEqual({ name: "modern", version: "2.0.0" })
      expect(client.instructions).toBe("be stateless")
      yield* client.listTools()
      expect(firstText(yield* client.callTool("echo", { text: "hi" }, { meta: { trace: "t1" } }))).toBe("hi")
      expect(server.methods()).toEqual([McpSchema.DISCOVER_METHOD, "tools/list", "tools/call"])
      for (const request of server.requests) {
        expect(metaOf(request)).toMatchObject({
          [McpSchema.MetaKey.ProtocolVersion]: VERSION,
          [McpSchema.MetaKey.ClientInfo]: { name: "tester", version: "1.0.0" },
          [McpSchema.MetaKey.ClientCapabilities]: {}
        })
      }
      // The call's own `_meta` is kept beside ours.
      expect(metaOf(server.requests[2]!)?.trace).toBe("t1")
    }))

  it.scoped("tries again with a revision named by -32022, once", () =>
    Effect.gen(function*() {
      let refused = 0
      const server = yield* memoryServer({
        [McpSchema.DISCOVER_METHOD]: () =>
          refused++ === 0 ? Effect.fail(unsupportedVersion([VERSION, "2025-11-25"])) : Effect.succeed(discovered())
      })
      const client = yield* connect(server.transport)
      expect(client.protocolVersion).toBe(VERSION)
      expect(server.methods()).toEqual([McpSchema.DISCOVER_METHOD, McpSchema.DISCOVER_METHOD])
    }))

  it.scoped("fails with Unsupported when -32022 names no revision it speaks, and never initializes", () =>
    Effect.gen(function*() {
      const server = yield* memoryServer({
        [McpSchema.DISCOVER_METHOD]: () => Effect.fail(unsupportedVersion(["2099-01-01"]))
      })
      const error = failure(yield* Effect.exit(connect(server.transport)))
      expect(error.reason._tag).toBe("Unsupported")
      expect(error.message).toContain("2099-01-01")
      expect(server.methods()).toEqual([McpSchema.DISCOVER_METHOD])
    }))

  it.scoped("falls back to initialize for a server that predates it (an unknown method)", () =>
    Effect.gen(function*() {
      const fake = yield* FakeServer.make({ tools: [] })
      const client = yield* connect(fake.transport)
      expect(client.protocolVersion).toBe("2025-11-25")
      expect(fake.requests.map((request) => request.method)).toEqual([McpSchema.DISCOVER_METHOD, "initialize"])
    }))

  it.scoped("falls back to initialize for a server that answers server/discover with something else", () =>
    Effect.gen(function*() {
      const server = yield* memoryServer({
        [McpSchema.DISCOVER_METHOD]: () => Effect.succeed({}),
        initialize: (request) =>
          Effect.succeed({
            protocolVersion: request.params?.protocolVersion,
            capabilities: {},
            serverInfo: { name: "old", version: "1.0.0" }
          })
      })
      const client = yield* connect(server.transport)
      expect(client.protocolVersion).toBe("2025-11-25")
      expect(server.methods()).toEqual([McpSchema.DISCOVER_METHOD, "initialize"])
    }))

  it.scoped("falls back to initialize when the probe goes unanswered for discoverTimeout", () =>
    Effect.gen(function*() {
      const server = yield* memoryServer({
        [McpSchema.DISCOVER_METHOD]: () => Effect.never,
        initialize: (request) =>
          Effect.succeed({
            protocolVersion: request.params?.protocolVersion,
            capabilities: {},
            serverInfo: { name: "old", version: "1.0.0" }
          })
      })
      const connecting = yield* Effect.fork(connect(server.transport, { discoverTimeout: "2 seconds" }))
      yield* Effect.yieldNow().pipe(Effect.repeat({ until: () => server.requests.length === 1 }))
      yield* TestClock.adjust("2 seconds")
      const client = yield* Fiber.join(connecting)
      expect(client.protocolVersion).toBe("2025-11-25")
      expect(server.methods()).toEqual([McpSchema.DISCOVER_METHOD, "initialize"])
      expect(metaOf(server.requests[1]!)).toBeUndefined()
    }))

  it.scoped("a stateful revision asked for skips the probe; a stateless one has no fallback", () =>
    Effect.gen(function*() {
      const fake = yield* FakeServer.make({ tools: [] })
      const client = yield* connect(fake.transport, { protocolVersion: "2025-06-18" })
      expect(client.protocolVersion).toBe("2025-06-18")
      expect(fake.requests.map((request) => request.method)).toEqual(["initialize"])
      const old = yield* FakeServer.make({ tools: [] })
      const error = failure(yield* Effect.exit(connect(old.transport, { protocolVersion: VERSION })))
      expect(error.reason._tag).toBe("Unsupported")
      expect(old.requests.map((request) => request.method)).toEqual([McpSchema.DISCOVER_METHOD])
    }))

  it.scoped("sends the log level in _meta instead of logging/setLevel; ping is server/discover", () =>
    Effect.gen(function*() {
      const server = yield* memoryServer()
      const client = yield* connect(server.transport)
      yield* client.setLoggingLevel("debug")
      yield* client.callTool("echo", { text: "x" })
      yield* client.ping()
      expect(server.methods()).toEqual([
        McpSchema.DISCOVER_METHOD,
        "tools/list",
        "tools/call",
        McpSchema.DISCOVER_METHOD
      ])
      expect(metaOf(server.requests[2]!)?.[McpSchema.MetaKey.LogLevel]).toBe("debug")
    }))
})

describe("revision 2026-07-28: cache hints", () => {
  it.scoped("lists again only once ttlMs ran out on the Clock, or at once after list_changed", () =>
    Effect.gen(function*() {
      const server = yield* memoryServer()
      const client = yield* connect(server.transport)
      const lists = () => server.methods().filter((method) => method === "tools/list").length
      yield* client.listTools()
      yield* TestClock.adjust("59 seconds")
      yield* client.listTools()
      expect(lists()).toBe(1)
      yield* TestClock.adjust("1 second")
      yield* client.listTools()
      expect(lists()).toBe(2)
      yield* server.peer.notify(McpSchema.Method.ToolsListChanged)
      // The notification is taken into account by the next lookup, whichever fiber runs first.
      yield* Effect.yieldNow().pipe(Effect.repeat({ times: 10 }))
      yield* client.listTools()
      expect(lists()).toBe(3)
    }))

  it.scoped("keeps a read fresh per URI; resources/updated makes it stale; no ttlMs is no cache", () =>
    Effect.gen(function*() {
      const server = yield* memoryServer({
        "tools/list": () => Effect.succeed({ tools: [tool("echo")] })
      })
      const client = yield* connect(server.transport)
      const count = (method: string) => server.methods().filter((m) => m === method).length
      yield* client.readResource("file:///a")
      yield* client.readResource("file:///a")
      yield* client.readResource("file:///b")
      expect(count("resources/read")).toBe(2)
      yield* server.peer.notify(McpSchema.Method.ResourcesUpdated, { uri: "file:///a" })
      yield* Effect.yieldNow().pipe(Effect.repeat({ times: 10 }))
      yield* client.readResource("file:///a")
      yield* client.readResource("file:///b")
      expect(count("resources/read")).toBe(3)
      yield* client.listTools()
      yield* client.listTools()
      expect(count("tools/list")).toBe(2)
    }))
})

describe("revision 2026-07-28: results without the revision's envelope", () => {
  it.scoped("resultType, the server's identity in _meta and the cache hints are consumed, other _meta kept", () =>
    Effect.gen(function*() {
      const serverInfo = { [McpSchema.MetaKey.ServerInfo]: { name: "modern", version: "1" } }
      const server = yield* memoryServer({
        "tools/call": () =>
          Effect.succeed({
            resultType: "complete",
            content: [{ type: "text", text: "hi" }],
            _meta: { ...serverInfo, "example.com/trace": "t1" }
          }),
        "resources/read": (request) =>
          Effect.succeed({
            resultType: "complete",
            contents: [{ uri: request.params?.uri, text: "x" }],
            ttlMs: 1_000,
            cacheScope: "private",
            _meta: serverInfo
          })
      })
      const client = yield* connect(server.transport)
      expect(yield* client.callTool("echo", {})).toEqual({
        content: [{ type: "text", text: "hi" }],
        _meta: { "example.com/trace": "t1" }
      })
      // The cache still reads the hints: the second read is answered from it.
      expect(yield* client.readResource("file:///a")).toEqual({ contents: [{ uri: "file:///a", text: "x" }] })
      expect(yield* client.readResource("file:///a")).toEqual({ contents: [{ uri: "file:///a", text: "x" }] })
      expect(server.methods().filter((m) => m === "resources/read")).toHaveLength(1)
    }))
})

describe("revision 2026-07-28: request metadata headers", () => {
  it("encodes values that are not plain header-safe ASCII with the Base64 sentinel", () => {
    expect(encodeValue("us-west1")).toBe("us-west1")
    expect(encodeValue("us west 1")).toBe("us west 1")
    expect(encodeValue("Hello, 世界")).toBe("=?base64?SGVsbG8sIOS4lueVjA==?=")
    expect(encodeValue(" padded ")).toBe("=?base64?IHBhZGRlZCA=?=")
    expect(encodeValue("line1\nline2")).toBe("=?base64?bGluZTEKbGluZTI=?=")
    expect(encodeValue("=?base64?literal?=")).toBe("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=")
  })

  it("checks x-mcp-header annotations as the spec says", () => {
    const schema = (properties: Record<string, unknown>) => ({ type: "object", properties })
    expect(annotations(schema({ region: { type: "string", "x-mcp-header": "Region" } }))).toEqual({
      _tag: "Valid",
      mirrors: [{ path: ["region"], header: "mcp-param-Region" }]
    })
    expect(annotations(schema({
      outer: { type: "object", properties: { id: { type: "integer", "x-mcp-header": "Id" } } }
    }))).toEqual({ _tag: "Valid", mirrors: [{ path: ["outer", "id"], header: "mcp-param-Id" }] })
    const invalid = [
      schema({ v: { type: "string", "x-mcp-header": "" } }),
      schema({ v: { type: "number", "x-mcp-header": "V" } }),
      schema({ v: { type: "object", "x-mcp-header": "V" } }),
      schema({ v: { type: "string", "x-mcp-header": "My Region" } }),
      schema({ v: { type: "string", "x-mcp-header": "Région" } }),
      schema({ a: { type: "string", "x-mcp-header": "X" }, b: { type: "string", "x-mcp-header": "x" } }),
      schema({ list: { type: "array", items: { type: "string", "x-mcp-header": "Item" } } }),
      { type: "object", oneOf: [schema({ v: { type: "string", "x-mcp-header": "V" } })] }
    ]
    for (const inputSchema of invalid) expect(annotations(inputSchema)._tag).toBe("Invalid")
    // A property named like the keyword is no annotation.
    expect(annotations(schema({ "x-mcp-header": { type: "string" } }))._tag).toBe("Valid")
  })

  // A stateless server on 127.0.0.1: discover, a tool with an x-mcp-header argument, one
  // whose annotation is invalid, and everything else refused as a legacy server would not.
  const modernHttp = (request: Seen) => {
    const body = request.body
    const answer = (result: Record<string, unknown>) =>
      Effect.succeed(json({ jsonrpc: "2.0", id: body.id, result: { resultType: "complete", ...result } }))
    switch (body?.method) {
      case McpSchema.DISCOVER_METHOD:
        return answer(discovered())
      case "tools/list":
        return answer({
          tools: [
            tool("weather", {
              type: "object",
              properties: { region: { type: "string", "x-mcp-header": "Region" }, days: { type: "integer" } }
            }),
            tool("broken", { type: "object", properties: { v: { type: "number", "x-mcp-header": "V" } } }),
            tool("grüße")
          ],
          ttlMs: 0,
          cacheScope: "private"
        })
      case "tools/call":
        return answer({ content: [{ type: "text", text: "ok" }] })
      default:
        return Effect.succeed(json({ jsonrpc: "2.0", id: body?.id, error: { code: -32601, message: "no" } }))
    }
  }

  it.scopedLive("sends MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-*; drops a tool with an invalid annotation, saying why", () =>
    Effect.gen(function*() {
      const server = yield* serve(modernHttp)
      const lines: Array<string> = []
      const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => lines.push(String(message))))
      const transport = yield* StreamableHttp.make({ name: "weather-api", url: server.url })
      const client = yield* connect(transport).pipe(Effect.provide(logger))
      const tools = yield* client.listTools().pipe(Effect.provide(logger))
      expect(tools.map((t) => t.name)).toEqual(["weather", "grüße"])
      expect(lines.join("\n")).toContain("server 'weather-api': tool 'broken' dropped: invalid x-mcp-header")
      yield* client.callTool("weather", { region: "eu-west 1", days: 3 })
      yield* client.callTool("grüße", {})
      expect(server.seen.map((seen) => seen.body?.method ?? seen.method)).toEqual([
        McpSchema.DISCOVER_METHOD,
        "tools/list",
        "tools/call",
        "tools/call"
      ])
      for (const seen of server.seen) {
        expect(seen.headers["mcp-protocol-version"]).toBe(VERSION)
        expect(seen.headers["mcp-method"]).toBe(seen.body.method)
        expect(seen.headers["mcp-session-id"]).toBeUndefined()
      }
      const [, , weather, greeting] = server.seen
      expect(weather!.headers["mcp-name"]).toBe("weather")
      expect(weather!.headers["mcp-param-region"]).toBe("eu-west 1")
      expect(weather!.headers["mcp-param-days"]).toBeUndefined()
      expect(greeting!.headers["mcp-name"]).toBe(`=?base64?${Buffer.from("grüße").toString("base64")}?=`)
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("after HeaderMismatch, lists the tools again and calls once more with the new headers", () =>
    Effect.gen(function*() {
      let lists = 0
      const server = yield* serve((request) => {
        const body = request.body
        if (body?.method === "tools/list") {
          lists++
          // The second listing annotates `region`: the server now wants it as a header.
          const region = lists === 1 ? { type: "string" } : { type: "string", "x-mcp-header": "Region" }
          return Effect.succeed(json({
            jsonrpc: "2.0",
            id: body.id,
            result: { tools: [tool("weather", { type: "object", properties: { region } })], ttlMs: 60_000 }
          }))
        }
        if (body?.method === "tools/call" && request.headers["mcp-param-region"] !== "eu") {
          return Effect.succeed(HttpServerResponse.unsafeJson({
            jsonrpc: "2.0",
            id: body.id,
            error: { code: -32020, message: "Header mismatch: Mcp-Param-Region is missing" }
          }, { status: 400 }))
        }
        return modernHttp(request)
      })
      const transport = yield* StreamableHttp.make({ name: "strict", url: server.url })
      const client = yield* connect(transport)
      expect(firstText(yield* client.callTool("weather", { region: "eu" }))).toBe("ok")
      expect(server.seen.map((seen) => seen.body?.method)).toEqual([
        McpSchema.DISCOVER_METHOD,
        "tools/list",
        "tools/call",
        "tools/list",
        "tools/call"
      ])
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("cancels a request by closing its stream, posting no notifications/cancelled", () =>
    Effect.gen(function*() {
      const server = yield* serve((request) =>
        request.body?.method === "tools/call" ? Effect.never : modernHttp(request)
      )
      const transport = yield* StreamableHttp.make({ name: "slow", url: server.url })
      const client = yield* connect(transport)
      const call = yield* Effect.fork(client.callTool("weather", { region: "eu" }))
      yield* server.next((seen) => seen.body?.method === "tools/call")
      yield* Fiber.interrupt(call)
      yield* server.hangup
      expect(server.seen.map((seen) => seen.body?.method)).toEqual([
        McpSchema.DISCOVER_METHOD,
        "tools/list",
        "tools/call"
      ])
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("takes -32022 in a 400 body as the server's answer and tries again", () =>
    Effect.gen(function*() {
      let refused = false
      const server = yield* serve((request) => {
        if (!refused) {
          refused = true
          return Effect.succeed(HttpServerResponse.unsafeJson({
            jsonrpc: "2.0",
            id: request.body.id,
            error: { code: -32022, message: "Unsupported protocol version", data: { supported: [VERSION] } }
          }, { status: 400 }))
        }
        return modernHttp(request)
      })
      const transport = yield* StreamableHttp.make({ name: "retry", url: server.url })
      const client = yield* connect(transport)
      expect(client.protocolVersion).toBe(VERSION)
      expect(server.seen.map((seen) => seen.body?.method)).toEqual([
        McpSchema.DISCOVER_METHOD,
        McpSchema.DISCOVER_METHOD
      ])
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("falls back to initialize for a 2025-11-25 HTTP server that refuses the probe with 400", () =>
    Effect.gen(function*() {
      const server = yield* serve(mcp().handler)
      const transport = yield* StreamableHttp.make({ name: "old", url: server.url })
      const client = yield* connect(transport)
      expect(client.protocolVersion).toBe("2025-11-25")
      yield* client.callTool("echo", { text: "x" })
      const [probe, ...rest] = server.seen
      expect(probe!.body.method).toBe(McpSchema.DISCOVER_METHOD)
      expect(rest.map((seen) => seen.body?.method ?? seen.method).slice(0, 2)).toEqual([
        "initialize",
        "notifications/initialized"
      ])
      // The stateful requests carry neither our _meta nor the 2026-07-28 headers.
      const call = server.seen.find((seen) => seen.body?.method === "tools/call")!
      expect(call.headers["mcp-method"]).toBeUndefined()
      expect(call.body.params._meta?.[McpSchema.MetaKey.ProtocolVersion]).toBeUndefined()
    }).pipe(Effect.provide(HttpClientUndici.layer)))
})

describe("revision 2026-07-28 over stdio, and in a fleet", () => {
  it.scopedLive("speaks to a stateless stdio server with discover, and falls back for an older one", () =>
    Effect.gen(function*() {
      const modern = yield* Stdio.make({
        name: "modern",
        command: process.execPath,
        args: [fixture("modern-server.mjs")]
      })
      const client = yield* connect(modern)
      expect(client.protocolVersion).toBe(VERSION)
      const meta = JSON.parse(firstText(yield* client.callTool("meta", {})))
      expect(meta[McpSchema.MetaKey.ProtocolVersion]).toBe(VERSION)
      const old = yield* Stdio.make({ name: "old", command: process.execPath, args: [fixture("structured.mjs")] })
      expect((yield* connect(old)).protocolVersion).toBe("2025-11-25")
    }).pipe(Effect.provide(Platform)))

  it.scopedLive("the fleet sees a 2026-07-28 server's tool changes as a stateful one's (a listen stream it holds)", () =>
    Effect.gen(function*() {
      const served = yield* McpServer.fromItems({ serverInfo: { name: "items", version: "1" }, tools: [echoItem("a")] })
      const fleet = yield* ServerRegistry.make()
      const events = yield* fleet.subscribe
      yield* fleet.reconcile([{
        name: "items",
        transport: {
          type: "custom",
          key: "items",
          connect: Effect.map(McpServer.connectMemory(served, { name: "items" }), (made) => made.transport)
        }
      }])
      yield* fleet.awaitReady({ servers: ["items"], timeout: hangGuard(10_000) })
      expect((yield* fleet.status).find((status) => status.name === "items")?.protocolVersion).toBe(VERSION)
      yield* served.addTool(echoItem("b"))
      const changed = yield* until(
        events,
        (event): event is Extract<typeof event, { _tag: "ToolsChanged" }> =>
          event._tag === "ToolsChanged" && event.added.some((tool) => tool.name === "b")
      ).pipe(Effect.timeout(hangGuard(10_000)))
      expect(changed.removed).toEqual([])
      expect((yield* SubscriptionRef.get(fleet.catalog)).tools.map((entry) => entry.name).sort()).toEqual([
        "mcp__items__a",
        "mcp__items__b"
      ])
    }).pipe(Effect.provide(Platform)))

  it.scopedLive("a fleet of both revisions: both Ready with their revision in status, health by server/discover", () =>
    Effect.gen(function*() {
      const fleet = yield* ServerRegistry.make()
      const events = yield* fleet.subscribe
      const health = { interval: "100 millis", failures: 1 } as const
      yield* fleet.reconcile([
        {
          name: "modern",
          transport: { type: "stdio", command: process.execPath, args: [fixture("modern-server.mjs"), "60000"] },
          health
        },
        { name: "old", transport: { type: "stdio", command: process.execPath, args: [fixture("structured.mjs")] } }
      ])
      yield* until(events, stateOf("modern", "Ready")).pipe(Effect.timeout(hangGuard(20_000)))
      yield* fleet.awaitReady({ servers: ["old"], timeout: hangGuard(20_000) })
      const statuses = yield* fleet.status
      const revision = (name: string) => statuses.find((status) => status.name === name)?.protocolVersion
      expect(revision("modern")).toBe(VERSION)
      expect(revision("old")).toBe("2025-11-25")
      const meta = JSON.parse(firstText(yield* fleet.callTool("mcp__modern__meta", {})))
      expect(meta[McpSchema.MetaKey.ProtocolVersion]).toBe(VERSION)
      // Health checks (server/discover; it has no ping) for a while: it stays up, never failed.
      const before = statuses.find((status) => status.name === "modern")!
      yield* Effect.sleep("500 millis")
      const after = (yield* fleet.status).find((status) => status.name === "modern")!
      expect(after.state).toEqual(before.state)
      expect(after.lastError).toBeUndefined()
    }).pipe(Effect.provide(Platform)))
})
