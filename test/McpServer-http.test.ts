// An McpServer mounted in an app's own node:http server with NodeMcpServer.toNodeHandler, at
// /custom/mcp next to a route of the app's own, reached by our McpClient over Streamable HTTP
// and by the official SDK's client.
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as http from "node:http"
import * as HttpClientUndici from "../src/HttpClientUndici.js"
import * as McpClient from "../src/McpClient.js"
import * as McpServer from "../src/McpServer.js"
import * as NodeMcpServer from "../src/NodeMcpServer.js"
import * as StreamableHttp from "../src/StreamableHttp.js"
import { text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { authorizationServer } from "./support/authorizationServer.js"
import { listenLoopback } from "./support/httpServer.js"

// A tool that reports progress before it answers, so its answer comes on an SSE stream.
const count = McpServer.tool({
  name: "count",
  description: "Counts to n, reporting progress",
  parameters: Schema.Struct({ n: Schema.Number }),
  handler: ({ n }, ctx) =>
    Effect.gen(function*() {
      for (let i = 1; i <= n; i++) yield* ctx.progress(i, n)
      return text(`counted to ${n}`)
    })
})

const echo = McpServer.tool({
  name: "echo",
  description: "Says it back",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text: said }) => Effect.succeed(text(said))
})

// The app: its own route at /health, the MCP endpoint at /custom/mcp, 404 elsewhere.
const app = Effect.gen(function*() {
  const server = yield* McpServer.fromItems({ serverInfo: { name: "mounted", version: "1.0.0" }, tools: [echo, count] })
  const mcp = yield* NodeMcpServer.toNodeHandler(server)
  const listener = http.createServer((request, response) => {
    const path = request.url?.split("?")[0]
    if (path === "/custom/mcp") return mcp(request, response)
    if (path === "/health") return void response.writeHead(200, { "content-type": "text/plain" }).end("ok")
    response.writeHead(404).end()
  })
  return { server, base: yield* listenLoopback(listener) }
})

describe("NodeMcpServer.toNodeHandler", () => {
  it.scopedLive("serves our McpClient at the app's path, next to the app's own route", () =>
    Effect.gen(function*() {
      const { base, server } = yield* app
      const health = yield* Effect.promise(() => fetch(`${base}/health`).then((r) => r.text()))
      expect(health).toBe("ok")
      const transport = yield* StreamableHttp.make({ name: "mounted", url: `${base}/custom/mcp` })
      // A stateful session (the endpoint serves 2026-07-28 requests too, without one).
      const client = yield* McpClient.make({ protocolVersion: "2025-11-25" }).pipe(
        Effect.provideService(Transport, transport)
      )
      expect(transport.info().sessionId).toMatch(/^[0-9a-f-]{36}$/)
      expect(server.sessions()).toBe(1)
      const tools = yield* client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(["echo", "count"])
      expect(yield* client.callTool("echo", { text: "hi" })).toEqual(text("hi"))
      const progress: Array<number> = []
      const counted = yield* client.callTool("count", { n: 3 }, {
        onProgress: (p) => Effect.sync(() => void progress.push(p.progress))
      })
      expect(counted).toEqual(text("counted to 3"))
      expect(progress).toEqual([1, 2, 3])
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("serves the official SDK's client; the endpoint's sessions end with the Scope", () =>
    Effect.gen(function*() {
      const { base, server } = yield* app
      const client = new Client({ name: "sdk", version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/custom/mcp`))
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(transport)),
        () => Effect.promise(() => client.close())
      )
      expect(client.getServerVersion()).toMatchObject({ name: "mounted" })
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((tool) => tool.name)).toEqual(["echo", "count"])
      const progress: Array<number> = []
      const counted = yield* Effect.promise(() =>
        client.callTool({ name: "count", arguments: { n: 2 } }, undefined, {
          onprogress: (p) => void progress.push(p.progress)
        })
      )
      expect(counted.content).toEqual([{ type: "text", text: "counted to 2" }])
      expect(progress).toEqual([1, 2])
      const echoed = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "sdk" } }))
      expect(echoed.content).toEqual([{ type: "text", text: "sdk" }])
      expect(server.sessions()).toBe(1)
      // DELETE ends the session.
      yield* Effect.promise(() => transport.terminateSession())
      expect(server.sessions()).toBe(0)
    }))
})

describe("McpServer.toWebHandler", () => {
  it.scopedLive("serves the official SDK's client through fetch's Request and Response: JSON, streamed progress, DELETE", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.fromItems({
        serverInfo: { name: "web", version: "1.0.0" },
        tools: [echo, count]
      })
      const handler = yield* McpServer.toWebHandler(server)
      const methods: Array<string> = []
      // No socket anywhere: the SDK's fetch is the handler itself.
      const fetchLike = (url: string | URL, init?: RequestInit) => {
        methods.push(init?.method ?? "GET")
        return handler(new Request(url, init))
      }
      const client = new Client({ name: "sdk", version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL("http://127.0.0.1/anywhere"), { fetch: fetchLike })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(transport)),
        () => Effect.promise(() => client.close())
      )
      expect(client.getServerVersion()).toMatchObject({ name: "web" })
      const echoed = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "web" } }))
      expect(echoed.content).toEqual([{ type: "text", text: "web" }])
      const progress: Array<number> = []
      const counted = yield* Effect.promise(() =>
        client.callTool({ name: "count", arguments: { n: 3 } }, undefined, {
          onprogress: (p) => void progress.push(p.progress)
        })
      )
      expect(counted.content).toEqual([{ type: "text", text: "counted to 3" }])
      expect(progress).toEqual([1, 2, 3])
      expect(server.sessions()).toBe(1)
      yield* Effect.promise(() => transport.terminateSession())
      expect(server.sessions()).toBe(0)
      expect(methods).toContain("DELETE")
    }))
})

describe("NodeMcpServer.toNodeHandler with oauth", () => {
  it.scopedLive("the mounted endpoint is a protected resource: its metadata where the app routes it, 401 without a token, the caller in the session", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer
      // A server whose tool says who opened its session.
      const server = yield* McpServer.make({
        serverInfo: { name: "protected", version: "1.0.0" },
        handlers: (_client, session) =>
          Effect.succeed({
            tools: {
              list: () => Effect.succeed([{ name: "whoami", inputSchema: { type: "object" as const } }]),
              call: () => Effect.succeed(text(`${session.caller?.subject} via ${session.caller?.clientId}`))
            }
          })
      })
      let mcp: NodeMcpServer.NodeHandler = (_request, response) => void response.writeHead(503).end()
      const listener = http.createServer((request, response) => {
        const path = request.url?.split("?")[0] ?? ""
        if (path === "/custom/mcp" || path.startsWith("/.well-known/oauth-protected-resource")) {
          return mcp(request, response)
        }
        response.writeHead(404).end()
      })
      const url = `${yield* listenLoopback(listener)}/custom/mcp`
      // Mounted, the endpoint cannot know its public URL: without oauth.resource it refuses to start.
      const unnamed = yield* Effect.exit(NodeMcpServer.toNodeHandler(server, { oauth: { issuer: as.base } }))
      expect(String(unnamed)).toContain("oauth.resource")
      mcp = yield* NodeMcpServer.toNodeHandler(server, { oauth: { issuer: as.base, resource: url } })

      const metadata = yield* Effect.promise(() =>
        fetch(`${new URL(url).origin}/.well-known/oauth-protected-resource/custom/mcp`).then((r) => r.json())
      )
      expect(metadata).toMatchObject({ resource: url, authorization_servers: [as.base] })
      const initialize = (token?: string) =>
        Effect.promise(() =>
          fetch(url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 0,
              method: "initialize",
              params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
            })
          })
        )
      const refused = yield* initialize()
      expect(refused.status).toBe(401)
      expect(refused.headers.get("www-authenticate")).toContain("resource_metadata=")

      const token = as.tokens.jwt({ aud: url, sub: "ada", client_id: "app" })
      const transport = yield* StreamableHttp.make({
        name: "protected",
        url,
        headers: { authorization: `Bearer ${token}` }
      })
      const client = yield* McpClient.make().pipe(Effect.provideService(Transport, transport))
      expect(yield* client.callTool("whoami", {})).toEqual(text("ada via app"))
    }).pipe(Effect.provide(HttpClientUndici.layer)))
})
