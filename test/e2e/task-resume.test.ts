// Routed tool calls that run as tasks, when their server's HTTP listener goes away mid-task
// and comes back on the same port with the same McpServer (and so the same tasks): on
// 127.0.0.1, through the fleet. The server keeps its tasks for any connection (a 2026-07-28
// one's and, from any session, a 2025-11-25 one's), so the call follows its task on the next
// one and the tool runs once; a 2025-11-25 task's progress reaches the call before the cut
// and after. Interrupting a call taken up again cancels its task at the server. A stdio
// server's tasks end with its process: a call whose server was killed mid-task fails at
// once, saying so.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as http from "node:http"
import type * as McpSchema from "../../src/McpSchema.js"
import * as McpServer from "../../src/McpServer.js"
import * as NodeMcpServer from "../../src/NodeMcpServer.js"
import type * as Peer from "../../src/Peer.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { failure, firstText, reasonOf } from "../../src/testing/Results.js"
import { bundled } from "../support/bundle.js"
import { stateOf, until } from "../support/events.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"
import { slowTaskTool } from "../support/taskTool.js"

const fast = {
  initialDelay: "20 millis",
  maxDelay: "100 millis",
  factor: 2,
  jitter: 0,
  stableAfter: "1 minute"
} as const

// A node:http listener on 127.0.0.1 for `handler`, in `scope`: closing it closes every socket.
const listen = (handler: NodeMcpServer.NodeHandler, scope: Scope.Scope, port = 0) =>
  Effect.gen(function*() {
    const listener = http.createServer(handler)
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void listener.listen(port, "127.0.0.1", () => resume(Effect.void))),
      () =>
        Effect.async<void>((resume) => {
          listener.close(() => resume(Effect.void))
          listener.closeAllConnections()
        })
    ).pipe(Scope.extend(scope))
    return (listener.address() as { readonly port: number }).port
  })

// The fleet with one server, `jobs`, behind a listener that `cut` closes and `restore` opens
// again on the same port; its calls tell `statuses` of their task.
const setUp = (modern: boolean) =>
  Effect.gen(function*() {
    const side = yield* slowTaskTool
    const server = yield* McpServer.fromItems({
      serverInfo: { name: "jobs", version: "1.0.0" },
      tools: [side.tool],
      tasks: { pollInterval: 20 },
      modern
    })
    const handler = yield* NodeMcpServer.toNodeHandler(server)
    let scope = yield* Scope.make()
    const port = yield* listen(handler, scope)
    const fleet = yield* ServerRegistry.make({ restart: fast })
    const events = yield* fleet.subscribe
    yield* fleet.reconcile([{ name: "jobs", transport: { type: "http", url: `http://127.0.0.1:${port}/mcp` } }])
    const ready = yield* until(events, stateOf("jobs", "Ready"))
    const statuses = yield* Queue.unbounded<McpSchema.Task>()
    const progress = yield* Queue.unbounded<Peer.Progress>()
    const call = yield* Effect.fork(
      fleet.callTool("mcp__jobs__slow", {}, {
        onTask: (task) => Queue.offer(statuses, task),
        onProgress: (told) => Queue.offer(progress, told)
      })
    )
    yield* Deferred.await(side.started)
    const created = yield* Queue.take(statuses)
    const cut = Effect.zipRight(Scope.close(scope, Exit.void), until(events, stateOf("jobs", "Failed")))
    const restore = Effect.gen(function*() {
      scope = yield* Scope.make()
      yield* listen(handler, scope, port)
    })
    yield* Effect.addFinalizer(() => Effect.suspend(() => Scope.close(scope, Exit.void)))
    return { ...side, fleet, events, statuses, progress, call, created, cut, restore, revision: ready.state }
  })

describe("a routed call that runs as a task, when its HTTP server goes away and comes back", () => {
  it.scopedLive("2026-07-28: the call follows the same task on the next connection; the tool ran once", () =>
    Effect.gen(function*() {
      const test = yield* setUp(true)
      expect(test.revision).toMatchObject({ protocolVersion: "2026-07-28" })
      yield* test.cut
      yield* test.restore
      yield* Deferred.succeed(test.release, undefined)
      const result = yield* Fiber.join(test.call)
      expect(firstText(result)).toBe("done")
      expect(test.runs.count).toBe(1)
      // The statuses after the cut are of the same task.
      const later = yield* Queue.takeAll(test.statuses)
      expect([...later].at(-1)).toMatchObject({ taskId: test.created.taskId, status: "completed" })
      expect((yield* test.fleet.status)[0]!.tasks).toEqual([])
    }).pipe(Effect.provide(Platform)))

  it.scopedLive("2026-07-28: interrupting the call once it follows the task again cancels the task at the server", () =>
    Effect.gen(function*() {
      const test = yield* setUp(true)
      yield* test.cut
      yield* test.restore
      yield* until(test.events, stateOf("jobs", "Ready"))
      // A status told after the server came back is the new connection's.
      yield* Queue.takeAll(test.statuses)
      const followed = yield* Queue.take(test.statuses)
      expect(followed).toMatchObject({ taskId: test.created.taskId, status: "working" })
      yield* Fiber.interrupt(test.call)
      yield* Deferred.await(test.cancelled)
      expect(test.runs.count).toBe(1)
    }).pipe(Effect.provide(Platform)))

  it.scopedLive("2025-11-25: a new session follows the same task; its progress reaches the call before and after", () =>
    Effect.gen(function*() {
      const test = yield* setUp(false)
      expect(test.revision).toMatchObject({ protocolVersion: "2025-11-25" })
      expect((yield* Queue.take(test.progress)).progress).toBe(1)
      yield* test.cut
      yield* test.restore
      yield* until(test.events, stateOf("jobs", "Ready"))
      // A status told after the server came back is the new session's tasks/get: from then on,
      // the task's progress goes to that session.
      yield* Queue.takeAll(test.statuses)
      expect(yield* Queue.take(test.statuses)).toMatchObject({ taskId: test.created.taskId, status: "working" })
      yield* Queue.offer(test.ticks, 2)
      expect((yield* Queue.take(test.progress)).progress).toBe(2)
      yield* Deferred.succeed(test.release, undefined)
      const result = yield* Fiber.join(test.call)
      expect(firstText(result)).toBe("done")
      expect(test.runs.count).toBe(1)
      expect([...yield* Queue.takeAll(test.statuses)].at(-1)).toMatchObject({
        taskId: test.created.taskId,
        status: "completed"
      })
    }).pipe(Effect.provide(Platform)))
})

// The fixture bundled (support/bundle.ts): under tsx its start cost seconds of CPU.
const FIXTURE = await bundled("test/fixtures/conformance-stdio.ts")

describe("a routed call that runs as a task, when its stdio server's process dies", () => {
  it.scopedLive("fails at once naming the task: a new process does not know it", () =>
    Effect.gen(function*() {
      const fleet = yield* ServerRegistry.make({ restart: fast })
      const events = yield* fleet.subscribe
      yield* fleet.reconcile([{
        name: "conf",
        transport: { type: "stdio", command: process.execPath, args: [FIXTURE] }
      }])
      yield* until(events, stateOf("conf", "Ready")).pipe(Effect.timeout(hangGuard(20_000)))
      const statuses = yield* Queue.unbounded<McpSchema.Task>()
      const call = yield* Effect.fork(fleet.callTool("mcp__conf__slow_compute", { seconds: 60 }, {
        task: true,
        onTask: (task) => Queue.offer(statuses, task)
      }))
      const created = yield* Queue.take(statuses)
      const pid = (yield* fleet.status)[0]!.connection?.pid as number
      process.kill(pid, "SIGKILL")
      const error = failure(yield* Fiber.await(call))
      expect(error.server).toBe("conf")
      expect(reasonOf(error, "Unavailable").message).toContain(
        `task '${created.taskId}' (tool 'slow_compute') ended with the process`
      )
      expect(error.message).toContain("a new process does not know it, so the tool is not called again")
      expect(error.message).not.toContain("may still run")
    }).pipe(Effect.provide(Platform)), hangGuard(30_000))
})
