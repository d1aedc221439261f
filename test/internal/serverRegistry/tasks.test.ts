import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Secrets from "../../../src/internal/secrets.js"
import * as Tasks from "../../../src/internal/serverRegistry/tasks.js"
import type * as McpSchema from "../../../src/McpSchema.js"
import type { RegistryEvent } from "../../../src/RegistryEvent.js"

const SECRET = "sk-live-0123456789"

const task = (status: McpSchema.Task["status"], statusMessage?: string): McpSchema.Task => ({
  taskId: "t-1",
  status,
  createdAt: "2025-11-25T00:00:00Z",
  ...(statusMessage === undefined ? {} : { statusMessage })
})

const table = () => {
  const events: Array<RegistryEvent> = []
  const tasks = Tasks.make(
    "jobs",
    Secrets.make([Redacted.make(SECRET)]),
    (event) => Effect.sync(() => events.push(event))
  )
  return { tasks, events }
}

describe("serverRegistry/tasks", () => {
  it.effect("publishes each change once, masks the server's secrets, and drops a settled task", () =>
    Effect.gen(function*() {
      const { events, tasks } = table()
      yield* tasks.track("long", (onTask) =>
        Effect.gen(function*() {
          yield* onTask(task("working"))
          yield* onTask(task("working"))
          yield* onTask(task("working", `using ${SECRET}`))
          expect(tasks.inFlight()).toEqual([
            {
              id: "t-1",
              tool: "long",
              status: "working",
              statusMessage: "using ***",
              createdAt: "2025-11-25T00:00:00Z"
            }
          ])
          yield* onTask(task("completed", `using ${SECRET}`))
          yield* onTask(task("completed", `using ${SECRET}`))
          expect(tasks.inFlight()).toEqual([])
        }))
      expect(events.map((event) => event._tag === "TaskStatusChanged" && [event.status, event.statusMessage]))
        .toEqual([["working", undefined], ["working", "using ***"], ["completed", "using ***"]])
    }))

  it.effect("a task whose call ends unsettled (the connection closed) leaves the table", () =>
    Effect.gen(function*() {
      const { tasks } = table()
      const exit = yield* Effect.exit(
        tasks.track("long", (onTask) => Effect.zipRight(onTask(task("working")), Effect.fail("closed")))
      )
      expect(exit._tag).toBe("Failure")
      expect(tasks.inFlight()).toEqual([])
    }))
})
