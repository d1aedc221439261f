import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Catalog from "../../../src/Catalog.js"
import type { FleetHub } from "../../../src/internal/gateway/fleetHub.js"
import * as Subscriptions from "../../../src/internal/gateway/subscriptions.js"
import type * as McpClient from "../../../src/McpClient.js"
import type * as ServerRegistry from "../../../src/ServerRegistry.js"

const catalog = Effect.succeed(
  Catalog.make(new Map([["alpha", { ...Catalog.emptyLists, resources: [{ uri: "alpha://doc", name: "doc" }] }]]))
)

// A fleet whose servers only record what they are asked (and for whom, when `perPrincipal`).
const fleetOf = (calls: Array<string>, perPrincipal = false) => {
  const clientFor = (principal: string | undefined) => {
    const whom = principal === undefined ? "" : ` for ${principal}`
    return {
      subscribeResource: (uri: string) => Effect.sync(() => void calls.push(`subscribe ${uri}${whom}`)),
      unsubscribeResource: (uri: string) => Effect.sync(() => void calls.push(`unsubscribe ${uri}${whom}`))
    } as unknown as McpClient.McpClient
  }
  const registry = {
    withClient: (
      _server: string,
      f: (client: McpClient.McpClient) => Effect.Effect<unknown>,
      options?: ServerRegistry.CallOptions
    ) => f(clientFor(perPrincipal ? options?.principal : undefined)),
    status: Effect.succeed([{ name: "alpha", perPrincipal }])
  } as unknown as ServerRegistry.ServerRegistry
  return { registry, subscribers: new Map() } as unknown as FleetHub
}

describe("gateway subscriptions", () => {
  it.effect("are counted across sessions: the server is asked once and told to stop after the last one", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const fleet = fleetOf(calls)
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      const a = yield* Scope.extend(Subscriptions.make(fleet, catalog), first)
      const b = yield* Scope.extend(Subscriptions.make(fleet, catalog), second)
      yield* a.subscribe("alpha://doc")
      yield* a.subscribe("alpha://doc")
      yield* b.subscribe("alpha://doc")
      expect(calls).toEqual(["subscribe alpha://doc"])
      expect(a.has("alpha", "alpha://doc")).toBe(true)
      yield* a.unsubscribe("alpha://doc")
      expect(a.has("alpha", "alpha://doc")).toBe(false)
      expect(calls).toEqual(["subscribe alpha://doc"])
      // A session that ends lets go of what it held.
      yield* Scope.close(second, Exit.void)
      expect(calls).toEqual(["subscribe alpha://doc", "unsubscribe alpha://doc"])
      expect(fleet.subscribers.size).toBe(0)
      yield* Scope.close(first, Exit.void)
    }))

  it.effect("at a per-principal server are each principal's own: asked, counted and told apart", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const fleet = fleetOf(calls, true)
      const alice = yield* Subscriptions.make(fleet, catalog, "alice")
      const alicesOther = yield* Subscriptions.make(fleet, catalog, "alice")
      const bob = yield* Subscriptions.make(fleet, catalog, "bob")
      yield* alice.subscribe("alpha://doc")
      yield* alicesOther.subscribe("alpha://doc")
      yield* bob.subscribe("alpha://doc")
      expect(calls).toEqual(["subscribe alpha://doc for alice", "subscribe alpha://doc for bob"])
      // An update is the session's only when told by its principal's instance.
      expect(alice.has("alpha", "alpha://doc", "alice")).toBe(true)
      expect(alice.has("alpha", "alpha://doc", "bob")).toBe(false)
      expect(alice.has("alpha", "alpha://doc")).toBe(false)
      yield* bob.unsubscribe("alpha://doc")
      yield* alice.unsubscribe("alpha://doc")
      expect(calls.slice(2)).toEqual(["unsubscribe alpha://doc for bob"])
    }).pipe(Effect.scoped))

  it.effect("a URI no server owns is -32002", () =>
    Effect.gen(function*() {
      const subscriptions = yield* Subscriptions.make(fleetOf([]), Effect.succeed(Catalog.empty))
      expect(yield* Effect.flip(subscriptions.subscribe("x://y"))).toMatchObject({
        code: -32002
      })
    }).pipe(Effect.scoped))
})
