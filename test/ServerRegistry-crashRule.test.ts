// A server that dies in the middle of a tool call, on the TestClock: the call is never sent
// again unless its tool is annotated idempotentHint or readOnlyHint, then it is sent once
// more on the next connection, within the call's ready wait (retryRule.ts).
import { describe, expect, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import type * as McpSchema from "../src/McpSchema.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure, firstText, text } from "../src/testing/Results.js"
import { stateOf, until } from "./support/events.js"
import { Platform } from "./support/platform.js"

const noJitter = { initialDelay: "100 millis", factor: 2, maxDelay: "1 second", jitter: 0 } as const

// A server whose tools each hang up the connection on their first run (`runs` counts every
// run of each), and answer from the second run on.
const dying = (readyTimeout: Duration.DurationInput = "5 seconds") => {
  const runs = new Map<string, number>()
  const crashOnce = (name: string, annotations?: McpSchema.Tool["annotations"]): FakeServer.FakeTool => ({
    tool: { name, inputSchema: { type: "object" }, ...(annotations === undefined ? {} : { annotations }) },
    call: () =>
      Effect.suspend(() => {
        const run = (runs.get(name) ?? 0) + 1
        runs.set(name, run)
        return run === 1 ? Effect.zipRight(spec.current().close, Effect.never) : Effect.succeed(text(`${name} ran`))
      })
  })
  const spec = FakeServer.spec({
    name: "dying",
    tools: [
      crashOnce("write"),
      crashOnce("lookup", { readOnlyHint: true }),
      crashOnce("put", { idempotentHint: true }),
      crashOnce("destroy", { readOnlyHint: false, idempotentHint: false, destructiveHint: true })
    ]
  })
  return { spec: { ...spec, readyTimeout }, runs }
}

const fleetOf = (spec: ReturnType<typeof dying>["spec"]) =>
  Effect.gen(function*() {
    const fleet = yield* ServerRegistry.make({ restart: noJitter }).pipe(Effect.provide(Platform))
    const events = yield* fleet.subscribe
    yield* fleet.reconcile([spec])
    yield* fleet.awaitReady({ servers: ["dying"], timeout: "1 second" })
    return { fleet, events }
  })

// Calls `tool` while the clock stands still until the server has died, then lets the restart's
// backoff pass.
const callThroughCrash = (readyTimeout: Duration.DurationInput | undefined, tool: string) =>
  Effect.gen(function*() {
    const { runs, spec } = dying(readyTimeout)
    const { events, fleet } = yield* fleetOf(spec)
    const call = yield* Effect.fork(Effect.exit(fleet.callServerTool("dying", tool, {})))
    yield* until(events, stateOf("dying", "Failed"))
    yield* TestClock.adjust("100 millis")
    return { exit: yield* Fiber.join(call), runs, connects: spec.connects() }
  })

describe("a server that dies mid-call", () => {
  it.scoped("a tool with no annotation runs once, and the call fails InDoubt naming server and tool", () =>
    Effect.gen(function*() {
      const { connects, exit, runs } = yield* callThroughCrash(undefined, "write")
      const error = failure(exit)
      expect(error.reason).toMatchObject({ _tag: "InDoubt", tool: "write" })
      expect(error.server).toBe("dying")
      expect(error.retryable).toBe(false)
      expect(error.message).toMatch(
        /^server 'dying' ended while running tool 'write', which may have run: it is not sent again, as 'write' is not annotated idempotentHint or readOnlyHint \(/
      )
      // The server is back, and the call was not sent to it.
      expect(connects).toBe(2)
      expect(runs.get("write")).toBe(1)
    }))

  it.scoped("hints set to false are no license: the call fails InDoubt", () =>
    Effect.gen(function*() {
      const { exit, runs } = yield* callThroughCrash(undefined, "destroy")
      expect(failure(exit).reason).toMatchObject({ _tag: "InDoubt", tool: "destroy" })
      expect(runs.get("destroy")).toBe(1)
    }))

  it.scoped("a readOnlyHint tool is sent once more on the restarted connection, and succeeds", () =>
    Effect.gen(function*() {
      const { connects, exit, runs } = yield* callThroughCrash(undefined, "lookup")
      expect(exit._tag).toBe("Success")
      expect(firstText(exit._tag === "Success" ? exit.value : { content: [] })).toBe("lookup ran")
      expect(runs.get("lookup")).toBe(2)
      expect(connects).toBe(2)
    }))

  it.scoped("an idempotentHint tool is retried too", () =>
    Effect.gen(function*() {
      const { exit, runs } = yield* callThroughCrash(undefined, "put")
      expect(exit._tag).toBe("Success")
      expect(runs.get("put")).toBe(2)
    }))

  it.scoped("the retry waits for the server within the call's ready wait, no longer", () =>
    Effect.gen(function*() {
      // Back in 100 ms, but the call waits 50 ms at most: the retry gives up, the tool ran once.
      const { exit, runs } = yield* callThroughCrash("50 millis", "lookup")
      const error = failure(exit)
      expect(error.reason).toMatchObject({ _tag: "Unavailable" })
      expect(error.message).toContain("was not ready within 50 ms")
      expect(runs.get("lookup")).toBe(1)
    }))
})
