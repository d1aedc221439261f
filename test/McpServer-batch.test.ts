// A client that bends JSON-RPC: a batch whose requests share an id, and arguments nested too
// deep to walk. Over the HTTP edge (where batches come) with raw fetch, and in memory.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as http from "node:http"
import * as McpServer from "../src/McpServer.js"
import * as NodeMcpServer from "../src/NodeMcpServer.js"
import { text } from "../src/testing/Results.js"
import { listenLoopback, postMcp } from "./support/httpServer.js"

const echo = McpServer.tool({
  name: "echo",
  description: "Says it back",
  parameters: Schema.Struct({ text: Schema.Unknown }),
  handler: ({ text: said }) => Effect.succeed(text(typeof said === "string" ? said : "deep"))
})

const serve = Effect.gen(function*() {
  const server = yield* McpServer.fromItems({ serverInfo: { name: "edge", version: "1.0.0" }, tools: [echo] })
  const handler = yield* NodeMcpServer.toNodeHandler(server)
  const listener = http.createServer(handler)
  return `${yield* listenLoopback(listener)}/mcp`
})

const post = (url: string, body: string, session?: string) => Effect.promise(() => postMcp(url, body, session))

const initialize = (url: string) =>
  Effect.gen(function*() {
    const opened = yield* post(
      url,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
      })
    )
    const session = opened.session!
    yield* post(url, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session)
    return session
  })

const deep = (levels: number): string => `${"[".repeat(levels)}${"]".repeat(levels)}`

describe("McpServer: batches with duplicate ids, too-deep input", () => {
  it.scopedLive("answers each request of a batch whose requests share an id", () =>
    Effect.gen(function*() {
      const url = yield* serve
      const session = yield* initialize(url)
      const batch = [
        { jsonrpc: "2.0", id: 7, method: "ping" },
        { jsonrpc: "2.0", id: 7, method: "tools/list" },
        { jsonrpc: "2.0", id: 8, method: "ping" }
      ]
      const answered = yield* post(url, JSON.stringify(batch), session)
      expect(answered.status).toBe(200)
      const answers = JSON.parse(answered.text) as Array<
        { id: unknown; result?: unknown; error?: { code: number; message: string } }
      >
      expect(answers).toHaveLength(3)
      expect(answers.filter((a) => a.id === 7)).toHaveLength(2)
      const refused = answers.find((a) => a.error !== undefined)!
      expect(refused.error!.code).toBe(-32600)
      expect(refused.error!.message).toContain("id 7")
      expect(answers.filter((a) => a.result !== undefined)).toHaveLength(2)
    }))

  it.scopedLive("refuses arguments nested 100,000 deep with a clear error, not a stack overflow", () =>
    Effect.gen(function*() {
      const url = yield* serve
      const session = yield* initialize(url)
      const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":${
        deep(100_000)
      }}}}`
      const answered = yield* post(url, body, session)
      expect(answered.text).not.toContain("Maximum call stack")
      const answer = JSON.parse(answered.text.startsWith("{") ? answered.text : answered.text.split("data: ").at(-1)!)
      expect(answer.error.code).toBe(-32602)
      expect(answer.error.message).toContain(`nested deeper than ${McpServer.MAX_INPUT_DEPTH} levels`)
      // What is within the limit is served.
      const fine = yield* post(
        url,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "echo", arguments: { text: JSON.parse(deep(50)) } }
        }),
        session
      )
      expect(fine.text).toContain("deep")
    }))
})
