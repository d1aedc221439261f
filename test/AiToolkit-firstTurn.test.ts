// A model's first turn, made right after the fleet starts, gets the tools of a server that is
// still connecting: the bridges (FleetTools, and so AiToolkit and AiSdk) wait for the settle
// window as the gateway does, once per registry, and never past it.
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as AiSdk from "../src/AiSdk.js"
import * as AiToolkit from "../src/AiToolkit.js"
import * as FleetTools from "../src/FleetTools.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { Platform } from "./support/platform.js"

const echo: FakeServer.FakeTool = {
  tool: { name: "echo", inputSchema: { type: "object" } },
  call: () => Effect.succeed({ content: [{ type: "text", text: "echo" }] })
}

// A server whose connection takes `delay` (forever when undefined).
const slow = (name: string, delay: Duration.DurationInput | undefined) => {
  const spec = FakeServer.spec({ name, tools: [echo] })
  const connect = delay === undefined ? Effect.never : Effect.delay(spec.transport.connect, delay)
  return { ...spec, transport: { ...spec.transport, connect } }
}

const fleetOf = (servers: ReadonlyArray<ReturnType<typeof slow>>) =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.make({ servers }).pipe(Effect.provide(Platform))
    const policy = yield* Policy.make({}).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
    return <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.provideService(ServerRegistry.ServerRegistry, registry),
        Effect.provideService(Policy.Policy, policy)
      )
  })

describe("the bridges' first turn", () => {
  it.scoped("sees the tools of a server still connecting: FleetTools, AiToolkit and AiSdk", () =>
    Effect.gen(function*() {
      const provide = yield* fleetOf([slow("late", "1 second")])
      const made = yield* Effect.fork(provide(Effect.all([FleetTools.make, AiToolkit.toolkit()])))
      yield* TestClock.adjust("1 second")
      const [fleet, kit] = yield* Fiber.join(made)
      expect((yield* fleet.select().tools).map((tool) => tool.name)).toEqual(["mcp__late__echo"])
      expect(Object.keys(kit.tools)).toEqual(["mcp__late__echo"])
      expect(Object.keys(AiSdk.toAiSdkTools(fleet))).toEqual(["mcp__late__echo"])
    }))

  it.scoped("waits no longer than the settle window, and only once per registry", () =>
    Effect.gen(function*() {
      const provide = yield* fleetOf([slow("hung", undefined), slow("late", "1 second")])
      const first = yield* Effect.fork(provide(FleetTools.make))
      yield* TestClock.adjust("1 second")
      expect(first.unsafePoll()).toBeNull()
      yield* TestClock.adjust(Duration.subtract(FleetTools.SETTLE, Duration.seconds(1)))
      const fleet = yield* Fiber.join(first)
      expect((yield* fleet.select().tools).map((tool) => tool.name)).toEqual(["mcp__late__echo"])
      // A later turn's toolkit is made at once.
      const again = yield* Effect.fork(provide(AiToolkit.toolkit()))
      yield* Effect.yieldNow()
      expect(Object.keys((yield* Fiber.join(again)).tools)).toEqual(["mcp__late__echo"])
    }))
})
