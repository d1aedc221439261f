/**
 * What one open HTTP session costs an McpServer's endpoint (the gateway's is one): N sessions
 * are opened through `McpServer.toWebHandler` once N are open already (so the code they run is
 * compiled), and the growth of the JS heap (after a full collection) is divided by N.
 *
 * Run: `node --expose-gc --import tsx bench/sessions.ts [N]` (default 1000).
 *
 * @module
 */
import * as Effect from "effect/Effect"
import * as McpServer from "../src/McpServer.js"
import { memory, perServer } from "./fleet/memory.js"

const n = Number(process.argv[2] ?? 1000)

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } }
})

const open = (handler: (request: Request) => Promise<Response>) =>
  Effect.promise(async () => {
    const response = await handler(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: initialize
      })
    )
    await response.text()
  })

const program = Effect.gen(function*() {
  const server = yield* McpServer.fromItems({ serverInfo: { name: "bench", version: "1.0.0" } })
  const handler = yield* McpServer.toWebHandler(server, {
    maxSessions: 2 * n + 1,
    initializeTimeout: "1 hour"
  })
  const batch = Effect.repeatN(open(handler), n - 1)
  yield* batch
  const before = memory()
  yield* batch
  const after = memory()
  const { heapKB } = perServer(before, after, n)
  yield* Effect.sync(() => console.log(`${n} sessions open: ${heapKB} KB of JS heap per session`))
})

Effect.runPromise(Effect.scoped(program)).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
