// The WebSocket transport against a fixture server (`ws` on 127.0.0.1): the `mcp`
// subprotocol, headers on the upgrade, refusals, garbage frames, oversize frames, hang-ups,
// and a fleet server of type ws.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as http from "node:http"
import * as WS from "ws"
import * as McpClient from "../../src/McpClient.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import * as WebSocket from "../../src/WebSocket.js"
import { stateOf, until } from "../support/events.js"
import { echo } from "../support/httpServer.js"
import { Platform } from "../support/platform.js"

interface Upgrade {
  readonly protocol: string | undefined
  readonly headers: http.IncomingHttpHeaders
}

// A WebSocket MCP server: answers initialize, tools/list and tools/call (echo); `onCall`
// may answer a call itself (return true when it did).
const serveWs = (options: {
  readonly refuse?: number
  readonly onCall?: (socket: WS.WebSocket, message: any) => boolean
} = {}): Effect.Effect<{ readonly url: string; readonly upgrades: Array<Upgrade> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const upgrades: Array<Upgrade> = []
    const server = yield* Effect.acquireRelease(
      Effect.async<WS.WebSocketServer>((resume) => {
        const wss: WS.WebSocketServer = new WS.WebSocketServer({
          host: "127.0.0.1",
          port: 0,
          handleProtocols: (protocols) => protocols.has("mcp") ? "mcp" : false,
          verifyClient: (_info, done) => options.refuse === undefined ? done(true) : done(false, options.refuse)
        }, () => resume(Effect.succeed(wss)))
      }),
      (wss) =>
        Effect.async<void>((resume) => {
          for (const client of wss.clients) client.terminate()
          wss.close(() => resume(Effect.void))
        })
    )
    server.on("connection", (socket, request) => {
      upgrades.push({ protocol: socket.protocol, headers: request.headers })
      socket.on("message", (data) => {
        const message = JSON.parse(String(data))
        const reply = (result: unknown) => socket.send(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }))
        if (message.method === "initialize") {
          reply({
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "ws-fixture", version: "1" }
          })
        } else if (message.method === "tools/list") {
          reply({ tools: [{ name: "echo", inputSchema: { type: "object" } }] })
        } else if (message.method === "tools/call") {
          if (options.onCall?.(socket, message) !== true) reply(echo(message))
        } else if (message.id !== undefined) {
          // As any JSON-RPC server: the 2026-07-28 probe among them, refused at once.
          socket.send(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no" } }))
        }
      })
    })
    return { url: `ws://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, upgrades }
  })

const connect = (url: string, options: Partial<WebSocket.Options> = {}) =>
  Effect.gen(function*() {
    const transport = yield* WebSocket.make({ name: "socket", url, ...options })
    const client = yield* McpClient.make().pipe(Effect.provideService(Transport, transport))
    return { client, transport }
  })

describe("WebSocket", () => {
  it.scopedLive("speaks MCP over the mcp subprotocol, with the configured headers on the upgrade", () =>
    Effect.gen(function*() {
      const server = yield* serveWs()
      const { client, transport } = yield* connect(server.url, {
        headers: { authorization: Redacted.make("Bearer ws-secret") }
      })
      expect(transport.kind).toBe("ws")
      expect(client.serverInfo.name).toBe("ws-fixture")
      expect(firstText(yield* client.callTool("echo", { text: "over a socket" }))).toBe("over a socket")
      expect(server.upgrades).toHaveLength(1)
      expect(server.upgrades[0]!.protocol).toBe("mcp")
      expect(server.upgrades[0]!.headers["authorization"]).toBe("Bearer ws-secret")
    }))

  it.scopedLive("an upgrade refused with 401 is an Http error", () =>
    Effect.gen(function*() {
      const server = yield* serveWs({ refuse: 401 })
      const error = failure(yield* Effect.exit(connect(server.url)))
      expect(error.reason).toMatchObject({ _tag: "Http", status: 401, method: "the WebSocket upgrade" })
      expect(error.message).toBe("server 'socket' answered the WebSocket upgrade with HTTP 401")
    }))

  it.scopedLive("skips a garbage frame with a warning naming the server; the call still succeeds", () => {
    const lines: Array<string> = []
    return Effect.gen(function*() {
      const server = yield* serveWs({
        onCall: (socket, message) => {
          socket.send("not json at all")
          socket.send(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: echo(message) }))
          return true
        }
      })
      const { client } = yield* connect(server.url)
      expect(firstText(yield* client.callTool("echo", { text: "fine" }))).toBe("fine")
      expect(lines).toEqual(["server 'socket' sent a frame that is not JSON; skipped: not json at all"])
    }).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => lines.push(String(message)))))
    )
  })

  it.scopedLive("a frame answering a call with a broken envelope fails that call at once, quoting it", () =>
    Effect.gen(function*() {
      const server = yield* serveWs({
        onCall: (socket, message) => {
          socket.send(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":1,"error":{}}`)
          return true
        }
      })
      const { client } = yield* connect(server.url)
      const error = failure(yield* Effect.exit(client.callTool("echo", {}, { timeout: "30 seconds" })))
      expect(error.reason).toMatchObject({ _tag: "Protocol", method: "tools/call" })
      expect(error.message).toContain(`"result":1,"error":{}`)
    }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logger.none))))

  it.scopedLive("a frame over the size cap fails the connection with a Limit error", () =>
    Effect.gen(function*() {
      const server = yield* serveWs({
        onCall: (socket, message) => {
          socket.send(
            JSON.stringify({
              jsonrpc: "2.0",
              id: message.id,
              result: echo({ params: { arguments: { text: "x".repeat(8192) } } })
            })
          )
          return true
        }
      })
      const { client } = yield* connect(server.url, { maxMessageBytes: 4096 })
      const error = failure(yield* Effect.exit(client.callTool("echo", { text: "big" })))
      expect(error.reason).toMatchObject({ _tag: "Limit", what: "a message", limit: 4096 })
      expect(error.message).toBe("server 'socket': a message exceeds the limit of 4096")
    }))

  it.scopedLive("the server hanging up fails the pending call with Closed and the close code", () =>
    Effect.gen(function*() {
      const server = yield* serveWs({
        onCall: (socket) => {
          socket.close(1011, "internal error")
          return true
        }
      })
      const { client } = yield* connect(server.url)
      const error = failure(yield* Effect.exit(client.callTool("echo", { text: "bye" })))
      expect(error.reason._tag).toBe("Closed")
      expect(error.message).toBe(
        "server 'socket': the WebSocket closed with code 1011 (internal error) before answering tools/call"
      )
      const after = failure(yield* Effect.exit(client.callTool("echo", { text: "again" })))
      expect(after.reason._tag).toBe("Closed")
    }))

  it.scopedLive("a fleet server of type ws is connected and routed like any other", () =>
    Effect.gen(function*() {
      const server = yield* serveWs()
      const fleet = yield* ServerRegistry.make()
      const events = yield* fleet.subscribe
      yield* fleet.reconcile([{ name: "socket", transport: { type: "ws", url: server.url } }])
      yield* until(events, stateOf("socket", "Ready"))
      const [status] = yield* fleet.status
      expect(status!.transport).toBe("ws")
      expect(firstText(yield* fleet.callTool("mcp__socket__echo", { text: "routed" }))).toBe("routed")
    }).pipe(Effect.provide(Platform)))
})
