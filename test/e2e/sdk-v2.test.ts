// The gateway over HTTP used by the official SDK v2 client (`@modelcontextprotocol/client`)
// in both eras — the 2025 handshake (initialize, a session) and 2026-07-28 pinned (no
// session, `_meta` on every request) — in front of a fleet of both eras: server-everything
// on stdio (a stateful revision) and an McpServer of items over Streamable HTTP on
// 127.0.0.1 (2026-07-28). The fleet's status reports each server's revision.
import { Client } from "@modelcontextprotocol/client"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as McpServer from "../../src/McpServer.js"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as NodeMcpServer from "../../src/NodeMcpServer.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { EVERYTHING_STDIO } from "../support/everythingSuite.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"

const NOTE = "modern://note"

// The 2026-07-28 server of the fleet: one tool and one resource.
const modernServer = McpServer.fromItems({
  serverInfo: { name: "modern", version: "1.0.0" },
  modern: true,
  tools: [
    McpServer.tool({
      name: "add",
      description: "Adds two numbers",
      parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
      handler: ({ a, b }) => Effect.succeed({ content: [{ type: "text", text: String(a + b) }] })
    })
  ],
  resources: [
    McpServer.resource({
      uri: NOTE,
      name: "note",
      mimeType: "text/plain",
      read: () => Effect.succeed({ contents: [{ uri: NOTE, mimeType: "text/plain", text: "served statelessly" }] })
    })
  ]
})

const scope = Effect.runSync(Scope.make())
let gatewayUrl: URL
let status: ReadonlyArray<ServerRegistry.ServerStatus>

beforeAll(async () => {
  const fleet = Policy.layer({}).pipe(Layer.provideMerge(ServerRegistry.layer()), Layer.provide(Platform))
  const context = await Effect.runPromise(Layer.buildWithScope(fleet, scope))
  const url = await Effect.runPromise(
    Effect.gen(function*() {
      const modernUrl = yield* NodeMcpServer.serveHttp(yield* modernServer, { port: 0 })
      const registry = yield* ServerRegistry.ServerRegistry
      yield* registry.reconcile([
        {
          name: "everything",
          transport: { type: "stdio", command: process.execPath, args: [EVERYTHING_STDIO, "stdio"] }
        },
        { name: "modern", transport: { type: "http", url: modernUrl } }
      ])
      yield* registry.awaitReady({ servers: "settled", timeout: hangGuard(30_000) })
      status = yield* registry.status
      return yield* NodeGateway.serveHttp({ port: 0, modern: true })
    }).pipe(Effect.provide(context), Scope.extend(scope))
  )
  gatewayUrl = new URL(url)
}, hangGuard(60_000))

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

describe("the official SDK v2 client through the gateway, fronting a 2025 and a 2026 server", () => {
  it("the fleet's status says each server's revision", () => {
    const revisions = Object.fromEntries(status.map((server) => [server.name, server.protocolVersion]))
    expect(revisions).toEqual({ everything: "2025-11-25", modern: "2026-07-28" })
    expect(status.every((server) => server.state._tag === "Ready")).toBe(true)
  })

  const eras = [
    { era: "legacy", negotiation: { mode: "legacy" as const }, version: "2025-11-25" },
    { era: "modern", negotiation: { mode: { pin: "2026-07-28" } }, version: "2026-07-28" }
  ]

  for (const { era, negotiation, version } of eras) {
    it(`in the ${era} era (${version}): lists both servers' tools, calls one of each, reads a resource`, async () => {
      const client = new Client({ name: `sdk-v2-${era}`, version: "1.0.0" }, { versionNegotiation: negotiation })
      await client.connect(new StreamableHTTPClientTransport(gatewayUrl))
      try {
        expect(client.getProtocolEra()).toBe(era)
        expect(client.getNegotiatedProtocolVersion()).toBe(version)
        const { tools } = await client.listTools()
        const names = tools.map((tool) => tool.name)
        expect(names).toEqual(expect.arrayContaining(["mcp__everything__echo", "mcp__modern__add"]))
        const echo = await client.callTool({ name: "mcp__everything__echo", arguments: { message: era } })
        expect(echo.content).toEqual([{ type: "text", text: `Echo: ${era}` }])
        const sum = await client.callTool({ name: "mcp__modern__add", arguments: { a: 2, b: 3 } })
        expect(sum.content).toEqual([{ type: "text", text: "5" }])
        const note = await client.readResource({ uri: NOTE })
        expect(note.contents).toEqual([{ uri: NOTE, mimeType: "text/plain", text: "served statelessly" }])
      } finally {
        await client.close()
      }
    })
  }
})
