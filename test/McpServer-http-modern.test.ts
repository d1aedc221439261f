// Modern (2026-07-28) requests on McpServer's Streamable HTTP endpoint, with raw fetch: each
// POST answered on its own (no Mcp-Session-Id), headers checked against the body first, the
// revision's HTTP statuses, MRTR over HTTP, subscriptions/listen on its own SSE stream, and a
// stateful client on the same endpoint alongside.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpClientUndici from "../src/HttpClientUndici.js"
import * as McpClient from "../src/McpClient.js"
import * as McpServer from "../src/McpServer.js"
import * as NodeFleet from "../src/NodeFleet.js"
import * as NodeGateway from "../src/NodeGateway.js"
import * as NodeMcpServer from "../src/NodeMcpServer.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as StreamableHttp from "../src/StreamableHttp.js"
import { text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"

const MODERN = "2026-07-28"

const tools = [
  McpServer.tool({
    name: "query",
    description: "Runs a query in a region (mirrored in Mcp-Param-Region)",
    inputSchema: {
      type: "object",
      properties: { region: { type: "string", "x-mcp-header": "Region" }, sql: { type: "string" } }
    },
    handler: (args) => Effect.succeed(text(`${String(args.sql)} in ${String(args.region)}`))
  }),
  McpServer.tool({
    name: "count",
    description: "Counts to 3, reporting progress",
    inputSchema: { type: "object" },
    handler: (_args, ctx) =>
      Effect.as(Effect.forEach([1, 2, 3], (i) => ctx.progress(i, 3), { discard: true }), text("counted"))
  }),
  McpServer.tool({
    name: "greet",
    description: "Asks the user's name",
    inputSchema: { type: "object" },
    handler: (_args, ctx) =>
      Effect.orDie(Effect.map(
        ctx.elicit({
          message: "Your name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
        }, { key: "name" }),
        (answer) => text(`Hello, ${String(answer.content?.name)}!`)
      ))
  })
]

const serve = Effect.gen(function*() {
  const server = yield* McpServer.fromItems({
    serverInfo: { name: "modern-http", version: "1.0.0" },
    tools,
    modern: true
  })
  const url = yield* NodeMcpServer.serveHttp(server, { port: 0 })
  return { server, url }
})

let nextId = 1

// A modern request's body and the headers SEP-2243 asks for (overridable).
const post = (
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  signal?: AbortSignal
) => {
  const name = (params.name ?? params.uri) as string | undefined
  const body = {
    jsonrpc: "2.0",
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1.0.0" },
        ...(params._meta as object | undefined)
      }
    }
  }
  return Effect.promise(() =>
    fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        ...(name === undefined ? {} : { "mcp-name": name }),
        ...headers
      },
      body: JSON.stringify(body),
      ...(signal === undefined ? {} : { signal })
    })
  )
}

const json = (response: Response) => Effect.promise(() => response.json() as Promise<any>)

// An SSE body's reader: `until` reads events until `enough` says so, and returns all seen.
const sse = (response: Response) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const seen: Array<any> = []
  let buffer = ""
  return (enough: (seen: ReadonlyArray<any>) => boolean) =>
    Effect.promise(async () => {
      while (!enough(seen)) {
        const { done, value } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        const lines = buffer.split("\n")
        buffer = lines.pop()!
        for (const line of lines) {
          // A priming event has no data.
          const data = line.startsWith("data:") ? line.slice(5).trim() : ""
          if (data !== "") seen.push(JSON.parse(data))
        }
      }
      return seen
    })
}

describe("McpServer over HTTP, modern requests", () => {
  it.scopedLive("server/discover and a tools/call are answered with no session", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const discovered = yield* post(url, "server/discover")
      expect(discovered.status).toBe(200)
      expect(discovered.headers.get("mcp-session-id")).toBeNull()
      const discover = yield* json(discovered)
      expect(discover.result.supportedVersions).toContain(MODERN)
      expect(discover.result._meta["io.modelcontextprotocol/serverInfo"]).toMatchObject({ name: "modern-http" })
      const called = yield* post(url, "tools/call", { name: "query", arguments: { region: "eu", sql: "select 1" } }, {
        "mcp-param-region": "eu"
      })
      expect(called.status).toBe(200)
      expect(called.headers.get("mcp-session-id")).toBeNull()
      expect((yield* json(called)).result).toMatchObject({ ...text("select 1 in eu"), resultType: "complete" })
    }))

  it.scopedLive("a progress-reporting call streams its notifications, then its answer", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const response = yield* post(url, "tools/call", { name: "count", arguments: {}, _meta: { progressToken: "p" } })
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      const seen = yield* sse(response)((messages) => messages.some((message) => "result" in message))
      expect(seen.filter((m) => m.method === "notifications/progress").map((m) => m.params.progress)).toEqual([1, 2, 3])
      expect(seen.at(-1).result).toMatchObject(text("counted"))
    }))

  it.scopedLive("headers that disagree with the body are 400 -32020, before the server acts", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const wrongMethod = yield* post(url, "tools/list", {}, { "mcp-method": "prompts/list" })
      expect(wrongMethod.status).toBe(400)
      expect((yield* json(wrongMethod)).error.code).toBe(-32020)
      const wrongParam = yield* post(url, "tools/call", { name: "query", arguments: { region: "eu", sql: "x" } }, {
        "mcp-param-region": "us"
      })
      expect(wrongParam.status).toBe(400)
      expect((yield* json(wrongParam)).error.code).toBe(-32020)
      const missingParam = yield* post(url, "tools/call", { name: "query", arguments: { region: "eu", sql: "x" } })
      expect(missingParam.status).toBe(400)
    }))

  it.scopedLive("the revision's statuses: unknown method 404, unsupported revision 400", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const unknown = yield* post(url, "no/such/method")
      expect(unknown.status).toBe(404)
      expect((yield* json(unknown)).error.code).toBe(-32601)
      const future = yield* post(url, "tools/list", {
        _meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" }
      }, {
        "mcp-protocol-version": "2099-01-01"
      })
      expect(future.status).toBe(400)
      expect((yield* json(future)).error).toMatchObject({ code: -32022, data: { requested: "2099-01-01" } })
    }))

  it.scopedLive("MRTR over HTTP: input_required, then the retry with the answer", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const first = yield* json(yield* post(url, "tools/call", { name: "greet", arguments: {} }))
      expect(first.result.resultType).toBe("input_required")
      expect(Object.keys(first.result.inputRequests)).toEqual(["name"])
      const second = yield* json(
        yield* post(url, "tools/call", {
          name: "greet",
          arguments: {},
          inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
          requestState: first.result.requestState
        })
      )
      expect(second.result).toMatchObject({ ...text("Hello, Ada!"), resultType: "complete" })
    }))

  it.scopedLive("subscriptions/listen streams the acknowledgement and list changes on its own POST", () =>
    Effect.gen(function*() {
      const { server, url } = yield* serve
      const abort = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => abort.abort()))
      const response = yield* post(
        url,
        "subscriptions/listen",
        { notifications: { toolsListChanged: true } },
        {},
        abort.signal
      )
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      const until = sse(response)
      const acknowledged = yield* until((seen) => seen.length > 0)
      expect(acknowledged[0]).toMatchObject({
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { toolsListChanged: true } }
      })
      yield* server.notifyListChanged("tools")
      const seen = yield* until((messages) => messages.length > 1)
      expect(seen[1].method).toBe("notifications/tools/list_changed")
      // Answered with no session at all.
      expect(server.sessions()).toBe(0)
    }))

  it.scopedLive("closing a modern call's stream interrupts its handler", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const server = yield* McpServer.fromItems({
        serverInfo: { name: "modern-http", version: "1.0.0" },
        tools: [McpServer.tool({
          name: "hang",
          description: "Reports progress, then waits for ever",
          inputSchema: { type: "object" },
          handler: (_args, ctx) =>
            Effect.zipRight(ctx.progress(1), Effect.never).pipe(
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )
        })]
      })
      const url = yield* NodeMcpServer.serveHttp(server, { port: 0 })
      const abort = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => abort.abort()))
      const response = yield* post(
        url,
        "tools/call",
        { name: "hang", arguments: {}, _meta: { progressToken: "h" } },
        {},
        abort.signal
      )
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      const seen = yield* sse(response)((messages) => messages.length > 0)
      expect(seen[0].method).toBe("notifications/progress")
      expect(yield* Deferred.isDone(interrupted)).toBe(false)
      abort.abort()
      yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
    }))

  it.scopedLive("a stateful client on the same endpoint keeps its session", () =>
    Effect.gen(function*() {
      const { server, url } = yield* serve
      const transport = yield* StreamableHttp.make({ name: "stateful", url })
      // A client of the stateful revisions (McpClient would otherwise pick 2026-07-28 here).
      const client = yield* McpClient.make({ protocolVersion: "2025-11-25" }).pipe(
        Effect.provideService(Transport, transport)
      )
      expect(transport.info().sessionId).toMatch(/^[0-9a-f-]{36}$/)
      expect((yield* client.listTools()).map((tool) => tool.name)).toEqual(["query", "count", "greet"])
      const modern = yield* post(url, "tools/list")
      expect((yield* json(modern)).result.tools).toHaveLength(3)
      expect(yield* client.callTool("query", { region: "eu", sql: "select 2" })).toEqual(text("select 2 in eu"))
      expect(server.sessions()).toBeGreaterThanOrEqual(1)
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("the gateway, an McpServer, answers modern requests over its HTTP endpoint", () =>
    Effect.gen(function*() {
      const url = yield* NodeGateway.serveHttp({
        port: 0,
        tools,
        serverInfo: { name: "gateway", version: "1.0.0" },
        modern: true
      })
      const discover = yield* json(yield* post(url, "server/discover"))
      expect(discover.result.supportedVersions).toContain(MODERN)
      const called = yield* post(url, "tools/call", { name: "query", arguments: { region: "eu", sql: "select 3" } }, {
        "mcp-param-region": "eu"
      })
      expect(called.headers.get("mcp-session-id")).toBeNull()
      expect((yield* json(called)).result).toMatchObject({ ...text("select 3 in eu"), resultType: "complete" })
      const mismatched = yield* post(url, "tools/call", { name: "query", arguments: { region: "eu", sql: "x" } }, {
        "mcp-param-region": "us"
      })
      expect(mismatched.status).toBe(400)
    }).pipe(
      Effect.provide(
        Policy.layer().pipe(
          Layer.provideMerge(ServerRegistry.layer({ servers: [] })),
          Layer.provide(NodeFleet.layer)
        )
      )
    ))
})
