import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as Catalog from "../../../src/Catalog.js"
import type { FleetHub } from "../../../src/internal/gateway/fleetHub.js"
import * as Subscriptions from "../../../src/internal/gateway/subscriptions.js"
import type * as McpClient from "../../../src/McpClient.js"
import * as McpError from "../../../src/McpError.js"
import type * as ServerRegistry from "../../../src/ServerRegistry.js"

const catalog = Effect.succeed(
  Catalog.make(new Map([["alpha", { ...Catalog.emptyLists, resources: [{ uri: "alpha://doc", name: "doc" }] }]]))
)

// A server that serves resources but declares no `resources.subscribe` (the reference
// everything-server on its 2026-07-28 path).
const fleet = (() => {
  const refused = McpError.unsupported("alpha", {
    message: "cannot subscribe to resources: the server did not declare the 'resources.subscribe' capability"
  })
  const client = {
    subscribeResource: () => Effect.fail(refused),
    unsubscribeResource: () => Effect.fail(refused)
  } as unknown as McpClient.McpClient
  const registry = {
    withClient: (_server: string, f: (client: McpClient.McpClient) => Effect.Effect<unknown>) => f(client),
    status: Effect.succeed([])
  } as unknown as ServerRegistry.ServerRegistry
  return { registry, subscribers: new Map() } as unknown as FleetHub
})()

describe("gateway subscriptions to a server that cannot subscribe", () => {
  it.scoped("are accepted (and tell nothing), as are their unsubscriptions", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const session = yield* Scope.extend(Subscriptions.make(fleet, catalog), scope)
      yield* session.subscribe("alpha://doc")
      yield* session.unsubscribe("alpha://doc")
      expect(session.has("alpha", "alpha://doc")).toBe(false)
    }))
})
