// `perPrincipal: true` and what `withClient` reaches: the caller's own instance, never the
// server's own (the template, which only lists), and nothing without a principal. Through the
// OAuth gateway a resource subscription is each principal's own: made at its instance (the
// fixture tells an update of a resource as soon as it is subscribed to), and only its own
// instance's updates reach its session; the gateway's management tools read as the caller.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../src/McpClient.js"
import * as NodeGateway from "../../src/NodeGateway.js"
import type { RegistryEvent } from "../../src/RegistryEvent.js"
import { failure } from "../../src/testing/Results.js"
import { Platform } from "../support/platform.js"
import { authServer, gatewayClient, mineFleet, parsed } from "../support/principals.js"
import { survivors } from "../support/processes.js"

const MARKER = "MCP_FLEET_PER_PRINCIPAL_SUBSCRIPTIONS_RUN"
const RUN_ID = `${process.pid}-${Date.now()}`
const URI = "whoami://me"

// The resources/updated a client is told, up to one of `last`, as a fiber started before
// what causes them.
const updatesUntil = (client: McpClient.McpClient, last: string) =>
  client.notifications.pipe(
    Stream.filter((notification) => notification.method === "notifications/resources/updated"),
    Stream.map((notification) => (notification.params as { uri: string }).uri),
    Stream.takeUntil((uri) => uri === last),
    Stream.runCollect,
    Effect.map(Chunk.toReadonlyArray),
    Effect.fork
  )

describe("per-principal instances: withClient and resource subscriptions", () => {
  it.live("withClient reaches the principal's own instance, whose updates carry its principal", () =>
    Effect.scoped(Effect.gen(function*() {
      const { fleet } = yield* mineFleet({ [MARKER]: RUN_ID })
      expect((yield* fleet.status)[0]!.perPrincipal).toBe(true)

      const anonymous = failure(yield* Effect.exit(fleet.withClient("mine", (client) => client.subscribeResource(URI))))
      expect(anonymous.message).toContain("runs one instance per principal")

      const events = yield* fleet.subscribe
      yield* fleet.withClient("mine", (client) => client.subscribeResource(URI), { principal: "alice" })
      let event: RegistryEvent
      do event = yield* Queue.take(events)
      while (event._tag !== "ResourceUpdated")
      expect(event).toMatchObject({ server: "mine", uri: URI, principal: "alice" })
    })).pipe(
      Effect.provide(Platform),
      Effect.zipRight(Effect.sync(() => expect(survivors(MARKER, RUN_ID)).toEqual([])))
    ))

  it.live("through the OAuth gateway, each principal's subscription, and management read, is at its own instance", () =>
    Effect.scoped(Effect.gen(function*() {
      const as = yield* authServer
      const { context } = yield* mineFleet({ [MARKER]: RUN_ID })
      const url = yield* NodeGateway.serveHttp({ port: 0, oauth: { issuer: as.base }, managementTools: true }).pipe(
        Effect.provide(context)
      )
      const alice = yield* gatewayClient(as, url, "alice")
      const bob = yield* gatewayClient(as, url, "bob")
      const [me, other] = (yield* alice.listResources()).map((resource) => resource.uri)

      const alices = yield* updatesUntil(alice, other!)
      const bobs = yield* updatesUntil(bob, me!)
      yield* alice.subscribeResource(me!)
      // Bob's subscription is made at his own instance, though alice holds one of the same resource.
      yield* bob.subscribeResource(me!)
      expect(yield* Fiber.join(bobs)).toEqual([me])
      // Published after bob's update: had his reached her session, it would come before this one.
      yield* alice.subscribeResource(other!)
      expect(yield* Fiber.join(alices)).toEqual([me, other])

      // The management tools act for the caller too: bob's read is his own instance's.
      const read = yield* bob.callTool("ReadMcpResource", { server: "mine", uri: me })
      const text = (read.content[0] as { resource: { text: string } }).resource.text
      expect(parsed(text).token).toBe("bob-upstream-token")
    })).pipe(
      Effect.provide(Platform),
      Effect.zipRight(Effect.sync(() => expect(survivors(MARKER, RUN_ID)).toEqual([])))
    ))
})
