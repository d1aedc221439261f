// A lazy server's restore reads its catalog cache entry and its pins side by side, not one
// after the other: each store here answers only once the other has been asked, so a restore
// that read them in turn would never end. The review still uses those pins: a cached tool
// whose definition differs from its pin stays quarantined.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as CatalogCache from "../src/CatalogCache.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { text } from "../src/testing/Results.js"
import * as ToolPins from "../src/ToolPins.js"
import { hangGuard } from "./support/guard.js"
import { Platform } from "./support/platform.js"

const tool = (name: string, description = name): FakeServer.FakeTool => ({
  tool: { name, description, inputSchema: { type: "object" } },
  call: () => Effect.succeed(text(name))
})

describe("a lazy server's restore", () => {
  it.scoped("reads the cache entry and the pins side by side, and reviews with those pins", () =>
    Effect.gen(function*() {
      const spec = {
        ...FakeServer.spec({ name: "lazy", tools: [tool("echo"), tool("add")], resources: [], prompts: [] }),
        lazy: true
      }
      const identity = ToolPins.identity(spec)
      const cached: ReadonlyArray<McpSchema.Tool> = [tool("echo").tool, tool("add", "changed since pinned").tool]
      const memoryCache = yield* CatalogCache.makeMemory
      yield* memoryCache.save(identity, {
        digest: CatalogCache.digest(spec),
        savedAt: 0,
        lists: { tools: cached, resources: [], templates: [], prompts: [] }
      })
      const memoryPins = yield* ToolPins.makeMemory
      yield* memoryPins.save(
        identity,
        new Map([["echo", ToolPins.pin(tool("echo").tool, 0)], ["add", ToolPins.pin(tool("add").tool, 0)]])
      )
      const cacheAsked = yield* Deferred.make<void>()
      const pinsAsked = yield* Deferred.make<void>()
      const cache: CatalogCache.CatalogCache = {
        ...memoryCache,
        load: (id) =>
          Deferred.succeed(cacheAsked, undefined).pipe(
            Effect.zipRight(Deferred.await(pinsAsked)),
            Effect.zipRight(memoryCache.load(id))
          )
      }
      const pins: ToolPins.PinStore = {
        ...memoryPins,
        load: (id) =>
          Deferred.succeed(pinsAsked, undefined).pipe(
            Effect.zipRight(Deferred.await(cacheAsked)),
            Effect.zipRight(memoryPins.load(id))
          )
      }
      const fleet = yield* ServerRegistry.make({ pinning: "quarantine" }).pipe(
        Effect.provide(Platform),
        Effect.provideService(CatalogCache.CatalogCache, cache),
        Effect.provideService(ToolPins.PinStore, pins)
      )
      yield* fleet.reconcile([spec])
      // A restore that read them in turn would hang here (until the hang guard).
      yield* fleet.awaitReady({ servers: "settled", timeout: "1 minute" })
      const names = (yield* SubscriptionRef.get(fleet.catalog)).tools.map((entry) => entry.name)
      expect(names).toEqual(["mcp__lazy__echo"])
      expect((yield* fleet.drifted).map((drift) => drift.tool)).toEqual(["add"])
      expect((yield* fleet.status)[0]?.state._tag).toBe("Idle")
      expect(spec.connects()).toBe(0)
    }), hangGuard(10_000))
})
