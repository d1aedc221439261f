// The server/discover probe and a slow server: one that answers nothing for longer than
// discoverTimeout (a process still starting on a busy machine), then answers in order, is
// still spoken 2026-07-28 to; one that answers a ping but never the probe is a legacy one.
// Over Memory with a raw Peer as the server, on the TestClock.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { negotiate } from "../../../src/internal/mcpClient/handshake.js"
import type * as JsonRpc from "../../../src/JsonRpc.js"
import * as McpSchema from "../../../src/McpSchema.js"
import * as Memory from "../../../src/Memory.js"
import * as Peer from "../../../src/Peer.js"
import { Transport } from "../../../src/Transport.js"

const discovered = {
  resultType: "complete",
  supportedVersions: ["2026-07-28", "2025-11-25"],
  capabilities: { tools: {} },
  serverInfo: { name: "slow", version: "1.0.0" }
}

// A client Peer and a server Peer over Memory; the server records the methods it was asked
// and answers each once `started` (a process that has come up), in the order they came.
const pair = (handlers: Record<string, Peer.Handler>) =>
  Effect.gen(function*() {
    const [client, server] = yield* Memory.makePair({ server: "slow" })
    const started = yield* Deferred.make<void>()
    const methods: Array<string> = []
    const recorded = Object.fromEntries(
      Object.entries(handlers).map(([method, handler]) => [
        method,
        (request: JsonRpc.Request) =>
          Effect.zipRight(
            Effect.zipRight(Effect.sync(() => methods.push(method)), Deferred.await(started)),
            handler(request)
          )
      ])
    )
    yield* Peer.make({ handlers: recorded }).pipe(Effect.provideService(Transport, server))
    const peer = yield* Peer.make().pipe(Effect.provideService(Transport, client))
    return { peer, methods, start: Deferred.succeed(started, undefined) }
  })

const initialize: Peer.Handler = (request) =>
  Effect.succeed({
    protocolVersion: request.params?.protocolVersion,
    capabilities: {},
    serverInfo: { name: "old", version: "1.0.0" }
  })
const ping: Peer.Handler = () => Effect.succeed({})

describe("negotiate with a slow server", () => {
  it.scoped("waits past discoverTimeout for a probe answered late, the server answering in order", () =>
    Effect.gen(function*() {
      const { methods, peer, start } = yield* pair({
        [McpSchema.DISCOVER_METHOD]: () => Effect.succeed(discovered),
        ping,
        initialize
      })
      const negotiating = yield* Effect.fork(negotiate(peer, { discoverTimeout: "2 seconds" }))
      yield* TestClock.adjust("3 seconds")
      yield* start
      const agreed = yield* Fiber.join(negotiating)
      expect(agreed.protocolVersion).toBe("2026-07-28")
      expect(methods).toEqual([McpSchema.DISCOVER_METHOD, "ping"])
    }))

  it.scoped("takes a server that answers a ping but not the probe for a legacy one", () =>
    Effect.gen(function*() {
      const { methods, peer, start } = yield* pair({
        [McpSchema.DISCOVER_METHOD]: () => Effect.never,
        ping,
        initialize
      })
      yield* start
      const negotiating = yield* Effect.fork(negotiate(peer, { discoverTimeout: "2 seconds" }))
      yield* TestClock.adjust("2 seconds")
      const agreed = yield* Fiber.join(negotiating)
      expect(agreed.protocolVersion).toBe("2025-11-25")
      expect(methods).toEqual([McpSchema.DISCOVER_METHOD, "ping", "initialize"])
    }))
})
