// A 2026-07-28 server that names a listen stream by its request id given back as a string
// (the conformance repo's reference server: `String(id)`): its acknowledgment and
// notifications still belong to that stream.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as JsonRpc from "../../../src/JsonRpc.js"
import * as McpClient from "../../../src/McpClient.js"
import { Transport } from "../../../src/Transport.js"
import { modernServer } from "../../support/modern.js"

describe("subscriptions/listen: a stream named by its id as a string", () => {
  it.scoped("is acknowledged, and its list changes come through", () =>
    Effect.gen(function*() {
      const listened = yield* Deferred.make<JsonRpc.RequestId>()
      const fake = yield* modernServer("s", { tools: { listChanged: true } }, {
        "subscriptions/listen": (request) => Effect.zipRight(Deferred.succeed(listened, request.id), Effect.never)
      })
      const c = yield* McpClient.make({ requestTimeout: "2 seconds" }).pipe(
        Effect.provideService(Transport, fake.transport)
      )
      const subscribing = yield* Effect.fork(c.subscribe)
      const id = yield* Deferred.await(listened)
      expect(typeof id).toBe("number")
      const meta = { _meta: { "io.modelcontextprotocol/subscriptionId": String(id) } }
      yield* fake.peer.notify("notifications/subscriptions/acknowledged", {
        ...meta,
        notifications: { toolsListChanged: true }
      })
      const incoming = yield* subscribing.await.pipe(Effect.flatten)
      yield* fake.peer.notify("notifications/tools/list_changed", meta)
      const told = yield* Queue.take(incoming)
      expect(told.method).toBe("notifications/tools/list_changed")
    }))
})
