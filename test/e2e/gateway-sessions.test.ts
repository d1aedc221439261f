// Session lockout through the gateway on node:http (issue 24 §3): abandoned sessions from one
// address never lock a newcomer out. At the per-address cap (100 by default) an initialize
// ends that address's least recently used idle session, which then gets 404.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { Platform } from "../support/platform.js"

const gateway = (options: Partial<NodeGateway.HttpOptions> = {}) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      Policy.layer({}).pipe(Layer.provideMerge(ServerRegistry.layer()), Layer.provide(Platform))
    )
    return yield* NodeGateway.serveHttp({ port: 0, ...options }).pipe(Effect.provide(context))
  })

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" }

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } }
})

const open = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", headers: HEADERS, body: initialize })
    await response.text()
    expect(response.status).toBe(200)
    return response.headers.get("mcp-session-id")!
  })

const ping = (url: string, session: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { ...HEADERS, "mcp-session-id": session },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })
    })
    await response.text()
    return response.status
  })

describe("gateway sessions", () => {
  it.scopedLive(
    "101 abandoned sessions from one address: the newcomer gets in, the oldest idle one ends",
    () =>
      Effect.gen(function*() {
        const url = yield* gateway()
        const abandoned: Array<string> = []
        for (let i = 0; i < 100; i++) abandoned.push(yield* open(url))
        const newcomer = yield* open(url)
        expect(yield* ping(url, newcomer)).toBe(200)
        expect(yield* ping(url, abandoned[0]!)).toBe(404)
        expect(yield* ping(url, abandoned[99]!)).toBe(200)
      }),
    { timeout: 60_000 }
  )
})
