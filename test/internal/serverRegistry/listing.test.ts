import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as TestClock from "effect/TestClock"
import * as Catalog from "../../../src/Catalog.js"
import { changes, watch } from "../../../src/internal/serverRegistry/listing.js"
import type * as JsonRpc from "../../../src/JsonRpc.js"
import * as McpClient from "../../../src/McpClient.js"
import type { RegistryEvent } from "../../../src/RegistryEvent.js"
import { Transport } from "../../../src/Transport.js"
import { modernServer } from "../../support/modern.js"

const tool = (name: string, description = name) => ({ name, description, inputSchema: { type: "object" as const } })

describe("listing", () => {
  it("tells nothing when the lists are the same", () => {
    const lists = { ...Catalog.emptyLists, tools: [tool("a")] }
    expect(changes("s", lists, { ...lists, tools: [tool("a")] })).toEqual([])
  })

  it("tells each kind that changed, as one event per kind", () => {
    const before = { ...Catalog.emptyLists, tools: [tool("a"), tool("b")] }
    const after = {
      ...Catalog.emptyLists,
      tools: [tool("a", "new"), tool("c")],
      prompts: [{ name: "p" }]
    }
    const events = changes("s", before, after)
    expect(events.map((event) => event._tag)).toEqual(["ToolsChanged", "PromptsChanged"])
    expect(events[0]).toMatchObject({
      server: "s",
      added: [tool("c")],
      removed: [tool("b")],
      changed: [tool("a", "new")]
    })
  })
})

describe("the watch of a 2026-07-28 server", () => {
  it.scoped("takes list changes from its listen stream only, and re-lists", () =>
    Effect.gen(function*() {
      let tools = [tool("a")]
      const listened = yield* Deferred.make<{ id: JsonRpc.RequestId; filter: unknown }>()
      const capabilities = { tools: { listChanged: true }, prompts: {} }
      const fake = yield* modernServer("s", capabilities, {
        "tools/list": () => Effect.sync(() => ({ tools })),
        "subscriptions/listen": (request) =>
          Effect.zipRight(
            Deferred.succeed(listened, { id: request.id, filter: request.params?.notifications }),
            Effect.never
          )
      })
      const c = yield* McpClient.make().pipe(Effect.provideService(Transport, fake.transport))
      expect(c.protocolVersion).toBe("2026-07-28")
      let lists: Catalog.ServerLists = { ...Catalog.emptyLists, tools }
      const events = yield* Queue.unbounded<RegistryEvent>()
      // The watch subscribes, which waits for the list changes' stream to be acknowledged.
      const watching = yield* Effect.fork(watch({
        server: "s",
        refreshDebounce: "100 millis",
        lists: () => lists,
        setLists: (next) =>
          Effect.sync(() => {
            const before = lists
            lists = next
            return changes("s", before, next)
          }).pipe(Effect.flatMap((all) => Queue.offerAll(events, all))),
        publish: (event) => Queue.offer(events, event)
      }, c))
      const { filter, id } = yield* Deferred.await(listened)
      // Only what the server announces changes of.
      expect(filter).toEqual({ toolsListChanged: true })
      const meta = { _meta: { "io.modelcontextprotocol/subscriptionId": id } }
      yield* fake.peer.notify("notifications/subscriptions/acknowledged", {
        ...meta,
        notifications: { toolsListChanged: true }
      })
      yield* Fiber.join(watching)
      // Not on the stream: not for this revision.
      tools = [tool("a"), tool("b")]
      yield* fake.peer.notify("notifications/tools/list_changed", {})
      yield* Effect.yieldNow()
      yield* TestClock.adjust("1 second")
      expect(yield* Queue.size(events)).toBe(0)
      yield* fake.peer.notify("notifications/tools/list_changed", meta)
      yield* Effect.repeat(Effect.zipRight(TestClock.adjust("100 millis"), Queue.size(events)), { until: (n) => n > 0 })
      const event = yield* Queue.take(events)
      expect(event).toMatchObject({ _tag: "ToolsChanged", added: [tool("b")] })
    }))
})
