import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { answerer } from "../src/internal/mcpServer/alone.js"
import type * as JsonRpc from "../src/JsonRpc.js"
import * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "../src/McpServer.js"

const meta = {
  [McpSchema.MetaKey.ProtocolVersion]: McpSchema.MODERN_PROTOCOL_VERSION,
  [McpSchema.MetaKey.ClientCapabilities]: {}
}

const echo = McpServer.tool({
  name: "echo",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  handler: (args, ctx) => Effect.as(ctx.progress(1, 2), { content: [{ type: "text", text: String(args.text) }] })
})

const call = (id: number): JsonRpc.Request => ({
  jsonrpc: "2.0",
  id,
  method: McpSchema.Method.ToolsCall,
  params: { name: "echo", arguments: { text: "hi" }, _meta: { ...meta, progressToken: "p" } }
})

// What a request's notifications were, by the method and the request they relate to.
const collect = () => {
  const told: Array<readonly [string, JsonRpc.RequestId | undefined]> = []
  const outbound: McpServer.Outbound = {
    notify: (method, _params, related) => Effect.sync(() => void told.push([method, related]))
  }
  return { told, outbound }
}

describe("McpServer.answerModern", () => {
  it.scoped("answers a modern request with no session, its notifications to the outbound", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.fromItems({ serverInfo: { name: "s", version: "1" }, tools: [echo] })
      const { outbound, told } = collect()
      const answer = yield* server.answerModern!(call(7), outbound)
      expect(answer).toMatchObject({ id: 7, result: { resultType: "complete", content: [{ text: "hi" }] } })
      expect(told).toEqual([[McpSchema.Method.Progress, 7]])
      expect(server.sessions()).toBe(0)
    }))

  it.scoped("answers the methods 2026-07-28 removed, and a request without the client's _meta, with their errors", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.fromItems({ serverInfo: { name: "s", version: "1" }, tools: [echo] })
      const ping = yield* server.answerModern!({ jsonrpc: "2.0", id: 1, method: "ping", params: { _meta: meta } }, {})
      expect(ping).toMatchObject({ error: { code: -32601 } })
      const bare = yield* server.answerModern!({ jsonrpc: "2.0", id: 2, method: McpSchema.Method.ToolsList }, {})
      expect(bare).toMatchObject({ error: { code: -32602 } })
    }))

  it.scoped("is absent when the server answers no modern requests", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ serverInfo: { name: "s", version: "1" }, handlers: {}, modern: false })
      expect(server.answerModern).toBeUndefined()
      expect(answerer(server)).toBeUndefined()
    }))

  it.scoped("without it, a server made otherwise answers in a session made for the request, then ended", () =>
    Effect.gen(function*() {
      const made = yield* McpServer.fromItems({ serverInfo: { name: "s", version: "1" }, tools: [echo] })
      const { answerModern: _, ...server } = made
      const { outbound, told } = collect()
      const answer = yield* answerer(server)!(call(3), outbound)
      expect(answer).toMatchObject({ id: 3, result: { resultType: "complete", content: [{ text: "hi" }] } })
      expect(told).toEqual([[McpSchema.Method.Progress, 3]])
      expect(made.sessions()).toBe(0)
    }))
})
