// subscriptions/listen and MRTR over Streamable HTTP against a 2026-07-28 fixture on
// 127.0.0.1: the listen request's stream, dropped and opened again, and closed when the
// subscription ends; an input round over plain POSTs.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Host from "../../src/Host.js"
import * as HttpClientUndici from "../../src/HttpClientUndici.js"
import * as McpClient from "../../src/McpClient.js"
import * as StreamableHttp from "../../src/StreamableHttp.js"
import { Transport } from "../../src/Transport.js"
import { json, type Seen, serve, sse, status } from "../support/httpServer.js"

const capabilities = { tools: { listChanged: true } }

const meta = (id: unknown) => ({ _meta: { "io.modelcontextprotocol/subscriptionId": id } })

// The fixture: the first listen stream is acknowledged, says one change and drops; every
// later one is acknowledged, says one change and stays open.
const fixture = () => {
  let listens = 0
  let polls = 0
  return serve((request: Seen) => {
    const { id, method, params } = request.body ?? {}
    switch (method) {
      case "server/discover":
        return Effect.succeed(json({
          jsonrpc: "2.0",
          id,
          result: {
            resultType: "complete",
            supportedVersions: ["2026-07-28"],
            capabilities,
            serverInfo: { name: "f", version: "1" }
          }
        }))
      case "subscriptions/listen": {
        listens++
        const events = [
          {
            data: {
              jsonrpc: "2.0",
              method: "notifications/subscriptions/acknowledged",
              params: { ...meta(id), notifications: params.notifications }
            }
          },
          { data: { jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { ...meta(id), n: listens } } }
        ]
        return Effect.succeed(sse(events, { open: listens > 1 }))
      }
      case "tools/list":
        return Effect.succeed(json({
          jsonrpc: "2.0",
          id,
          result: { resultType: "complete", tools: [{ name: "t", inputSchema: { type: "object" } }] }
        }))
      case "tools/call":
        if (params.name === "slow") {
          return Effect.succeed(json({
            jsonrpc: "2.0",
            id,
            result: { resultType: "task", taskId: "task-é", status: "working", ttlMs: null, pollIntervalMs: 10 }
          }))
        }
        return Effect.succeed(json({
          jsonrpc: "2.0",
          id,
          result: params.requestState === undefined
            ? {
              resultType: "input_required",
              inputRequests: { where: { method: "roots/list" } },
              requestState: "opaque"
            }
            : { resultType: "complete", content: [{ type: "text", text: JSON.stringify(params.inputResponses) }] }
        }))
      case "tasks/get":
        // The first poll meets a busy server.
        if (++polls === 1) return Effect.succeed(status(503, "busy"))
        return Effect.succeed(json({
          jsonrpc: "2.0",
          id,
          result: {
            resultType: "complete",
            taskId: params.taskId,
            status: "completed",
            ttlMs: null,
            result: { content: [{ type: "text", text: "done" }] }
          }
        }))
      default:
        return Effect.succeed(json({ jsonrpc: "2.0", id, error: { code: -32601, message: "no" } }))
    }
  })
}

const connect = (url: string) =>
  Effect.gen(function*() {
    const transport = yield* StreamableHttp.make({ name: "fixture", url })
    return yield* McpClient.make({ requestTimeout: "10 seconds" }).pipe(Effect.provideService(Transport, transport))
  })

describe("2026-07-28 over Streamable HTTP", () => {
  it.scopedLive("a listen stream that drops is opened again with a new id; its end closes it", () =>
    Effect.gen(function*() {
      const server = yield* fixture()
      const client = yield* connect(server.url)
      expect(client.protocolVersion).toBe("2026-07-28")
      const scope = yield* Scope.make()
      const subscription = yield* client.listen({ toolsListChanged: true }).pipe(Scope.extend(scope))
      expect(subscription.acknowledged()).toEqual({ toolsListChanged: true })
      const first = yield* Queue.take(subscription.notifications)
      const second = yield* Queue.take(subscription.notifications)
      expect([first.params?.n, second.params?.n]).toEqual([1, 2])
      const listens = server.seen.filter((request) => request.body?.method === "subscriptions/listen")
      expect(listens).toHaveLength(2)
      expect(listens[1]!.body.id).not.toEqual(listens[0]!.body.id)
      expect(listens[1]!.headers["mcp-method"]).toBe("subscriptions/listen")
      expect(listens[1]!.body.params._meta["io.modelcontextprotocol/protocolVersion"]).toBe("2026-07-28")
      // Ending the subscription hangs up on its stream.
      yield* Scope.close(scope, Exit.void)
      yield* server.hangup
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("answers an input round and retries the call with the state", () =>
    Effect.gen(function*() {
      const server = yield* fixture()
      const client = yield* connect(server.url).pipe(
        Effect.provide(Host.layerRoots([{ uri: "file:///w", name: "w" }]))
      )
      const result = yield* client.callTool("t", {})
      expect(result.content).toEqual([{
        type: "text",
        text: JSON.stringify({ where: { roots: [{ uri: "file:///w", name: "w" }] } })
      }])
      const calls = server.seen.filter((request) => request.body?.method === "tools/call")
      expect(calls.map((call) => call.body.params.requestState)).toEqual([undefined, "opaque"])
      expect(calls[1]!.headers["mcp-name"]).toBe("t")
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("follows a task of the tasks extension past a lost poll, naming it in Mcp-Name", () =>
    Effect.gen(function*() {
      const server = yield* fixture()
      const client = yield* connect(server.url)
      const result = yield* client.callTool("slow", {})
      expect(result.content).toEqual([{ type: "text", text: "done" }])
      const gets = server.seen.filter((request) => request.body?.method === "tasks/get")
      expect(gets).toHaveLength(2)
      const get = gets[1]!
      expect(get.body.params.taskId).toBe("task-é")
      // Not ASCII: the Base64 sentinel form.
      expect(get.headers["mcp-name"]).toBe(`=?base64?${Buffer.from("task-é").toString("base64")}?=`)
      const call = server.seen.find((request) => request.body?.method === "tools/call")!
      expect(call.body.params._meta["io.modelcontextprotocol/clientCapabilities"].extensions).toEqual({
        "io.modelcontextprotocol/tasks": {}
      })
    }).pipe(Effect.provide(HttpClientUndici.layer)))
})
