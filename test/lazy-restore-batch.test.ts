// A reconcile's lazy servers restore their cached lists in batches: the fleet's catalog is
// rebuilt once per batch of 32 (not once per server), and only then do they show Idle, so a
// client that waits for the fleet to settle finds each of them in the catalog.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as CatalogCache from "../src/CatalogCache.js"
import type { RegistryEvent } from "../src/RegistryEvent.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import { until } from "./support/events.js"
import { lazyFake, saveCatalogs } from "./support/lazyFleet.js"
import { Platform } from "./support/platform.js"

const SERVERS = 40

describe("lazy servers restored together", () => {
  it.scoped("one catalog rebuild per batch of servers, each done before they show Idle", () =>
    Effect.gen(function*() {
      const specs = Array.from({ length: SERVERS }, (_, i) => lazyFake(`s${i}`))
      const cache = yield* CatalogCache.makeMemory
      yield* saveCatalogs(cache, specs)
      const fleet = yield* ServerRegistry.make({ pinning: "quarantine" }).pipe(
        Effect.provide(Platform),
        Effect.provideService(CatalogCache.CatalogCache, cache)
      )
      const events = yield* fleet.subscribe
      // Every catalog the registry publishes, from the empty one on, until it holds them all.
      const catalogs = yield* fleet.catalog.changes.pipe(
        Stream.takeUntil((catalog) => catalog.tools.length === 2 * SERVERS),
        Stream.runCollect,
        Effect.fork
      )
      yield* fleet.reconcile(specs)
      const idle = yield* until(events, (event): event is Extract<RegistryEvent, { _tag: "ServerStateChanged" }> =>
        event._tag === "ServerStateChanged" && event.state._tag === "Idle")
      // The first Idle comes after its batch's rebuild: the catalog holds that batch already.
      const names = (yield* SubscriptionRef.get(fleet.catalog)).tools.map((entry) =>
        entry.name
      )
      expect(names.length).toBeGreaterThanOrEqual(64)
      expect(names).toContain(`mcp__${idle.server}__echo`)
      const seen = [...yield* Fiber.join(catalogs)]
      expect(seen.map((catalog) => catalog.tools.length)).toEqual([0, 64, 2 * SERVERS])
      yield* fleet.awaitReady({ servers: "settled", timeout: "5 seconds" })
      expect((yield* fleet.status).every((status) => status.state._tag === "Idle")).toBe(true)
      expect(specs.every((spec) => spec.connects() === 0)).toBe(true)
      yield* Queue.shutdown(events)
    }))
})
