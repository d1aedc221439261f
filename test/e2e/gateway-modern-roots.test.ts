// A8: through the gateway, a 2026-07-28 client's roots reach the fleet's servers, as a
// stateful client's do. The official SDK v2 client, pinned to 2026-07-28 with a roots/list
// handler, calls a fronted stateful server that asks for roots outside any call (after
// initialize, and when told they changed): the server sees the client's root, not the
// configured one.
import { describe, expect, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Gateway from "../../src/Gateway.js"
import * as Memory from "../../src/Memory.js"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as Peer from "../../src/Peer.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { Transport } from "../../src/Transport.js"
import { Platform } from "../support/platform.js"

// A stateful server that lists roots when initialized and when told they changed; its tool
// `roots` says the roots it last saw.
const rootsServer = {
  name: "files",
  transport: {
    type: "custom" as const,
    key: "files",
    connect: Effect.gen(function*() {
      const [client, end] = yield* Memory.makePair({ server: "files", client: "fleet" })
      let seen = "(none)"
      const peer = yield* Peer.make({
        handlers: {
          initialize: () =>
            Effect.succeed({
              protocolVersion: "2025-11-25",
              capabilities: { tools: {} },
              serverInfo: { name: "files", version: "1" }
            }),
          "tools/list": () => Effect.succeed({ tools: [{ name: "roots", inputSchema: { type: "object" } }] }),
          "tools/call": () => Effect.sync(() => ({ content: [{ type: "text", text: seen }] }))
        }
      }).pipe(Effect.provideService(Transport, end))
      const told = yield* peer.subscribe
      yield* Queue.take(told).pipe(
        Effect.flatMap((notification) =>
          notification.method === "notifications/initialized" ||
            notification.method === "notifications/roots/list_changed"
            ? Effect.ignore(Effect.tap(peer.request("roots/list"), (result) =>
              Effect.sync(() => {
                seen = (result.roots as Array<{ uri: string }>).map((root) => root.uri).join(",")
              })))
            : Effect.void
        ),
        Effect.forever,
        Effect.forkScoped
      )
      return client
    })
  }
}

describe("gateway: a 2026-07-28 client's roots", () => {
  it.scopedLive("are asked in its first call, and the fleet's servers see them", () =>
    Effect.gen(function*() {
      const fleet = Policy.layer({}).pipe(
        Layer.provideMerge(ServerRegistry.layer()),
        Layer.provideMerge(Gateway.layerHost({ roots: [{ uri: "file:///config/folder" }] })),
        Layer.provide(Platform)
      )
      const context = yield* Layer.build(fleet)
      const url = yield* Effect.gen(function*() {
        const registry = yield* ServerRegistry.ServerRegistry
        yield* registry.reconcile([rootsServer])
        yield* registry.awaitReady({ servers: ["files"], timeout: "10 seconds" })
        return yield* NodeGateway.serveHttp({ port: 0, modern: true })
      }).pipe(Effect.provide(context))
      const client = new Client(
        { name: "modern-roots", version: "1.0.0" },
        { capabilities: { roots: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } }
      )
      let asked = 0
      client.setRequestHandler("roots/list", () => {
        asked++
        return { roots: [{ uri: "file:///client/project", name: "project" }] }
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(url)))),
        () => Effect.promise(() => client.close())
      )
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28")
      const first = yield* Effect.promise(() => client.callTool({ name: "mcp__files__roots", arguments: {} }))
      expect(asked).toBe(1)
      // The server was told of the change and listed them again (by the time the call ran, or
      // right after): the next call shows the client's root.
      const second = yield* Effect.promise(() => client.callTool({ name: "mcp__files__roots", arguments: {} }))
      expect([first.content, second.content]).toContainEqual([{ type: "text", text: "file:///client/project" }])
      expect(second.content).toEqual([{ type: "text", text: "file:///client/project" }])
      // Asked once: later calls cost no round.
      expect(asked).toBe(1)
    }))
})
