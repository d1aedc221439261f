// Parked lazy servers: a lazy server with a cached catalog is made Idle with it and no fiber,
// its loop started by its first use; the fleet's start (the cache read) goes on in the
// background, so a gateway answers initialize before the fleet has read a single cache entry.
// The cache here holds every read until the test lets it go: each step is seen by events.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as CatalogCache from "../src/CatalogCache.js"
import * as Gateway from "../src/Gateway.js"
import * as McpClient from "../src/McpClient.js"
import * as Memory from "../src/Memory.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import type * as ServerSpec from "../src/ServerSpec.js"
import { Transport } from "../src/Transport.js"
import { stateOf, until } from "./support/events.js"
import { lazyFake, saveCatalogs } from "./support/lazyFleet.js"
import { Platform } from "./support/platform.js"

// A cache holding `specs`' entries whose reads wait for `open`, counted.
const heldCache = (specs: ReadonlyArray<ServerSpec.ServerSpec>) =>
  Effect.gen(function*() {
    const memory = yield* CatalogCache.makeMemory
    yield* saveCatalogs(memory, specs)
    const open = yield* Deferred.make<void>()
    let reads = 0
    const cache = CatalogCache.CatalogCache.of({
      load: (identity) =>
        Effect.zipRight(Effect.sync(() => reads++), Effect.zipRight(Deferred.await(open), memory.load(identity))),
      save: memory.save
    })
    return { cache, open: Deferred.succeed(open, undefined), reads: () => reads }
  })

const toolNames = (fleet: ServerRegistry.ServerRegistry) =>
  Effect.map(SubscriptionRef.get(fleet.catalog), (catalog) => catalog.tools.map((entry) => entry.name).sort())

// A registry on `cache`, its events subscribed to before `servers` start.
const started = (servers: ReadonlyArray<ServerSpec.ServerSpec>, cache: CatalogCache.CatalogCache) =>
  Effect.gen(function*() {
    const fleet = yield* ServerRegistry.make({ pinning: "quarantine" }).pipe(
      Effect.provide(Platform),
      Effect.provideService(CatalogCache.CatalogCache, cache)
    )
    const events = yield* fleet.subscribe
    yield* fleet.reconcile(servers)
    return { fleet, events }
  })

describe("parked lazy servers", () => {
  it.scoped("reconcile returns before the cache is read; the server is Idle with it, unstarted; a call starts it", () =>
    Effect.gen(function*() {
      const docs = lazyFake("docs")
      const held = yield* heldCache([docs])
      const { events, fleet } = yield* started([docs], held.cache)
      // The cache has not answered: the server is not Idle yet, and lists nothing.
      expect((yield* fleet.status)[0]!.state._tag).toBe("Pending")
      expect(yield* toolNames(fleet)).toEqual([])
      yield* held.open
      yield* until(events, stateOf("docs", "Idle"))
      yield* fleet.awaitReady({ servers: "settled", timeout: "1 second" })
      expect(yield* toolNames(fleet)).toEqual(["mcp__docs__add", "mcp__docs__echo"])
      expect(docs.connects()).toBe(0)
      const result = yield* fleet.callTool("mcp__docs__echo", { q: 1 })
      expect(result.content).toEqual([{ type: "text", text: "echo:{\"q\":1}" }])
      expect(docs.connects()).toBe(1)
      // Its loop took the lists restored while it was parked: the cache was read once.
      expect(held.reads()).toBe(1)
    }))

  it.scoped("a call while the cache is being read waits for it, then starts the server once", () =>
    Effect.gen(function*() {
      const docs = lazyFake("docs")
      const held = yield* heldCache([docs])
      const { events, fleet } = yield* started([docs], held.cache)
      const call = yield* Effect.fork(fleet.callServerTool("docs", "echo", { n: 2 }))
      yield* held.open
      yield* until(events, stateOf("docs", "Ready"))
      expect((yield* call.await)._tag).toBe("Success")
      expect(docs.connects()).toBe(1)
      expect(held.reads()).toBe(1)
    }))

  it.scoped("a server removed while parked is Stopped, never started", () =>
    Effect.gen(function*() {
      const docs = lazyFake("docs")
      const held = yield* heldCache([docs])
      yield* held.open
      const { events, fleet } = yield* started([docs], held.cache)
      yield* until(events, stateOf("docs", "Idle"))
      yield* fleet.reconcile([])
      yield* until(events, stateOf("docs", "Stopped"))
      expect(yield* toolNames(fleet)).toEqual([])
      expect(docs.connects()).toBe(0)
    }))

  it.scoped("the gateway answers initialize while the fleet's cache is still unread, and lists it once read", () =>
    Effect.gen(function*() {
      const docs = lazyFake("docs")
      const held = yield* heldCache([docs])
      const context = yield* Layer.build(
        Policy.layer({}).pipe(
          Layer.provideMerge(ServerRegistry.layer({ servers: [docs] })),
          Layer.provide(Platform),
          Layer.provide(Layer.succeed(CatalogCache.CatalogCache, held.cache))
        )
      )
      const [end, server] = yield* Memory.makePair({ server: "gateway", client: "client" })
      yield* Gateway.serve({ toolSearch: false }).pipe(
        Effect.provideService(Transport, server),
        Effect.provide(context),
        Effect.forkScoped
      )
      // McpClient.make initializes: answered with the cache still held.
      const client = yield* McpClient.make({ requestTimeout: "10 seconds" }).pipe(Effect.provideService(Transport, end))
      expect(client.serverInfo).toBeDefined()
      expect(held.reads()).toBe(1)
      const listing = yield* Effect.fork(client.listTools())
      yield* held.open
      expect(
        (yield* listing.await).pipe((exit) => exit._tag === "Success" ? exit.value.map((t) => t.name).sort() : exit)
      )
        .toEqual(["mcp__docs__add", "mcp__docs__echo"])
      expect(docs.connects()).toBe(0)
    }))
})
