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

// A fleet whose servers only record what they are asked.
const fleetOf = (calls: Array<string>) => {
  const client = {
    subscribeResource: (uri: string) => Effect.sync(() => void calls.push(`subscribe ${uri}`)),
    unsubscribeResource: (uri: string) => Effect.sync(() => void calls.push(`unsubscribe ${uri}`))
  } as unknown as McpClient.McpClient
  const registry = {
    withClient: (_server: string, f: (client: McpClient.McpClient) => Effect.Effect<unknown>) => f(client)
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

  it.effect("a URI no server owns is -32002", () =>
    Effect.gen(function*() {
      const subscriptions = yield* Subscriptions.make(fleetOf([]), Effect.succeed(Catalog.empty))
      expect(yield* Effect.flip(subscriptions.subscribe("x://y"))).toMatchObject({
        code: -32002
      })
    }).pipe(Effect.scoped))
})
