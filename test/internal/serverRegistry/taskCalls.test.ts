// A routed call that runs as a task (2025-11-25) across connections, on the TestClock: a
// fake server whose tasks outlive its sessions (as a server with a shared task store's do)
// loses its connection mid-task; the fleet follows the same task on the next connection, and
// `ServerRegistry.followTask` takes one up by its id.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Queue from "effect/Queue"
import * as TestClock from "effect/TestClock"
import type * as JsonRpc from "../../../src/JsonRpc.js"
import type * as McpSchema from "../../../src/McpSchema.js"
import * as Peer from "../../../src/Peer.js"
import type { RegistryEvent } from "../../../src/RegistryEvent.js"
import * as ServerRegistry from "../../../src/ServerRegistry.js"
import type * as ServerSpec from "../../../src/ServerSpec.js"
import * as FakeServer from "../../../src/testing/FakeServer.js"
import { failure, firstText, reasonOf } from "../../../src/testing/Results.js"
import { stateOf, until } from "../../support/events.js"
import { Platform } from "../../support/platform.js"

const POLL = 1000

const task = (taskId: string, status: string) => ({
  taskId,
  status,
  ttl: null,
  createdAt: "2025-11-25T00:00:00Z",
  lastUpdatedAt: "2025-11-25T00:00:00Z",
  pollInterval: POLL
})

// The server `jobs`: its `long` tool runs as a task; its tasks (`jobs`) are kept across
// connections. Every request of every connection is in `seen`, with the connection's number.
const jobsServer = (
  result: Record<string, unknown> = { content: [{ type: "text", text: "done" }], structuredContent: { n: 7 } }
) => {
  const jobs = new Map<string, string>()
  const seen: Array<{ readonly connection: number; readonly method: string }> = []
  // The progress token the task's call was sent with, if any.
  let token: unknown
  const cancelled = Deferred.unsafeMake<number>(FiberId.none)
  const taskOf = (request: JsonRpc.Request) => String(request.params?.taskId)
  const known = (request: JsonRpc.Request) =>
    jobs.has(taskOf(request))
      ? Effect.succeed(taskOf(request))
      : Effect.fail(new Peer.HandlerError({ code: -32602, message: `Unknown task: ${taskOf(request)}` }))
  const handlers: Record<string, Peer.Handler> = {
    "tools/call": (request) =>
      Effect.sync(() => {
        token = (request.params?._meta as { progressToken?: unknown } | undefined)?.progressToken
        jobs.set("job-1", "working")
        return { task: task("job-1", "working") }
      }),
    "tasks/get": (request) => Effect.map(known(request), (id) => task(id, jobs.get(id)!)),
    "tasks/result": (request) => Effect.as(known(request), result),
    "tasks/cancel": (request) =>
      Effect.map(known(request), (id) => {
        jobs.set(id, "cancelled")
        Deferred.unsafeDone(cancelled, Exit.succeed(spec.connects()))
        return task(id, "cancelled")
      })
  }
  const noted = Object.fromEntries(
    Object.entries(handlers).map(([method, handler]) => [method, (request: JsonRpc.Request) => {
      seen.push({ connection: spec.connects(), method })
      return handler(request)
    }])
  )
  const spec = FakeServer.spec({
    name: "jobs",
    capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } }, cancel: {} } },
    tools: [{
      tool: {
        name: "long",
        inputSchema: { type: "object" },
        outputSchema: { type: "object", properties: { n: { type: "number" } } },
        execution: { taskSupport: "required" }
      },
      call: () => Effect.die("called through the handlers")
    }],
    handlers: noted
  })
  // Progress of a task on the current connection: with the call's token, or (`related`) tied
  // to the task by its _meta alone, as 2025-11-25 has every message about a task.
  const progress = (value: number, related?: string) =>
    Effect.suspend(() =>
      spec.current().peer.notify(
        "notifications/progress",
        related === undefined
          ? { progressToken: token, progress: value }
          : {
            progressToken: "not-ours",
            progress: value,
            _meta: { "io.modelcontextprotocol/related-task": { taskId: related } }
          }
      )
    )
  return { spec, jobs, seen, cancelled, progress, close: Effect.suspend(() => spec.current().close) }
}

const restart = {
  initialDelay: "100 millis",
  factor: 2,
  maxDelay: "1 second",
  jitter: 0,
  stableAfter: "10 seconds"
} as const

const fleetOf = (spec: ServerSpec.ServerSpec) =>
  Effect.gen(function*() {
    const fleet = yield* ServerRegistry.make({ restart }).pipe(Effect.provide(Platform))
    const events = yield* fleet.subscribe
    yield* fleet.reconcile([spec])
    yield* until(events, stateOf("jobs", "Ready"))
    return { fleet, events }
  })

// The connection ends while the call waits for its next poll; the server is back in 100 ms.
const loseConnection = (
  server: ReturnType<typeof jobsServer>,
  events: Queue.Dequeue<RegistryEvent>
) =>
  Effect.gen(function*() {
    yield* server.close
    yield* until(events, stateOf("jobs", "Failed"))
    yield* TestClock.adjust("100 millis")
    yield* until(events, stateOf("jobs", "Ready"))
  })

// The task tool called in a fiber, every status of its task told to `statuses`.
const forkLongCall = (fleet: ServerRegistry.ServerRegistry) =>
  Effect.gen(function*() {
    const statuses = yield* Queue.unbounded<McpSchema.Task>()
    const call = yield* Effect.fork(
      fleet.callTool("mcp__jobs__long", {}, { onTask: (told) => Queue.offer(statuses, told) })
    )
    return { call, statuses }
  })

describe("a routed call that runs as a task, across connections", () => {
  it.scoped("follows the same task on the next connection: tools/call is sent once", () =>
    Effect.gen(function*() {
      const server = jobsServer()
      const { events, fleet } = yield* fleetOf(server.spec)
      const { call, statuses } = yield* forkLongCall(fleet)
      expect(yield* Queue.take(statuses)).toMatchObject({ taskId: "job-1", status: "working" })
      yield* loseConnection(server, events)
      server.jobs.set("job-1", "completed")
      yield* TestClock.adjust(POLL)
      expect(firstText(yield* Fiber.join(call))).toBe("done")
      expect(server.seen).toEqual([
        { connection: 1, method: "tools/call" },
        { connection: 2, method: "tasks/get" },
        { connection: 2, method: "tasks/result" }
      ])
      expect((yield* fleet.status)[0]!.tasks).toEqual([])
    }))

  it.scoped("the task's progress reaches onProgress before the connection is lost and after, with the call's token", () =>
    Effect.gen(function*() {
      const server = jobsServer()
      const { events, fleet } = yield* fleetOf(server.spec)
      const statuses = yield* Queue.unbounded<McpSchema.Task>()
      const progress = yield* Queue.unbounded<number>()
      const call = yield* Effect.fork(fleet.callTool("mcp__jobs__long", {}, {
        onTask: (told) => Queue.offer(statuses, told),
        onProgress: (told) => Queue.offer(progress, told.progress)
      }))
      yield* Queue.take(statuses)
      yield* server.progress(1)
      expect(yield* Queue.take(progress)).toBe(1)
      yield* loseConnection(server, events)
      yield* TestClock.adjust(POLL)
      // Followed on the new connection: its progress, with the same token, goes to the call.
      expect(yield* Queue.take(statuses)).toMatchObject({ taskId: "job-1", status: "working" })
      expect(server.seen.at(-1)).toEqual({ connection: 2, method: "tasks/get" })
      yield* server.progress(2)
      expect(yield* Queue.take(progress)).toBe(2)
      server.jobs.set("job-1", "completed")
      yield* TestClock.adjust(POLL)
      expect(firstText(yield* Fiber.join(call))).toBe("done")
      expect(yield* Queue.takeAll(progress)).toHaveLength(0)
    }))

  it.scoped("ServerRegistry.followTask tells onProgress the progress tied to the task, and only that", () =>
    Effect.gen(function*() {
      const server = jobsServer()
      const { fleet } = yield* fleetOf(server.spec)
      server.jobs.set("job-7", "working")
      const progress = yield* Queue.unbounded<number>()
      const statuses = yield* Queue.unbounded<McpSchema.Task>()
      const followed = yield* Effect.fork(fleet.followTask("jobs", "job-7", {
        onTask: (told) => Queue.offer(statuses, told),
        onProgress: (told) => Queue.offer(progress, told.progress)
      }))
      yield* Queue.take(statuses)
      yield* server.progress(5, "job-6")
      yield* server.progress(6, "job-7")
      expect(yield* Queue.take(progress)).toBe(6)
      server.jobs.set("job-7", "completed")
      yield* TestClock.adjust(POLL)
      expect(firstText(yield* Fiber.join(followed))).toBe("done")
      expect(yield* Queue.takeAll(progress)).toHaveLength(0)
    }))

  it.scoped("the result of a task followed on the next connection is checked against the tool's outputSchema", () =>
    Effect.gen(function*() {
      const server = jobsServer({ content: [], structuredContent: { n: "seven" } })
      const { events, fleet } = yield* fleetOf(server.spec)
      const { call, statuses } = yield* forkLongCall(fleet)
      yield* Queue.take(statuses)
      yield* loseConnection(server, events)
      server.jobs.set("job-1", "completed")
      yield* TestClock.adjust(POLL)
      const error = failure(yield* Fiber.await(call))
      expect(reasonOf(error, "Validation").message).toContain(
        "tool 'long' returned structuredContent that does not match"
      )
    }))

  it.scoped("the task stays in the server's status across the lost connection", () =>
    Effect.gen(function*() {
      const server = jobsServer()
      const { events, fleet } = yield* fleetOf(server.spec)
      const call = yield* Effect.fork(fleet.callTool("mcp__jobs__long", {}))
      yield* until(events, (event) => event._tag === "TaskStatusChanged")
      yield* server.close
      yield* until(events, stateOf("jobs", "Failed"))
      yield* TestClock.adjust(POLL)
      expect((yield* fleet.status)[0]!.tasks).toMatchObject([{ id: "job-1", tool: "long", status: "working" }])
      yield* Fiber.interrupt(call)
    }))

  it.scoped("a call interrupted after it took up its task again cancels it on the new connection", () =>
    Effect.gen(function*() {
      const server = jobsServer()
      const { events, fleet } = yield* fleetOf(server.spec)
      const { call, statuses } = yield* forkLongCall(fleet)
      yield* Queue.take(statuses)
      yield* loseConnection(server, events)
      yield* TestClock.adjust(POLL)
      // Polled on the new connection.
      expect(yield* Queue.take(statuses)).toMatchObject({ taskId: "job-1", status: "working" })
      yield* Fiber.interrupt(call)
      expect(server.jobs.get("job-1")).toBe("cancelled")
      expect(server.seen.at(-1)).toEqual({ connection: 2, method: "tasks/cancel" })
    }))

  // Interrupted once the connection ended: after the call polled and found it gone (it then
  // waits for the next connection), or before it noticed (it still waits for its next poll).
  it.scoped.each([
    ["while it waits for the next connection", true],
    ["after its connection ended, before it noticed", false]
  ])("a call interrupted %s cancels its task once the next connection is ready", (_, polled) =>
    Effect.gen(function*() {
      const server = jobsServer()
      const { events, fleet } = yield* fleetOf({
        ...server.spec,
        restart: { initialDelay: POLL * 5, maxDelay: POLL * 5 }
      })
      const call = yield* Effect.fork(fleet.callTool("mcp__jobs__long", {}))
      yield* until(events, (event) => event._tag === "TaskStatusChanged")
      yield* server.close
      yield* until(events, stateOf("jobs", "Failed"))
      if (polled) yield* TestClock.adjust(POLL)
      yield* Fiber.interrupt(call)
      expect(server.jobs.get("job-1")).toBe("working")
      yield* TestClock.adjust(POLL * 5)
      expect(yield* Deferred.await(server.cancelled)).toBe(2)
      expect(server.seen.filter((request) => request.method === "tasks/cancel")).toHaveLength(1)
    }))

  it.scoped("a server not back within the ready timeout fails the call, saying its task may still run", () =>
    Effect.gen(function*() {
      const server = jobsServer()
      const { events, fleet } = yield* fleetOf({
        ...server.spec,
        readyTimeout: POLL * 2,
        restart: { initialDelay: POLL * 10, maxDelay: POLL * 10 }
      })
      const call = yield* Effect.fork(fleet.callTool("mcp__jobs__long", {}))
      yield* until(events, (event) => event._tag === "TaskStatusChanged")
      yield* server.close
      yield* until(events, stateOf("jobs", "Failed"))
      yield* TestClock.adjust(POLL)
      yield* TestClock.adjust(POLL * 2)
      const error = failure(yield* Fiber.await(call))
      expect(reasonOf(error, "Unavailable").message).toMatch(
        /^was not ready within 2000 ms \(.*\); task 'job-1' \(tool 'long'\) may still run there$/
      )
    }))

  it.scoped("ServerRegistry.followTask takes up a task by its id; an unknown one fails naming it", () =>
    Effect.gen(function*() {
      const server = jobsServer()
      const { fleet } = yield* fleetOf(server.spec)
      server.jobs.set("job-7", "completed")
      expect(firstText(yield* fleet.followTask("jobs", "job-7"))).toBe("done")
      const error = failure(yield* Effect.exit(fleet.followTask("jobs", "job-8")))
      expect(error.server).toBe("jobs")
      expect(reasonOf(error, "Protocol")).toMatchObject({ method: "tasks/get", code: -32602 })
      expect(error.message).toBe(
        "server 'jobs' answered tasks/get with error -32602: task 'job-8' is unknown (Unknown task: job-8)"
      )
    }))
})
