// A parked lazy server is a plain record until its first use (internal/serverRegistry/parked.ts):
// its cached tools are checked against their pins, a drifted one held out and approved, and
// its status given, all without starting it; a read or a prompt's get starts it, as a call does,
// and the catalog it had goes on unchanged.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as CatalogCache from "../src/CatalogCache.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import type * as ServerSpec from "../src/ServerSpec.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import * as ToolPins from "../src/ToolPins.js"
import * as ToolSearch from "../src/ToolSearch.js"
import { echoTool, saveCatalogs, TOOLS } from "./support/lazyFleet.js"
import { Platform } from "./support/platform.js"

const toolNames = (fleet: ServerRegistry.ServerRegistry) =>
  Effect.map(SubscriptionRef.get(fleet.catalog), (catalog) => catalog.tools.map((entry) => entry.name).sort())

// A registry over `specs`, their catalogs cached with `cached` and their tools pinned as `TOOLS`.
const fleetOf = (specs: ReadonlyArray<ServerSpec.ServerSpec>, cached = TOOLS) =>
  Effect.gen(function*() {
    const cache = yield* CatalogCache.makeMemory
    yield* saveCatalogs(cache, specs, cached)
    const pins = yield* ToolPins.makeMemory
    yield* Effect.forEach(specs, (spec) =>
      pins.save(ToolPins.identity(spec), new Map(TOOLS.map(({ tool }) => [tool.name, ToolPins.pin(tool, 0)]))))
    const fleet = yield* ServerRegistry.make({ pinning: "quarantine" }).pipe(
      Effect.provide(Platform),
      Effect.provideService(CatalogCache.CatalogCache, cache),
      Effect.provideService(ToolPins.PinStore, pins)
    )
    yield* fleet.reconcile(specs)
    yield* fleet.awaitReady({ servers: "settled", timeout: "5 seconds" })
    return fleet
  })

const lazy = (name: string, server: Partial<FakeServer.SpecOptions> = {}) => ({
  ...FakeServer.spec({ name, tools: TOOLS, resources: [], prompts: [], ...server }),
  lazy: true
})

describe("a parked lazy server", () => {
  it.scoped("its cached tools are checked against their pins, a drift held out and approved, searched, unstarted", () =>
    Effect.gen(function*() {
      const docs = lazy("docs")
      // The cache says `echo` now has another description than its pin.
      const fleet = yield* fleetOf([docs], [{
        ...echoTool("echo"),
        tool: { ...echoTool("echo").tool, description: "changed" }
      }, TOOLS[1]!])
      expect(yield* toolNames(fleet)).toEqual(["mcp__docs__add"])
      expect((yield* fleet.drifted).map((drift) => [drift.server, drift.tool, drift.quarantined])).toEqual([
        ["docs", "echo", true]
      ])
      const [status] = yield* fleet.status
      expect(status!.state._tag).toBe("Idle")
      expect(status!.counts.tools).toBe(1)
      expect(status!.connection).toBeUndefined()
      yield* fleet.approveTool("docs", "echo")
      expect(yield* toolNames(fleet)).toEqual(["mcp__docs__add", "mcp__docs__echo"])
      expect(yield* fleet.drifted).toEqual([])
      // Searched, it is found, still unstarted.
      const search = yield* Effect.flatMap(
        Policy.make({}),
        (policy) => ToolSearch.make.pipe(Effect.provideService(Policy.Policy, policy))
      ).pipe(
        Effect.provideService(ServerRegistry.ServerRegistry, fleet)
      )
      expect((yield* search.search("echo", { limit: 1 })).map((hit) => hit.name)).toEqual(["mcp__docs__echo"])
      expect(docs.connects()).toBe(0)
    }))

  it.scoped("a read starts it, a prompt's get too; the catalog it had stays as it was", () =>
    Effect.gen(function*() {
      const notes = lazy("notes", {
        resources: [{ resource: { uri: "note://one", name: "one" }, text: "the first note" }]
      })
      const ask = lazy("ask", {
        prompts: [{
          prompt: { name: "greet" },
          get: () => ({ messages: [{ role: "user", content: { type: "text", text: "hello" } }] })
        }]
      })
      const fleet = yield* fleetOf([notes, ask])
      const before = yield* toolNames(fleet)
      expect(before).toHaveLength(4)
      expect([notes.connects(), ask.connects()]).toEqual([0, 0])

      const read = yield* fleet.readResource("notes", "note://one")
      expect(read.contents).toEqual([{ uri: "note://one", text: "the first note" }])
      expect([notes.connects(), ask.connects()]).toEqual([1, 0])

      const got = yield* fleet.getPrompt("ask", "greet")
      expect(got.messages[0]!.content).toEqual({ type: "text", text: "hello" })
      expect([notes.connects(), ask.connects()]).toEqual([1, 1])
      expect(yield* toolNames(fleet)).toEqual(before)
    }))
})
