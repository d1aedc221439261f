// A task's own input requests (the tasks extension, 2026-07-28: a task in `input_required`)
// wait for the client's answers no longer than an input round does: the call's `timeout`,
// else the connection's requestTimeout (a task taken up by its id: that one). A host that
// never answers then ends the call with a Timeout of kind `idle` naming the server, and the
// task is cancelled at the server, its caller told. On the TestClock.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as Host from "../src/Host.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import { failure } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { modernServer } from "./support/modern.js"

const pick = {
  method: "elicitation/create",
  params: { message: "pick", requestedSchema: { type: "object", properties: { colour: { type: "string" } } } }
}

// The task as the server tells it: it waits for the client's pick until cancelled.
const waiting = {
  resultType: "complete",
  taskId: "task-1",
  status: "input_required",
  createdAt: "2026-01-01T00:00:00Z",
  lastUpdatedAt: "2026-01-01T00:00:00Z",
  ttlMs: 600_000,
  pollIntervalMs: 100,
  inputRequests: { pick }
}

// A client (requestTimeout 5 s) of a server that makes a task of every call, whose host never answers.
const setUp = Effect.gen(function*() {
  const fake = yield* modernServer("tasker", { tools: {}, extensions: { "io.modelcontextprotocol/tasks": {} } }, {
    "tools/call": () => Effect.succeed({ ...waiting, resultType: "task" }),
    "tasks/get": () => Effect.succeed(waiting),
    "tasks/update": () => Effect.succeed({ resultType: "complete" }),
    "tasks/cancel": () => Effect.succeed({ resultType: "complete" })
  })
  const client = yield* McpClient.make({ requestTimeout: "5 seconds" }).pipe(
    Effect.provideService(Transport, fake.transport),
    Effect.provide(Host.layerElicitation({ elicit: () => Effect.never }))
  )
  const sent = (method: string) => fake.requests.filter((request) => request.method === method).length
  return { client, sent }
})

// The request still runs 1 ms before `ms`, and has failed at `ms` (a request still running
// by then fails the test instead of hanging it: no more clock time passes).
const failsAt = <A>(request: Effect.Effect<A, McpError.McpError>, ms: number) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(request)
    yield* TestClock.adjust(ms - 1)
    expect(fiber.unsafePoll()).toBeNull()
    yield* TestClock.adjust(1)
    // Its cancellation's round trip to the server runs meanwhile.
    const exit = yield* Effect.repeat(Effect.zipRight(Effect.yieldNow(), Effect.sync(() => fiber.unsafePoll())), {
      until: (polled) => polled !== null,
      times: 100
    })
    expect(exit).not.toBeNull()
    return failure(exit!)
  })

describe("a task's input requests are bounded by the call's timeout", () => {
  it.scoped("unanswered, the call ends at its timeout and the task is cancelled", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* setUp
      const statuses: Array<string> = []
      const error = yield* failsAt(
        client.callTool("t", {}, {
          timeout: "1 second",
          onTask: (task) => Effect.sync(() => statuses.push(task.status))
        }),
        1_000
      )
      expect(error.server).toBe("tasker")
      expect(error.reason).toMatchObject({ _tag: "Timeout", kind: "idle", afterMs: 1_000, method: "tools/call" })
      expect(sent("tasks/update")).toBe(0)
      expect(sent("tasks/cancel")).toBe(1)
      expect(statuses).toEqual(["input_required", "cancelled"])
    }))

  it.scoped("without a timeout, at the connection's requestTimeout; a task taken up by its id too", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* setUp
      const called = yield* failsAt(client.callTool("t", {}), 5_000)
      expect(called.reason).toMatchObject({ _tag: "Timeout", kind: "idle", afterMs: 5_000 })
      const followed = yield* failsAt(client.followTask("task-1"), 5_000)
      expect(followed.reason).toMatchObject({ _tag: "Timeout", kind: "idle", afterMs: 5_000 })
      expect(sent("tasks/cancel")).toBe(2)
    }))
})
