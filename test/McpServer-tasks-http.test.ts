// An McpServer's 2025-11-25 tasks are the server's, not a session's: over Streamable HTTP on
// 127.0.0.1, a task started in one session runs on once that session ends (DELETE), and
// another session follows it to its result, its progress included. With OAuth a task is
// bound to its caller's principal: another subject gets -32602 as for an unknown task, and
// tasks/list shows a principal its own tasks from any session; without OAuth, a session its
// own. The tasks extension's (2026-07-28) tasks are bound likewise, and each principal has
// its own limit of working tasks. A session without a
// standing GET stream gets what a task sends on the stream of its tasks/result. A task that
// asks for input once its session has gone waits, input_required, for another session's
// tasks/result, and asks there.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as http from "node:http"
import * as HttpClientUndici from "../src/HttpClientUndici.js"
import type * as JsonRpc from "../src/JsonRpc.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "../src/McpServer.js"
import * as NodeMcpServer from "../src/NodeMcpServer.js"
import * as StreamableHttp from "../src/StreamableHttp.js"
import { failure, firstText, reasonOf } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { authorizationServer } from "./support/authorizationServer.js"
import { listenLoopback } from "./support/httpServer.js"
import { slowTaskTool } from "./support/taskTool.js"

// The task tool `slow` (support/taskTool.ts) served with tasks (`limits`: more TaskOptions).
const jobsWith = (limits: McpServer.TaskOptions) =>
  Effect.gen(function*() {
    const side = yield* slowTaskTool
    const server = yield* McpServer.fromItems({
      serverInfo: { name: "jobs", version: "1.0.0" },
      tools: [side.tool],
      tasks: { pollInterval: 20, ...limits }
    })
    return { ...side, server }
  })
const jobs = jobsWith({})

// `handler` on a node:http listener on 127.0.0.1, closed with the Scope; its MCP URL.
const listen = (handler: () => NodeMcpServer.NodeHandler) =>
  Effect.gen(function*() {
    const listener = http.createServer((request, response) => handler()(request, response))
    return `${yield* listenLoopback(listener)}/mcp`
  })

// A stateful (2025-11-25) session of the endpoint at `url`, in `scope`, with `token` if given;
// `modern`: a 2026-07-28 connection instead (the tasks extension declared); `extra`: more options.
const session = (url: string, scope: Scope.Scope, token?: string, modern = false, extra: McpClient.Options = {}) =>
  Effect.gen(function*() {
    const transport = yield* StreamableHttp.make({
      name: "jobs",
      url,
      ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })
    })
    const client = yield* McpClient.make({ ...(modern ? {} : { protocolVersion: "2025-11-25" }), ...extra }).pipe(
      Effect.provideService(Transport, transport)
    )
    return { client, sessionId: transport.info().sessionId as string }
  }).pipe(Scope.extend(scope))

// `server` behind OAuth on 127.0.0.1, and a 2026-07-28 session of it each for Ada and Bob.
const adaAndBob = (server: McpServer.McpServer) =>
  Effect.gen(function*() {
    const as = yield* authorizationServer
    let handler: NodeMcpServer.NodeHandler = (_request, response) => void response.writeHead(503).end()
    const url = yield* listen(() => handler)
    handler = yield* NodeMcpServer.toNodeHandler(server, { oauth: { issuer: as.base, resource: url } })
    const scope = yield* Effect.scope
    const token = (sub: string) => as.tokens.jwt({ aud: url, sub, client_id: "app" })
    return {
      asAda: yield* session(url, scope, token("ada"), true),
      asBob: yield* session(url, scope, token("bob"), true)
    }
  })

// Calls the tool `name` in a fiber of its own; the call and its task, once told.
const startTask = (client: McpClient.McpClient, name: string) =>
  Effect.gen(function*() {
    const told = yield* Deferred.make<McpSchema.Task>()
    const call = yield* Effect.fork(client.callTool(name, {}, {
      onTask: (task) => Effect.asVoid(Deferred.succeed(told, task))
    }))
    return { task: yield* Deferred.await(told), call }
  })

// Ends a session the way a client that is done with it does: DELETE.
const endSession = (url: string, sessionId: string, token?: string) =>
  Effect.promise(() =>
    fetch(url, {
      method: "DELETE",
      headers: {
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-11-25",
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
      }
    })
  )

// Session A calls the task tool; once it knows its task and the first progress, its session
// is ended under it (its call then fails: the session is gone). The task's id.
const startInA = (url: string, progress: Queue.Queue<number>, token?: string) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const a = yield* session(url, scope, token)
    const created = yield* Deferred.make<McpSchema.Task>()
    const call = yield* Effect.fork(a.client.callTool("slow", {}, {
      onTask: (task) => Effect.asVoid(Deferred.succeed(created, task)),
      onProgress: (told) => Queue.offer(progress, told.progress)
    }))
    const { taskId } = yield* Deferred.await(created)
    expect(yield* Queue.take(progress)).toBe(1)
    expect((yield* endSession(url, a.sessionId, token)).status).toBe(200)
    yield* Fiber.await(call)
    return taskId
  })

describe("McpServer tasks (2025-11-25) across sessions, over Streamable HTTP", () => {
  it.scopedLive("a task started in session A is followed from session B to its result, with its progress", () =>
    Effect.gen(function*() {
      const test = yield* jobs
      const handler = yield* NodeMcpServer.toNodeHandler(test.server)
      const url = yield* listen(() => handler)
      const progress = yield* Queue.unbounded<number>()
      const taskId = yield* startInA(url, progress)
      expect(test.server.sessions()).toBe(0)

      const b = yield* session(url, yield* Effect.scope)
      // B lists only what it started (no authorization context tells requestors apart) ...
      expect(yield* b.client.listTasks()).toEqual([])
      // ... but reaches A's task by its id.
      const statuses = yield* Queue.unbounded<McpSchema.Task>()
      const followed = yield* Effect.fork(b.client.followTask(taskId, {
        tool: "slow",
        onTask: (task) => Queue.offer(statuses, task),
        onProgress: (told) => Queue.offer(progress, told.progress)
      }))
      expect(yield* Queue.take(statuses)).toMatchObject({ taskId, status: "working" })
      // The task's progress now goes to B, tied to the task.
      yield* Queue.offer(test.ticks, 2)
      expect(yield* Queue.take(progress)).toBe(2)
      yield* Deferred.succeed(test.release, undefined)
      expect(firstText(yield* Fiber.join(followed))).toBe("done")
      expect(test.runs.count).toBe(1)
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("with OAuth, a task is its principal's: another subject is refused as for an unknown task", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer
      const test = yield* jobs
      let handler: NodeMcpServer.NodeHandler = (_request, response) => void response.writeHead(503).end()
      const url = yield* listen(() => handler)
      handler = yield* NodeMcpServer.toNodeHandler(test.server, { oauth: { issuer: as.base, resource: url } })
      const ada = as.tokens.jwt({ aud: url, sub: "ada", client_id: "app" })
      const bob = as.tokens.jwt({ aud: url, sub: "bob", client_id: "app" })
      const progress = yield* Queue.unbounded<number>()
      const taskId = yield* startInA(url, progress, ada)

      const scope = yield* Effect.scope
      const asBob = yield* session(url, scope, bob)
      const refused = failure(yield* Effect.exit(asBob.client.followTask(taskId)))
      expect(reasonOf(refused, "Protocol")).toMatchObject({ method: "tasks/get", code: -32602 })
      expect(refused.message).toContain(`Unknown task: ${taskId}`)
      expect(yield* asBob.client.listTasks()).toEqual([])
      const cancel = yield* Effect.exit(asBob.client.request("tasks/cancel", { taskId }, Schema.Unknown))
      expect(reasonOf(failure(cancel), "Protocol")).toMatchObject({ code: -32602 })

      // Ada, from a new session, lists her task and follows it to its result.
      const asAda = yield* session(url, scope, ada)
      expect(yield* asAda.client.listTasks()).toMatchObject([{ taskId, status: "working" }])
      const followed = yield* Effect.fork(asAda.client.followTask(taskId))
      yield* Deferred.succeed(test.release, undefined)
      expect(firstText(yield* Fiber.join(followed))).toBe("done")
      expect(test.runs.count).toBe(1)
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("with OAuth, a task of the tasks extension (2026-07-28) is its principal's too", () =>
    Effect.gen(function*() {
      const test = yield* jobs
      const { asAda, asBob } = yield* adaAndBob(test.server)
      expect(asAda.client.protocolVersion).toBe("2026-07-28")
      const { call, task: { taskId } } = yield* startTask(asAda.client, "slow")
      const refused = failure(yield* Effect.exit(asBob.client.followTask(taskId)))
      expect(reasonOf(refused, "Protocol")).toMatchObject({ method: "tasks/get", code: -32602 })
      yield* Deferred.succeed(test.release, undefined)
      expect(firstText(yield* Fiber.join(call))).toBe("done")
      expect(test.runs.count).toBe(1)
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("with OAuth, each principal has its own limit of working tasks (the tasks extension)", () =>
    Effect.gen(function*() {
      const test = yield* jobsWith({ maxWorkingPerRequestor: 1 })
      const { asAda, asBob } = yield* adaAndBob(test.server)
      const ada = yield* startTask(asAda.client, "slow")
      const refused = failure(yield* Effect.exit(asAda.client.callTool("slow", {})))
      expect(reasonOf(refused, "Protocol")).toMatchObject({
        code: -32603,
        data: { limit: "maxWorkingPerRequestor", max: 1 }
      })
      // Bob is another requestor: his task starts.
      const bob = yield* startTask(asBob.client, "slow")
      expect(bob.task.status).toBe("working")
      yield* Deferred.succeed(test.release, undefined)
      expect(firstText(yield* Fiber.join(ada.call))).toBe("done")
      expect(firstText(yield* Fiber.join(bob.call))).toBe("done")
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("a session with no standing stream gets what the task sends on the stream of its tasks/result", () =>
    Effect.gen(function*() {
      const test = yield* jobs
      const handler = yield* NodeMcpServer.toNodeHandler(test.server)
      const url = yield* listen(() => handler)
      const taskId = yield* startInA(url, yield* Queue.unbounded<number>())
      const post = (body: unknown, sessionId?: string) =>
        Effect.promise(() =>
          fetch(url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": "2025-11-25",
              ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId })
            },
            body: JSON.stringify(body)
          })
        )
      const opened = yield* post({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
      })
      const sessionId = opened.headers.get("mcp-session-id")!
      yield* Effect.promise(() => opened.text())
      expect((yield* post({ jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)).status).toBe(202)
      // No GET: the task's progress can only come on this POST's stream.
      const result = yield* post({ jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } }, sessionId)
      expect(result.headers.get("content-type")).toContain("text/event-stream")
      const reader = result.body!.getReader()
      const decoder = new TextDecoder()
      let text = ""
      const readUntil = (part: string): Effect.Effect<void> =>
        text.includes(part) ? Effect.void : Effect.flatMap(
          Effect.promise(() => reader.read()),
          (chunk) => {
            if (chunk.done) return Effect.die(new Error(`the stream ended without ${part}: ${text}`))
            text += decoder.decode(chunk.value, { stream: true })
            return readUntil(part)
          }
        )
      yield* Queue.offer(test.ticks, 2)
      yield* readUntil(`"progress":2`)
      expect(text).toContain(`"method":"notifications/progress"`)
      expect(text).toContain(`"io.modelcontextprotocol/related-task":{"taskId":"${taskId}"}`)
      yield* Deferred.succeed(test.release, undefined)
      yield* readUntil(`"id":2`)
      expect(text).toContain(`"text":"done"`)
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("a task asking for input with its session gone waits, input_required, for the next session's tasks/result", () =>
    Effect.gen(function*() {
      const go = yield* Deferred.make<void>()
      const asking = yield* Deferred.make<void>()
      const ask = McpServer.tool({
        name: "ask",
        execution: { taskSupport: "required" },
        inputSchema: { type: "object" },
        handler: (_, ctx) =>
          Deferred.await(go).pipe(
            Effect.zipRight(Deferred.succeed(asking, undefined)),
            Effect.zipRight(ctx.elicit({
              message: "Name?",
              requestedSchema: { type: "object", properties: { name: { type: "string" } } }
            })),
            Effect.map((answer): McpSchema.CallToolResult => ({
              content: [{ type: "text", text: `Hello, ${String(answer.content?.name)}` }]
            })),
            Effect.orDie
          )
      })
      const server = yield* McpServer.fromItems({
        serverInfo: { name: "asks", version: "1.0.0" },
        tools: [ask],
        tasks: { pollInterval: 20 }
      })
      const handler = yield* NodeMcpServer.toNodeHandler(server)
      const url = yield* listen(() => handler)
      const scope = yield* Effect.scope
      // Session A starts the task, and ends (DELETE) before the task asks anything.
      const a = yield* session(url, scope)
      const { call, task: { taskId } } = yield* startTask(a.client, "ask")
      expect((yield* endSession(url, a.sessionId)).status).toBe(200)
      yield* Fiber.await(call)
      expect(server.sessions()).toBe(0)
      yield* Deferred.succeed(go, undefined)
      yield* Deferred.await(asking)

      // Session B finds it waiting for input, and answers it on its tasks/result.
      const asked = yield* Queue.unbounded<JsonRpc.Request>()
      const b = yield* session(url, scope, undefined, false, {
        capabilities: { elicitation: {} },
        handlers: {
          "elicitation/create": (request) =>
            Effect.as(Queue.offer(asked, request), { action: "accept", content: { name: "Ada" } })
        }
      })
      const statuses = yield* Queue.unbounded<McpSchema.Task>()
      const followed = yield* b.client.followTask(taskId, { onTask: (task) => Queue.offer(statuses, task) })
      expect(yield* Queue.take(statuses)).toMatchObject({ taskId, status: "input_required" })
      expect(yield* Queue.take(asked)).toMatchObject({
        params: { message: "Name?", _meta: { "io.modelcontextprotocol/related-task": { taskId } } }
      })
      expect(firstText(followed)).toBe("Hello, Ada")
    }).pipe(Effect.provide(HttpClientUndici.layer)))
})
