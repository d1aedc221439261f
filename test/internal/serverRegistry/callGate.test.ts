import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import * as CallGate from "../../../src/internal/serverRegistry/callGate.js"
import type * as Deadline from "../../../src/internal/serverRegistry/deadline.js"
import type * as McpClient from "../../../src/McpClient.js"
import * as McpError from "../../../src/McpError.js"
import { ServerState } from "../../../src/ServerState.js"
import { failure } from "../../../src/testing/Results.js"

const ready = ServerState.Ready({ protocolVersion: "2025-11-25", serverInfo: { name: "x", version: "1" }, since: 0 })
const client = { server: "s" } as McpClient.McpClient
// A call's limits: a ready wait of `readyMs`, no total.
const within = (readyMs = 1000): Deadline.CallDeadline => ({
  server: "s",
  readyMs,
  idleMs: undefined,
  totalMs: Infinity,
  endsAt: Infinity
})

const gate = (initial: ServerState) =>
  Effect.gen(function*() {
    const state = yield* SubscriptionRef.make(initial)
    let now = initial
    let wakes = 0
    const g = CallGate.make({
      server: "s",
      state,
      now: () => now,
      lastError: () => undefined,
      wake: Effect.sync(() => void wakes++),
      mask: (error) => error
    })
    const set = (next: ServerState) => Effect.zipRight(Effect.sync(() => now = next), SubscriptionRef.set(state, next))
    return { gate: g, set, wakes: () => wakes }
  })

describe("callGate", () => {
  it.effect("fails at once when the server cannot become ready by waiting", () =>
    Effect.gen(function*() {
      const { gate: g } = yield* gate(ServerState.Disabled())
      const error = failure(yield* Effect.exit(g.withClient(() => Effect.succeed(1), within())))
      expect(error.reason).toMatchObject({ _tag: "Unavailable", state: "Disabled" })
      expect(error.message).toBe("server 's': is disabled")
    }))

  it.effect("holds a call until the connection is ready, waking an idle server", () =>
    Effect.gen(function*() {
      const { gate: g, set, wakes } = yield* gate(ServerState.Idle({ since: 0 }))
      const call = yield* Effect.fork(g.withClient((c) => Effect.succeed(c.server), within()))
      // Let the call subscribe to the state and find the server idle.
      yield* TestClock.adjust("1 millis")
      expect(wakes()).toBe(1)
      g.setClient(client)
      yield* set(ready)
      expect(yield* Fiber.join(call)).toBe("s")
    }))

  it.effect("gives up after the ready timeout", () =>
    Effect.gen(function*() {
      const { gate: g } = yield* gate(ServerState.Connecting({ attempt: 1, since: 0 }))
      const call = yield* Effect.fork(
        Effect.exit(g.withClient(() => Effect.succeed(1), within(200)))
      )
      yield* TestClock.adjust("200 millis")
      expect(failure(yield* Fiber.join(call)).message).toBe("server 's': was not ready within 200 ms (Connecting)")
    }))

  it.effect("sends a call refused unsent to the next connection; one that may have been delivered fails", () =>
    Effect.gen(function*() {
      const { gate: g, set } = yield* gate(ready)
      const dead = { server: "dead" } as McpClient.McpClient
      const next = { server: "next" } as McpClient.McpClient
      const closed = (unsent: boolean) => McpError.closed("s", { message: "gone", method: "tools/call", unsent })
      g.setClient(dead)
      const tried: Array<string> = []
      const call = yield* Effect.fork(g.withClient((c) =>
        Effect.suspend(() => {
          tried.push(c.server)
          return c === dead ? Effect.fail(closed(true)) : Effect.succeed(c.server)
        }), within()))
      // Still Ready and still the dead connection in the gate: the call waits for another.
      yield* TestClock.adjust("1 millis")
      expect(tried).toEqual(["dead"])
      g.setClient(next)
      yield* set(ready)
      expect(yield* Fiber.join(call)).toBe("next")
      const delivered = failure(yield* Effect.exit(g.withClient(() => Effect.fail(closed(false)), within())))
      expect(delivered.unsent).toBe(false)
    }))

  it.effect("is idle only when no call has been in flight for the idle time", () =>
    Effect.gen(function*() {
      const { gate: g } = yield* gate(ready)
      g.setClient(client)
      const idle = yield* Effect.fork(g.idle(1000))
      yield* TestClock.adjust("600 millis")
      yield* g.withClient(() => Effect.void, within())
      yield* TestClock.adjust("600 millis")
      expect(idle.unsafePoll()).toBeNull()
      yield* TestClock.adjust("400 millis")
      yield* Fiber.join(idle)
    }))
})
