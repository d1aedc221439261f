// Mcp-Method / Mcp-Name against the body (issue 24 §10, 2026-07-28 Server Validation): a proxy
// routes and filters on these headers and the server acts on the body, so McpServer refuses
// any request whose headers disagree with its body — 400 and a -32020 error naming the header
// — inside a session too (where a stateful client need not send them, but those sent must
// agree), before the session sees it.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as McpServer from "../src/McpServer.js"

const URL_ = "http://127.0.0.1/mcp"
type Handler = (request: Request) => Promise<Response>

const serve = Effect.gen(function*() {
  let calls = 0
  const echo = McpServer.tool({
    name: "echo",
    description: "echoes",
    parameters: Schema.Struct({}),
    handler: () => Effect.sync(() => ({ content: [{ type: "text" as const, text: `call ${++calls}` }] }))
  })
  const server = yield* McpServer.fromItems({ serverInfo: { name: "headers", version: "1.0.0" }, tools: [echo] })
  const handler = yield* McpServer.toWebHandler(server, { path: "/mcp" })
  return { handler, calls: () => calls }
})

const post = (handler: Handler, body: unknown, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await handler(
      new Request(URL_, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(body)
      })
    )
    return { status: response.status, session: response.headers.get("mcp-session-id"), text: await response.text() }
  })

const session = (handler: Handler) =>
  Effect.map(
    post(handler, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } }
    }),
    (answer) => answer.session!
  )

const call = (id: number, name = "echo") => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} }
})

const mismatch = (text: string) => JSON.parse(text) as { id: number; error: { code: number; message: string } }

describe("McpServer: Mcp-Method and Mcp-Name against the body", () => {
  it.scoped("refuses a session's request whose Mcp-Name or Mcp-Method disagrees, naming the header", () =>
    Effect.gen(function*() {
      const { calls, handler } = yield* serve
      const id = yield* session(handler)
      const byName = yield* post(handler, call(1), { "mcp-session-id": id, "mcp-name": "safe_tool" })
      expect(byName.status).toBe(400)
      expect(mismatch(byName.text)).toMatchObject({
        id: 1,
        error: { code: -32020, message: "Header mismatch: Mcp-Name 'safe_tool' does not match params.name" }
      })
      const byMethod = yield* post(handler, call(2), { "mcp-session-id": id, "mcp-method": "tools/list" })
      expect(byMethod.status).toBe(400)
      expect(mismatch(byMethod.text).error.message).toBe(
        "Header mismatch: Mcp-Method 'tools/list' does not match the method 'tools/call'"
      )
      expect(calls()).toBe(0)
      // Headers that agree, or none (a stateful client need not send them), go through.
      const agreeing = yield* post(handler, call(3), {
        "mcp-session-id": id,
        "mcp-method": "tools/call",
        "mcp-name": "echo"
      })
      expect(agreeing.status).toBe(200)
      expect((yield* post(handler, call(4), { "mcp-session-id": id })).status).toBe(200)
      expect(calls()).toBe(2)
    }))

  it.scoped("checks every request of a batch, and a modern request that names a session", () =>
    Effect.gen(function*() {
      const { calls, handler } = yield* serve
      const id = yield* session(handler)
      const batch = yield* post(handler, [call(5), call(6, "other")], { "mcp-session-id": id, "mcp-name": "echo" })
      expect(batch.status).toBe(400)
      expect(mismatch(batch.text)).toMatchObject({ id: 6, error: { code: -32020 } })
      const modern = {
        ...call(7),
        params: { name: "echo", arguments: {}, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }
      }
      const refused = yield* post(handler, modern, { "mcp-session-id": id, "mcp-protocol-version": "2026-07-28" })
      expect(refused.status).toBe(400)
      expect(mismatch(refused.text).error.message).toBe("Header mismatch: Mcp-Method is missing")
      expect(calls()).toBe(0)
    }))
})
