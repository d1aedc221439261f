import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as PubSub from "effect/PubSub"
import * as TestClock from "effect/TestClock"
import { awaitReady, isTarget } from "../../../src/internal/serverRegistry/awaitReady.js"
import type { ServerActor } from "../../../src/internal/serverRegistry/serverActor.js"
import * as McpError from "../../../src/McpError.js"
import { RegistryEvent } from "../../../src/RegistryEvent.js"
import { ServerState } from "../../../src/ServerState.js"
import { failure } from "../../../src/testing/Results.js"

// The registry's events, one hub for every actor: awaitReady reads the states again
// whenever some come.
const pubsub = Effect.runSync(PubSub.unbounded<RegistryEvent>())

// Just what awaitReady reads of an actor: its name, spec and status; a change of its state is
// published as the registry does.
const actor = (name: string, extra: { required?: boolean; disabled?: boolean } = {}) =>
  Effect.sync(() => {
    let now: ServerState = ServerState.Connecting({ attempt: 1, since: 0 })
    const set = (next: ServerState) =>
      Effect.suspend(() => {
        const previous = now
        now = next
        return PubSub.publish(pubsub, RegistryEvent.ServerStateChanged({ server: name, state: next, previous }))
      })
    const fake = { name, spec: { name, ...extra }, now: () => now } as unknown as ServerActor
    return { actor: fake, set, events: PubSub.subscribe(pubsub) }
  })

const ready = ServerState.Ready({ protocolVersion: "2025-11-25", serverInfo: { name: "x", version: "1" }, since: 0 })

describe("awaitReady", () => {
  it.effect("chooses its servers by target", () =>
    Effect.gen(function*() {
      const a = (yield* actor("a", { required: true })).actor
      const b = (yield* actor("b", { disabled: true })).actor
      expect([isTarget("required", a), isTarget("required", b)]).toEqual([true, false])
      expect([isTarget("settled", a), isTarget("settled", b)]).toEqual([true, false])
      expect([isTarget(["b"], a), isTarget(["b"], b)]).toEqual([false, true])
    }))

  it.effect("completes when every server is ready", () =>
    Effect.gen(function*() {
      const a = yield* actor("a")
      const b = yield* actor("b")
      const waiting = yield* Effect.fork(awaitReady([a.actor, b.actor], "required", "1 second", a.events))
      yield* a.set(ready)
      yield* b.set(ready)
      yield* Fiber.join(waiting)
    }))

  it.effect("fails at once for a server that can no longer become ready, unless settling", () =>
    Effect.gen(function*() {
      const a = yield* actor("a")
      yield* a.set(ServerState.Disabled())
      const error = failure(yield* Effect.exit(awaitReady([a.actor], "required", "1 second", a.events)))
      expect(error.server).toBe("a")
      expect(error.reason).toMatchObject({ _tag: "Unavailable", state: "Disabled" })
      yield* awaitReady([a.actor], "settled", "1 second", a.events)
    }))

  it.effect("names one laggard as the server, several only in the message", () =>
    Effect.gen(function*() {
      const a = yield* actor("a")
      const b = yield* actor("b")
      const one = yield* Effect.fork(Effect.exit(awaitReady([a.actor], "required", "1 second", a.events)))
      yield* TestClock.adjust("1 second")
      const late = failure(yield* Fiber.join(one))
      expect(late.server).toBe("a")
      expect(late.message).toBe("server 'a': not ready in time: 'a' is Connecting for 1.0 s")
      const two = yield* Effect.fork(Effect.exit(awaitReady([a.actor, b.actor], "required", "1 second", a.events)))
      yield* TestClock.adjust("1 second")
      const both = failure(yield* Fiber.join(two))
      expect(both.server).toBeUndefined()
      expect(both).toBeInstanceOf(McpError.McpError)
      expect(both.message).toBe("not ready in time: 'a' is Connecting for 2.0 s; 'b' is Connecting for 2.0 s")
    }))
})
