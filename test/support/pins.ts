/**
 * Servers whose tools change on demand, and fleets of them, for the tool pinning tests.
 */
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import type * as McpSchema from "../../src/McpSchema.js"
import type { RegistryEvent } from "../../src/RegistryEvent.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import type * as ServerSpec from "../../src/ServerSpec.js"
import * as FakeServer from "../../src/testing/FakeServer.js"
import type * as ToolPins from "../../src/ToolPins.js"
import { stateOf, until } from "./events.js"
import { Platform } from "./platform.js"

export const echo = (description: string): McpSchema.Tool => ({
  name: "echo",
  description,
  inputSchema: { type: "object", properties: { text: { type: "string" } } }
})

// A server whose tools/list answers with whatever `tools` holds when asked.
export const drifting = (name: string, initial: ReadonlyArray<McpSchema.Tool>) => {
  const handle = { tools: initial }
  const spec = FakeServer.spec({
    name,
    capabilities: { tools: { listChanged: true } },
    tools: [{
      tool: echo("unused"),
      call: (args) => Effect.succeed({ content: [{ type: "text", text: `echo:${JSON.stringify(args)}` }] })
    }],
    handlers: { "tools/list": () => Effect.sync(() => ({ tools: handle.tools })) }
  })
  // Changes the tools and tells the fleet, as a server does.
  const change = (tools: ReadonlyArray<McpSchema.Tool>) =>
    Effect.gen(function*() {
      handle.tools = tools
      yield* spec.current().peer.notify("notifications/tools/list_changed")
      yield* TestClock.adjust("1 second")
    })
  return { spec, handle, change }
}

// An identity of that key, for the stores alone.
export const id = (key: string): ToolPins.Identity => ({ key, server: key })

export const names = (fleet: ServerRegistry.ServerRegistry) =>
  Effect.map(SubscriptionRef.get(fleet.catalog), (catalog) => catalog.tools.map((entry) => entry.name))

export const isDrift = (event: RegistryEvent): event is Extract<RegistryEvent, { _tag: "ToolDrifted" }> =>
  event._tag === "ToolDrifted"

// A fleet of `spec`, with its events subscribed to before it starts.
export const fleetOf = (spec: ServerSpec.ServerSpec, options: ServerRegistry.Options) =>
  Effect.gen(function*() {
    const fleet = yield* ServerRegistry.make(options).pipe(Effect.provide(Platform))
    const events = yield* fleet.subscribe
    yield* fleet.reconcile([spec])
    yield* until(events, stateOf(spec.name, "Ready"))
    return { fleet, events }
  })
