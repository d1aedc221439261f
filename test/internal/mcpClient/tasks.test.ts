import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as McpClient from "../../../src/McpClient.js"
import type * as Peer from "../../../src/Peer.js"
import * as FakeServer from "../../../src/testing/FakeServer.js"
import { Transport } from "../../../src/Transport.js"

const task = (status: string) => ({
  taskId: "t-1",
  status,
  ttl: null,
  createdAt: "2025-11-25T00:00:00Z",
  lastUpdatedAt: "2025-11-25T00:00:00Z",
  pollInterval: 5
})

// A server whose `slow` tool must run as a task; `tasks/get` says "working" `working` times.
// Each poll sends progress with the call's token, when it had one.
const serve = (working: number, polled?: Deferred.Deferred<void>) => {
  let polls = 0
  let token: unknown

  let fake: FakeServer.FakeServer | undefined
  const handlers: Record<string, Peer.Handler> = {
    "tools/call": (request) =>
      Effect.sync(() => {
        if (request.params?.task === undefined) return { content: [{ type: "text", text: "ran at once" }] }
        token = (request.params._meta as { progressToken?: unknown } | undefined)?.progressToken
        return { task: task("working") }
      }),
    "tasks/get": () =>
      Effect.gen(function*() {
        if (polled !== undefined) yield* Deferred.succeed(polled, undefined)
        polls++
        if (token !== undefined) {
          yield* Effect.orDie(fake!.peer.notify("notifications/progress", { progressToken: token, progress: polls }))
        }
        return task(polls > working ? "completed" : "working")
      }),
    "tasks/result": () => Effect.succeed({ content: [{ type: "text", text: "done" }] }),
    "tasks/cancel": () => Effect.succeed(task("cancelled"))
  }
  return Effect.tap(
    FakeServer.make({
      capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } }, cancel: {} } },
      tools: [
        {
          tool: { name: "slow", inputSchema: { type: "object" }, execution: { taskSupport: "required" } },
          call: () => Effect.die("called through the handlers")
        },
        {
          tool: { name: "either", inputSchema: { type: "object" }, execution: { taskSupport: "optional" } },
          call: () => Effect.die("called through the handlers")
        }
      ],
      handlers
    }),
    (made) => {
      fake = made
    }
  )
}

const methods = (fake: FakeServer.FakeServer) => fake.requests.map((request) => request.method)

describe("tasks", () => {
  it.live("a tool that requires a task: created, polled at the server's interval until done, its result fetched", () =>
    Effect.gen(function*() {
      const fake = yield* serve(2)
      const client = yield* McpClient.make().pipe(Effect.provideService(Transport, fake.transport))
      const result = yield* client.callTool("slow", { n: 1 })
      expect(result.content).toEqual([{ type: "text", text: "done" }])
      expect(methods(fake)).toEqual([
        "server/discover",
        "initialize",
        "tools/list",
        "tools/call",
        "tasks/get",
        "tasks/get",
        "tasks/get",
        "tasks/result"
      ])
      expect(fake.requests[3]!.params).toMatchObject({ name: "slow", arguments: { n: 1 }, task: {} })
      expect(fake.requests.at(-1)!.params).toEqual({ taskId: "t-1" })
    }).pipe(Effect.scoped))

  it.live("progress sent with the call's token while the task runs reaches the caller", () =>
    Effect.gen(function*() {
      const fake = yield* serve(2)
      const client = yield* McpClient.make().pipe(Effect.provideService(Transport, fake.transport))
      const seen: Array<number> = []
      yield* client.callTool("slow", {}, { onProgress: (p) => Effect.sync(() => seen.push(p.progress)) })
      expect(seen).toEqual([1, 2, 3])
    }).pipe(Effect.scoped))

  it.live("an optional one runs at once unless the call asks for a task", () =>
    Effect.gen(function*() {
      const fake = yield* serve(0)
      const client = yield* McpClient.make().pipe(Effect.provideService(Transport, fake.transport))
      expect((yield* client.callTool("either", {})).content).toEqual([{ type: "text", text: "ran at once" }])
      expect((yield* client.callTool("either", {}, { task: true })).content).toEqual([{ type: "text", text: "done" }])
    }).pipe(Effect.scoped))

  it.live("giving up on the call cancels the task", () =>
    Effect.gen(function*() {
      const polled = yield* Deferred.make<void>()
      const fake = yield* serve(Infinity, polled)
      const client = yield* McpClient.make().pipe(Effect.provideService(Transport, fake.transport))
      const fiber = yield* Effect.fork(client.callTool("slow", {}))
      yield* Deferred.await(polled)
      yield* Fiber.interrupt(fiber)
      expect(methods(fake)).toContain("tasks/cancel")
      expect(fake.requests.find((request) => request.method === "tasks/cancel")!.params).toEqual({ taskId: "t-1" })
    }).pipe(Effect.scoped))
})

// A FakeServer whose `long` tool runs as a task until `release` is done; its poll interval
// is 45 s (no other timer's), so a call that ends with the TestClock unmoved did not wait
// for a poll.
const serveTasks = (options: Partial<FakeServer.Options> = {}) =>
  Effect.gen(function*() {
    const release = yield* Deferred.make<void>()
    const fake = yield* FakeServer.make({
      taskPollInterval: 45_000,
      tools: [{
        tool: { name: "long", inputSchema: { type: "object" }, execution: { taskSupport: "required" } },
        call: (args, context) =>
          Effect.zipRight(
            Effect.zipRight(context.status("halfway"), Deferred.await(release)),
            Effect.succeed({ content: [{ type: "text" as const, text: `long:${JSON.stringify(args)}` }] })
          )
      }],
      ...options
    })
    const client = yield* McpClient.make().pipe(Effect.provideService(Transport, fake.transport))
    return { fake, client, release }
  })

// Waits until the call (made with the TestClock at 0) sleeps out its first poll interval.
const polling = TestClock.sleeps().pipe(
  Effect.zipLeft(Effect.yieldNow()),
  Effect.repeat({ until: (sleeps) => Chunk.toReadonlyArray(sleeps).includes(45_000) })
)

describe("tasks on a FakeServer, on the TestClock", () => {
  it.scoped("tasks/list gives every task, every page", () =>
    Effect.gen(function*() {
      const { client, fake, release } = yield* serveTasks({ pageSize: 1 })
      const statuses: Array<string> = []
      const calls = yield* Effect.fork(Effect.all([
        client.callTool("long", { n: 1 }, { onTask: (task) => Effect.sync(() => statuses.push(task.status)) }),
        client.callTool("long", { n: 2 })
      ], { concurrency: "unbounded" }))
      yield* polling
      const tasks = yield* client.listTasks()
      expect(tasks.map((task) => task.status)).toEqual(["working", "working"])
      expect(new Set(tasks.map((task) => task.taskId)).size).toBe(2)
      expect(methods(fake).filter((method) => method === "tasks/list")).toHaveLength(2)
      yield* Deferred.succeed(release, undefined)
      yield* TestClock.adjust("45 seconds")
      const results = yield* Fiber.join(calls)
      expect(results.map((result) => result.content)).toEqual([
        [{ type: "text", text: "long:{\"n\":1}" }],
        [{ type: "text", text: "long:{\"n\":2}" }]
      ])
      expect(statuses).toEqual(["working", "completed"])
    }))

  it.scoped("tasks/list needs the server's tasks.list capability", () =>
    Effect.gen(function*() {
      const { client } = yield* serveTasks({
        capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } }
      })
      const error = yield* Effect.flip(client.listTasks())
      expect(error.reason._tag).toBe("Unsupported")
      expect(error.message).toContain("tasks.list")
    }))

  it.scoped("a status notification ends the wait before the poll interval", () =>
    Effect.gen(function*() {
      const { client, fake, release } = yield* serveTasks({ notifyTaskStatus: true })
      const call = yield* Effect.fork(client.callTool("long", {}))
      yield* polling
      yield* Deferred.succeed(release, undefined)
      const result = yield* Fiber.join(call)
      expect(result.content).toEqual([{ type: "text", text: "long:{}" }])
      expect(methods(fake)).not.toContain("tasks/get")
      expect(methods(fake).at(-1)).toBe("tasks/result")
    }))

  it.scoped("without notifications, polling at the interval finds it done", () =>
    Effect.gen(function*() {
      const { client, fake, release } = yield* serveTasks()
      const call = yield* Effect.fork(client.callTool("long", {}))
      yield* polling
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.poll(call)).toEqual(Option.none())
      yield* TestClock.adjust("45 seconds")
      expect((yield* Fiber.join(call)).content).toEqual([{ type: "text", text: "long:{}" }])
      expect(methods(fake).filter((method) => method.startsWith("tasks/"))).toEqual(["tasks/get", "tasks/result"])
    }))

  it.scoped("interrupting the call cancels the task, and onTask is told", () =>
    Effect.gen(function*() {
      const { client } = yield* serveTasks()
      const statuses: Array<string> = []
      const call = yield* Effect.fork(
        client.callTool("long", {}, { onTask: (task) => Effect.sync(() => statuses.push(task.status)) })
      )
      yield* polling
      yield* Fiber.interrupt(call)
      expect(statuses).toEqual(["working", "cancelled"])
      expect((yield* client.listTasks()).map((task) => task.status)).toEqual(["cancelled"])
    }))
})
