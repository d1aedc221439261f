import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../../src/Catalog.js"
import * as FleetCatalog from "../../../src/internal/serverRegistry/fleetCatalog.js"

const lists = (...tools: ReadonlyArray<string>): Catalog.ServerLists => ({
  ...Catalog.emptyLists,
  tools: tools.map((name) => ({ name, inputSchema: { type: "object" } }))
})

describe("fleetCatalog", () => {
  it.effect("merges every server's lists, and drops a server whose lists are empty", () =>
    Effect.gen(function*() {
      const fleet = yield* FleetCatalog.make(Catalog.defaultNaming)
      yield* fleet.listsChanged("a", lists("x"))
      yield* fleet.listsChanged("b", lists("y"))
      expect((yield* SubscriptionRef.get(fleet.catalog)).tools.map((entry) => entry.name)).toEqual([
        "mcp__a__x",
        "mcp__b__y"
      ])
      yield* fleet.listsChanged("a", Catalog.emptyLists)
      expect((yield* SubscriptionRef.get(fleet.catalog)).tools.map((entry) => entry.name)).toEqual(["mcp__b__y"])
    }))

  it.effect("logs a collision once, when it appears", () =>
    Effect.gen(function*() {
      const logged: Array<unknown> = []
      const logger = Logger.make(({ message }) => logged.push(message))
      const fleet = yield* FleetCatalog.make(Catalog.defaultNaming)
      const feed = Effect.gen(function*() {
        yield* fleet.listsChanged("a.b", lists("c"))
        yield* fleet.listsChanged("a_b", lists("c"))
        yield* fleet.listsChanged("a_b", lists("c", "d"))
      })
      yield* feed.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      expect(logged).toHaveLength(1)
      expect(String(logged[0])).toMatch(/^the tool name 'mcp__a_b__c' is claimed by /)
    }))
})
