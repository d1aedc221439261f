// A 2026-07-28 request's timeout covers the wait for the client's answers to its input
// rounds, as a legacy request left unanswered while the client is asked: a host that never
// answers ends the request at its `timeout` (else the connection's requestTimeout), a Timeout
// of kind `idle` naming the server, on the TestClock.
import { describe, expect, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as Host from "../src/Host.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import type * as Peer from "../src/Peer.js"
import { failure, text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { modernServer } from "./support/modern.js"

const pick = {
  method: "elicitation/create",
  params: { message: "pick", requestedSchema: { type: "object", properties: { colour: { type: "string" } } } }
}

// Asks for a colour until it is given one.
const asking = (done: Record<string, unknown>): Peer.Handler => (request) =>
  Effect.succeed(
    (request.params as Record<string, unknown>).inputResponses === undefined
      ? { resultType: "input_required", inputRequests: { pick } }
      : { resultType: "complete", ...done }
  )

// A client of that server whose host answers after `answerAfter` (never: undefined).
const clientOf = (answerAfter: Duration.DurationInput | undefined) =>
  Effect.gen(function*() {
    const fake = yield* modernServer("asker", { tools: {}, resources: {} }, {
      "tools/call": asking(text("done")),
      "resources/read": asking({ contents: [] })
    })
    return yield* McpClient.make({ requestTimeout: "5 seconds" }).pipe(
      Effect.provideService(Transport, fake.transport),
      Effect.provide(Host.layerElicitation({
        elicit: () =>
          answerAfter === undefined
            ? Effect.never
            : Effect.as(Effect.sleep(answerAfter), { action: "accept", content: { colour: "red" } })
      }))
    )
  })

// Runs `request` until just before `ms` and then to it: it is running, then failed (a
// request still running fails the test, with a TimeoutException, instead of hanging it).
const endsAt = <A>(request: Effect.Effect<A, McpError.McpError>, ms: number) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(request)
    yield* TestClock.adjust(ms - 1)
    expect(fiber.unsafePoll()).toBeNull()
    yield* TestClock.adjust(1)
    const ended = yield* Effect.fork(Effect.timeout(Fiber.await(fiber), 1))
    yield* TestClock.adjust(1)
    return failure(yield* Fiber.join(ended))
  })

describe("MRTR: a request's timeout covers the client's answers", () => {
  it.scoped("an unanswered round ends the call at its timeout", () =>
    Effect.gen(function*() {
      const client = yield* clientOf(undefined)
      const error = yield* endsAt(client.callTool("t", {}, { timeout: "1 second" }), 1_000)
      expect(error.server).toBe("asker")
      expect(error.reason).toMatchObject({ _tag: "Timeout", kind: "idle", afterMs: 1_000, method: "tools/call" })
    }))

  it.scoped("without a timeout, at the connection's requestTimeout; a read too", () =>
    Effect.gen(function*() {
      const client = yield* clientOf(undefined)
      expect((yield* endsAt(client.callTool("t", {}), 5_000)).reason).toMatchObject({ _tag: "Timeout", afterMs: 5_000 })
      const read = yield* endsAt(client.readResource("x://y"), 5_000)
      expect(read.reason).toMatchObject({ _tag: "Timeout", method: "resources/read" })
    }))

  it.scoped("an answer within the timeout is sent on", () =>
    Effect.gen(function*() {
      const client = yield* clientOf("900 millis")
      const fiber = yield* Effect.fork(client.callTool("t", {}, { timeout: "1 second" }))
      yield* TestClock.adjust(900)
      expect((yield* Fiber.join(fiber)).content).toEqual(text("done").content)
    }))
})
