// The gateway passing tasks through (the tasks extension, SEP-2663): a 2026-07-28 client's
// call of a fronted task tool runs as a task of the gateway's, polled with tasks/get, its
// fronted server's input request answered with tasks/update, its tasks/cancel cancelling the
// call at the fronted server. The fronted server is an McpServer in this process, reached
// by the fleet statefully (2025-11-25) or statelessly (2026-07-28); the gateway is the
// fleet's host (`layerHost`), so the fronted server's elicitation reaches the calling client.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Gateway from "../src/Gateway.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "../src/McpServer.js"
import * as Memory from "../src/Memory.js"
import * as Peer from "../src/Peer.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import { text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { hangGuard } from "./support/guard.js"
import { Platform } from "./support/platform.js"

const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } }
const ELICITS = { elicitation: {} }

const metaOf = (capabilities: Record<string, unknown>) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": { name: "tasks-client", version: "1" }
})

const form = { type: "object" as const, properties: { ok: { type: "boolean" } }, required: ["ok"] }
const nameForm = { type: "object" as const, properties: { name: { type: "string" } }, required: ["name"] }

// The fronted server's tools: one that asks the user first, one that asks and then runs
// until cancelled (telling `cancelled` when it is), one that answers at once.
const frontedTools = (cancelled: Deferred.Deferred<void>): ReadonlyArray<McpServer.ToolItem> => [
  McpServer.tool({
    name: "confirm_delete",
    execution: { taskSupport: "optional" },
    inputSchema: { type: "object", properties: { file: { type: "string" } } },
    handler: ({ file }, ctx) =>
      ctx.elicit({ message: `Delete ${String(file)}?`, requestedSchema: form }).pipe(
        Effect.map((answer) => text(answer.content?.ok === true ? `deleted ${String(file)}` : "kept")),
        Effect.orDie
      )
  }),
  McpServer.tool({
    name: "long_job",
    execution: { taskSupport: "required" },
    inputSchema: { type: "object" },
    handler: (_args, ctx) =>
      ctx.elicit({ message: "Start?", requestedSchema: form }).pipe(
        Effect.zipRight(Effect.never),
        Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined)),
        Effect.orDie
      )
  }),
  McpServer.tool({
    name: "quick_job",
    execution: { taskSupport: "required" },
    inputSchema: { type: "object" },
    handler: () => Effect.succeed(text("done"))
  }),
  // Asks before it goes async (SEP-2663's composition), then works a while.
  McpServer.tool({
    name: "ask_then_work",
    execution: { taskSupport: "required" },
    inputSchema: { type: "object" },
    handler: (_args, ctx) =>
      ctx.elicit({ message: "Name?", requestedSchema: nameForm }, { beforeTask: true }).pipe(
        Effect.flatMap((answer) => Effect.as(Effect.sleep("20 millis"), text(`hello ${String(answer.content?.name)}`))),
        Effect.orDie
      )
  }),
  McpServer.tool({
    name: "greet",
    inputSchema: { type: "object" },
    handler: () => Effect.succeed(text("hello"))
  })
]

// A gateway (modern, plain names) fronting one McpServer, and a bare Peer on it.
const setup = (modernFronted: boolean) =>
  Effect.gen(function*() {
    const cancelled = yield* Deferred.make<void>()
    const fronted = yield* McpServer.fromItems({
      serverInfo: { name: "fronted", version: "1" },
      modern: modernFronted,
      tasks: { pollInterval: 10 },
      tools: frontedTools(cancelled)
    })
    const spec = {
      name: "app",
      transport: {
        type: "custom" as const,
        key: "app",
        connect: Effect.map(McpServer.connectMemory(fronted, { name: "app" }), (connection) => connection.transport)
      }
    }
    const fleet = Policy.layer({}).pipe(
      Layer.provideMerge(ServerRegistry.layer({ servers: [spec] })),
      Layer.provideMerge(Gateway.layerHost()),
      Layer.provide(Platform)
    )
    const context = yield* Layer.build(fleet)
    const connected = yield* Effect.gen(function*() {
      const registry = yield* ServerRegistry.ServerRegistry
      yield* registry.awaitReady({ timeout: "10 seconds" })
      const [client, end] = yield* Memory.makePair({ server: "gateway", client: "client" })
      yield* Gateway.serve({ modern: true, naming: "plain", tasks: {} }).pipe(
        Effect.provideService(Transport, end),
        Effect.forkScoped
      )
      const peer = yield* Peer.make().pipe(Effect.provideService(Transport, client))
      // Another client, in a session of its own.
      const [otherClient, otherEnd] = yield* Memory.makePair({ server: "gateway", client: "other" })
      yield* Gateway.serve({ modern: true, naming: "plain" }).pipe(
        Effect.provideService(Transport, otherEnd),
        Effect.forkScoped
      )
      const other = yield* Peer.make().pipe(Effect.provideService(Transport, otherClient))
      // A stateful session of its own, for a 2025-11-25 client.
      const [stateful, statefulEnd] = yield* Memory.makePair({ server: "gateway", client: "stateful" })
      yield* Gateway.serve({ naming: "plain", tasks: {} }).pipe(
        Effect.provideService(Transport, statefulEnd),
        Effect.forkScoped
      )
      return { peer, other, stateful }
    }).pipe(Effect.provide(context))
    return { ...connected, cancelled }
  })

const call = (peer: Peer.Peer, name: string, args: Record<string, unknown>, capabilities: Record<string, unknown>) =>
  peer.request("tools/call", { name, arguments: args, _meta: metaOf(capabilities) })

const tasks = (peer: Peer.Peer, method: string, params: Record<string, unknown>) =>
  peer.request(method, { ...params, _meta: metaOf({ ...ELICITS, ...TASKS }) })

// Polls tasks/get until the task is `status` (the fronted server works on in the meantime).
const until = (peer: Peer.Peer, taskId: unknown, status: string) =>
  tasks(peer, "tasks/get", { taskId }).pipe(
    Effect.delay("10 millis"),
    Effect.repeat({ until: (task) => task.status === status }),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`the task never became ${status}`) })
  )

const protocolCode = <A>(exit: Exit.Exit<A, McpError.McpError>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error.reason._tag === "Protocol"
    ? exit.cause.error.reason.code
    : undefined

describe.each([
  ["a stateful fronted server (2025-11-25)", false],
  ["a stateless fronted server (2026-07-28)", true]
])("the gateway passes tasks through, fronting %s", (_name, modernFronted) => {
  it.live("declares the extension and lists the fronted tools' task support", () =>
    Effect.gen(function*() {
      const { peer } = yield* setup(modernFronted)
      const discovered = yield* peer.request("server/discover", { _meta: metaOf(TASKS) })
      expect(discovered.capabilities).toMatchObject({ extensions: { "io.modelcontextprotocol/tasks": {} } })
      const listed = yield* peer.request("tools/list", { _meta: metaOf(TASKS) })
      const support = Object.fromEntries(
        (listed.tools as ReadonlyArray<McpSchema.Tool>).map((tool) => [tool.name, tool.execution?.taskSupport])
      )
      expect(support).toEqual({
        confirm_delete: "optional",
        long_job: "required",
        quick_job: "required",
        ask_then_work: "required",
        greet: undefined
      })
      // A plain tool answers inline; a required-task one needs the extension (-32021).
      expect(yield* call(peer, "greet", {}, TASKS)).toMatchObject({ ...text("hello"), resultType: "complete" })
      expect(protocolCode(yield* Effect.exit(call(peer, "long_job", {}, {})))).toBe(-32021)
    }).pipe(Effect.scoped), hangGuard(20_000))

  it.live(
    "runs a call as a task: the fronted server's input request answered by tasks/update",
    () =>
      Effect.gen(function*() {
        const { peer } = yield* setup(modernFronted)
        const created = yield* call(peer, "confirm_delete", { file: "a.txt" }, { ...ELICITS, ...TASKS })
        expect(created).toMatchObject({ resultType: "task", status: "working" })
        const waiting = yield* until(peer, created.taskId, "input_required")
        const [key, request] = Object.entries(
          waiting.inputRequests as Record<string, { method: string; params: any }>
        )[0]!
        expect(request).toMatchObject({ method: "elicitation/create", params: { message: "Delete a.txt?" } })
        const ack = yield* tasks(peer, "tasks/update", {
          taskId: created.taskId,
          inputResponses: { [key]: { action: "accept", content: { ok: true } } }
        })
        expect(ack.taskId).toBeUndefined()
        const done = yield* until(peer, created.taskId, "completed")
        expect(done.result).toMatchObject(text("deleted a.txt"))
      }).pipe(Effect.scoped),
    20_000
  )

  it.live("runs a 2025-11-25 client's task-augmented call as a task too", () =>
    Effect.gen(function*() {
      const { stateful } = yield* setup(modernFronted)
      const client = yield* McpClient.make({ protocolVersion: "2025-11-25" }).pipe(
        Effect.provideService(Transport, stateful)
      )
      const statuses: Array<string> = []
      // `required`: McpClient asks for a task, polls it and fetches its result.
      const result = yield* client.callTool("quick_job", {}, {
        onTask: (task) => Effect.sync(() => statuses.push(task.status))
      })
      expect(result).toMatchObject(text("done"))
      expect(statuses.at(0)).toBe("working")
      expect(statuses.at(-1)).toBe("completed")
    }).pipe(Effect.scoped), hangGuard(20_000))

  it.live("cancels the routed call at the fronted server on tasks/cancel", () =>
    Effect.gen(function*() {
      const { cancelled, peer } = yield* setup(modernFronted)
      const created = yield* call(peer, "long_job", {}, { ...ELICITS, ...TASKS })
      expect(created).toMatchObject({ resultType: "task", status: "working" })
      // Its question has come through: the call is under way at the fronted server.
      yield* until(peer, created.taskId, "input_required")
      const ack = yield* tasks(peer, "tasks/cancel", { taskId: created.taskId })
      expect(ack).toMatchObject({ resultType: "complete" })
      expect((yield* tasks(peer, "tasks/get", { taskId: created.taskId })).status).toBe("cancelled")
      // The fronted server's handler was interrupted.
      yield* Deferred.await(cancelled).pipe(Effect.timeout("10 seconds"))
    }).pipe(Effect.scoped), hangGuard(20_000))

  // A parked task keeps its routed call in flight at the fronted server; the server's
  // requests of another client's call still reach that client, as they name their call.
  it.live(
    "asks another client's input while a task waits for its client (tasks on by default)",
    () =>
      Effect.gen(function*() {
        const { other, peer } = yield* setup(modernFronted)
        const parked = yield* call(peer, "long_job", {}, { ...ELICITS, ...TASKS })
        yield* until(peer, parked.taskId, "input_required")
        const created = yield* call(other, "long_job", {}, { ...ELICITS, ...TASKS })
        expect(created).toMatchObject({ resultType: "task" })
        const waiting = yield* until(other, created.taskId, "input_required")
        expect(Object.values(waiting.inputRequests as object)).toMatchObject([
          { method: "elicitation/create", params: { message: "Start?" } }
        ])
        // The first client's task still waits on its own question.
        expect((yield* tasks(peer, "tasks/get", { taskId: parked.taskId })).status).toBe("input_required")
      }).pipe(Effect.scoped),
    20_000
  )
})

describe("the gateway fronting a stateless server (2026-07-28) composes MRTR and tasks", () => {
  it.live(
    "a question asked before the fronted task exists is an input round of the call; then the call is a task",
    () =>
      Effect.gen(function*() {
        const { peer } = yield* setup(true)
        const capabilities = { ...ELICITS, ...TASKS }
        const asked = yield* call(peer, "ask_then_work", {}, capabilities)
        expect(asked.resultType).toBe("input_required")
        expect(asked).not.toHaveProperty("taskId")
        const [key, request] = Object.entries(
          asked.inputRequests as Record<string, { method: string; params: any }>
        )[0]!
        expect(request).toMatchObject({ method: "elicitation/create", params: { message: "Name?" } })
        const created = yield* peer.request("tools/call", {
          name: "ask_then_work",
          arguments: {},
          inputResponses: { [key]: { action: "accept", content: { name: "Alice" } } },
          ...(asked.requestState === undefined ? {} : { requestState: asked.requestState }),
          _meta: metaOf(capabilities)
        })
        expect(created).toMatchObject({ resultType: "task" })
        expect(created).not.toHaveProperty("requestState")
        const done = yield* until(peer, created.taskId, "completed")
        expect(done.result).toMatchObject(text("hello Alice"))
      }).pipe(Effect.scoped),
    20_000
  )
})
