// A routed call's time limits, decided once when it enters the registry, on the TestClock:
// the wait for the server (`readyTimeout`), the request's inactivity (`timeout`) and the
// whole call (`maxTotalTimeout`, which the Policy's `limits.timeout` comes in through) — the
// total counting the wait for the server and every request of a call that runs as a task.
import { describe, expect, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as TestClock from "effect/TestClock"
import * as McpError from "../src/McpError.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import type * as ServerSpec from "../src/ServerSpec.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure } from "../src/testing/Results.js"
import { Platform } from "./support/platform.js"

// The tools the fake servers were called with, in order: a test moves the clock only once its
// call has reached the server, since the checks on the way (the Policy's validator, loaded on
// first use) take turns of the scheduler, not time on the clock.
const reached = Effect.runSync(Queue.unbounded<string>())

const never = (name: string, execution?: McpSchema.Tool["execution"]): FakeServer.FakeTool => ({
  tool: { name, inputSchema: { type: "object" }, ...(execution === undefined ? {} : { execution }) },
  call: () => Effect.zipRight(Queue.offer(reached, name), Effect.never)
})

// A server whose tools never finish: `hang` a plain call, `job` a call that runs as a task.
const hanging: ServerSpec.ServerSpec = {
  name: "slow",
  transport: {
    type: "custom",
    key: "slow",
    connect: Effect.map(
      FakeServer.make({ name: "slow", tools: [never("hang"), never("job", { taskSupport: "required" })] }),
      (server) => server.transport
    )
  }
}

// A server that never becomes ready: every connection is refused.
const refusing = (readyTimeout: Duration.DurationInput): ServerSpec.ServerSpec => ({
  name: "down",
  readyTimeout,
  transport: {
    type: "custom",
    key: "down",
    connect: Effect.fail(McpError.transport("down", { message: "refused" }))
  }
})

const noJitter = { initialDelay: "100 millis", factor: 2, maxDelay: "1 second", jitter: 0 } as const

const fleet = (servers: ReadonlyArray<ServerSpec.ServerSpec>) =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.make({ restart: noJitter, servers }).pipe(Effect.provide(Platform))
    const ready = servers.filter((spec) => spec.name !== "down").map((spec) => spec.name)
    if (ready.length > 0) yield* registry.awaitReady({ servers: ready, timeout: "1 second" })
    return registry
  })

// Starts `call`, moves the clock by `by` (once the call reached tool `at`, when given), and gives
// its failure, which must have come by then: the clock moves no further, so a call that needed
// more time never ends and the test times out. It is awaited, not polled: a timer that fired
// may take a few turns of the scheduler to fail the call.
const failsAfter = <A>(call: Effect.Effect<A, McpError.McpError>, by: Duration.DurationInput, at?: string) =>
  Effect.gen(function*() {
    // What earlier calls reached is not this call's.
    yield* Queue.takeAll(reached)
    const fiber = yield* Effect.fork(call)
    if (at !== undefined) yield* Queue.take(reached).pipe(Effect.repeat({ until: (name) => name === at }))
    yield* TestClock.adjust(by)
    return failure(yield* Fiber.await(fiber))
  })

describe("a call's deadlines", () => {
  it.scoped("maxTotalTimeout counts the wait for the server, which it cuts short", () =>
    Effect.gen(function*() {
      const registry = yield* fleet([refusing("10 seconds")])
      const error = yield* failsAfter(
        registry.callServerTool("down", "anything", {}, { maxTotalTimeout: "2 seconds" }),
        "2 seconds"
      )
      expect(error.reason).toMatchObject({ _tag: "Timeout", method: "tools/call", afterMs: 2000, kind: "total" })
    }))

  it.scoped("a call that waited for its server, then timed out, says the call's maximum, not what was left", () =>
    Effect.gen(function*() {
      // Ready half a second after the call starts: the request gets the 1.5 s that are left.
      const late: ServerSpec.ServerSpec = {
        name: "late",
        transport: {
          type: "custom",
          key: "late",
          connect: Effect.zipRight(
            Effect.sleep("500 millis"),
            Effect.map(FakeServer.make({ name: "late", tools: [never("hang")] }), (server) => server.transport)
          )
        }
      }
      const registry = yield* ServerRegistry.make({ restart: noJitter, servers: [late] }).pipe(Effect.provide(Platform))
      const error = yield* failsAfter(
        registry.callServerTool("late", "hang", {}, { maxTotalTimeout: "2 seconds" }),
        "2 seconds"
      )
      expect(error.reason).toMatchObject({ _tag: "Timeout", method: "tools/call", afterMs: 2000, kind: "total" })
    }))

  it.scoped("readyTimeout bounds the wait alone: a shorter one than the spec's wins", () =>
    Effect.gen(function*() {
      const registry = yield* fleet([refusing("10 seconds")])
      const error = yield* failsAfter(
        registry.callServerTool("down", "anything", {}, { readyTimeout: "1 second", maxTotalTimeout: "5 seconds" }),
        "1 second"
      )
      expect(error.reason._tag).toBe("Unavailable")
      expect(error.message).toContain("was not ready within 1000 ms")
    }))

  it.scoped("the total bounds a call that runs as a task, across its polls", () =>
    Effect.gen(function*() {
      const registry = yield* fleet([hanging])
      const error = yield* failsAfter(
        registry.callServerTool("slow", "job", {}, { maxTotalTimeout: "5 seconds" }),
        "5 seconds"
      )
      expect(error.reason).toMatchObject({ _tag: "Timeout", method: "tools/call", afterMs: 5000, kind: "total" })
    }))

  it.scoped("the Policy's timeout is the call's total limit; a caller's shorter one wins", () =>
    Effect.gen(function*() {
      const registry = yield* fleet([hanging])
      const policy = yield* Policy.make({ limits: { timeout: "5 seconds" } }).pipe(
        Effect.provideService(ServerRegistry.ServerRegistry, registry)
      )
      const limited = yield* failsAfter(policy.callTool("mcp__slow__hang"), "5 seconds", "hang")
      expect(limited.reason).toMatchObject({ _tag: "Timeout", afterMs: 5000, kind: "total" })
      const task = yield* failsAfter(policy.callTool("mcp__slow__job"), "5 seconds", "job")
      expect(task.reason).toMatchObject({ _tag: "Timeout", afterMs: 5000, kind: "total" })
      const own = yield* failsAfter(
        policy.callTool("mcp__slow__hang", {}, { maxTotalTimeout: "2 seconds" }),
        "2 seconds",
        "hang"
      )
      expect(own.reason).toMatchObject({ _tag: "Timeout", afterMs: 2000, kind: "total" })
    }))
})
