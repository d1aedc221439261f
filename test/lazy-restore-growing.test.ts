// Lazy servers are restored into the catalog in growing batches: the first 32 are listed as
// soon as they are restored, and each later batch is twice the one before (32, 64, 128, ...),
// so a hundred take three catalog rebuilds (32, 96, 100 servers), not four (32, 64, 96, 100).
// Each rebuild costs as much as the catalog is big.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as CatalogCache from "../src/CatalogCache.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import { hangGuard } from "./support/guard.js"
import { echoTool, lazyFake, saveCatalogs } from "./support/lazyFleet.js"
import { Platform } from "./support/platform.js"

const restoredIn = (servers: number) =>
  Effect.gen(function*() {
    const tools = [echoTool("echo")]
    const specs = Array.from({ length: servers }, (_, i) => lazyFake(`s${i}`, tools))
    const cache = yield* CatalogCache.makeMemory
    yield* saveCatalogs(cache, specs, tools)
    const fleet = yield* ServerRegistry.make({ pinning: "quarantine" }).pipe(
      Effect.provide(Platform),
      Effect.provideService(CatalogCache.CatalogCache, cache)
    )
    const catalogs = yield* fleet.catalog.changes.pipe(
      Stream.takeUntil((catalog) => catalog.tools.length === servers),
      Stream.runCollect,
      Effect.fork
    )
    yield* fleet.reconcile(specs)
    yield* fleet.awaitReady({ servers: "settled", timeout: "1 minute" })
    expect(specs.every((spec) => spec.connects() === 0)).toBe(true)
    return [...yield* Fiber.join(catalogs)].map((catalog) => catalog.tools.length)
  })

describe("lazy servers restored in growing batches", () => {
  it.scoped("a hundred servers: three rebuilds, not four", () =>
    Effect.gen(function*() {
      expect(yield* restoredIn(100)).toEqual([0, 32, 96, 100])
    }), hangGuard(10_000))

  it.scoped("each batch twice the one before: 32, 64, 128", () =>
    Effect.gen(function*() {
      expect(yield* restoredIn(230)).toEqual([0, 32, 96, 224, 230])
    }), hangGuard(20_000))
})
