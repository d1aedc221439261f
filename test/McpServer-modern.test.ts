import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "../src/McpServer.js"
import * as Peer from "../src/Peer.js"
import { text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"

const form = (field: string, type = "string") => ({
  type: "object" as const,
  properties: { [field]: { type } },
  required: [field]
})

const askName = McpServer.tool({
  name: "ask_name",
  inputSchema: { type: "object" },
  handler: (_args, ctx) =>
    ctx.elicit({ message: "What is your name?", requestedSchema: form("name") }, { key: "user_name" }).pipe(
      Effect.map((answer) => text(`Hello, ${String(answer.content?.name)}!`)),
      Effect.catchTag("McpServerError", (error) => Effect.succeed(McpServer.toolError(error.message)))
    )
})

// Two rounds: the second question is asked only once the first is answered.
const twoSteps = McpServer.tool({
  name: "two_steps",
  inputSchema: { type: "object" },
  handler: (_args, ctx) =>
    Effect.gen(function*() {
      const name = yield* ctx.elicit({ message: "Name?", requestedSchema: form("name") }, { key: "step1" })
      const color = yield* ctx.elicit({ message: "Color?", requestedSchema: form("color") }, { key: "step2" })
      return text(`${String(name.content?.name)} likes ${String(color.content?.color)}`)
    }).pipe(Effect.orDie)
})

// Two requests under one key (a gateway passes on the keys of servers that know nothing of
// each other): the second gets a key of its own.
const sameKey = McpServer.tool({
  name: "same_key",
  inputSchema: { type: "object" },
  handler: (_args, ctx) =>
    Effect.gen(function*() {
      const first = yield* ctx.elicit({ message: "First?", requestedSchema: form("a") }, { key: "dup" })
      const second = yield* ctx.elicit({ message: "Second?", requestedSchema: form("a") }, { key: "dup" })
      return text(`${String(first.content?.a)} ${String(second.content?.a)}`)
    }).pipe(Effect.orDie)
})

// Three requests at once, one after a turn of the scheduler: asked in one round.
const allAtOnce = McpServer.tool({
  name: "all_at_once",
  inputSchema: { type: "object" },
  handler: (_args, ctx) =>
    Effect.all([
      ctx.elicit({ message: "Name?", requestedSchema: form("name") }),
      ctx.sample({ messages: [{ role: "user", content: { type: "text", text: "Hi" } }], maxTokens: 10 }),
      Effect.zipRight(Effect.repeatN(Effect.yieldNow(), 3), ctx.listRoots())
    ], { concurrency: "unbounded" }).pipe(
      Effect.map(([name, sampled, roots]) =>
        text(`${String(name.content?.name)} ${JSON.stringify(sampled.content)} ${roots.roots.length}`)
      ),
      Effect.orDie
    )
})

const needsSampling = McpServer.tool({
  name: "needs_sampling",
  inputSchema: { type: "object" },
  handler: (_args, ctx) =>
    ctx.sample({ messages: [{ role: "user", content: { type: "text", text: "Hi" } }], maxTokens: 10 }).pipe(
      Effect.map(() => text("sampled")),
      Effect.catchTag("McpServerError", () => Effect.fail(McpServer.missingClientCapability({ sampling: {} })))
    )
})

const logs = McpServer.tool({
  name: "logs",
  inputSchema: { type: "object" },
  handler: (_args, ctx) => Effect.as(ctx.log("info", "working"), text(ctx.client.info?.name ?? "anonymous"))
})

const echo = McpServer.tool({
  name: "echo",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text: said }) => Effect.succeed(text(said))
})

const notes = McpServer.resource({
  uri: "mem://notes",
  name: "notes",
  read: () => Effect.succeed({ contents: [{ uri: "mem://notes", text: "remember" }] })
})

const constant = McpServer.resource({
  uri: "mem://constant",
  name: "constant",
  cache: { ttlMs: 86_400_000, cacheScope: "public" },
  read: () => Effect.succeed({ contents: [{ uri: "mem://constant", text: "42" }] })
})

const context = McpServer.prompt({
  name: "with_context",
  get: (_args, ctx) =>
    ctx.elicit({ message: "Context?", requestedSchema: form("context") }, { key: "user_context" }).pipe(
      Effect.map((answer) => ({
        messages: [{ role: "user" as const, content: { type: "text" as const, text: String(answer.content?.context) } }]
      })),
      Effect.orDie
    )
})

const serverInfo = { name: "modern-server", version: "2.0.0" }

const MODERN = "2026-07-28"
const metaOf = (capabilities: McpSchema.ClientCapabilities = {}, extra: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": { name: "modern-client", version: "1" },
  ...extra
})
const ALL = { elicitation: {}, sampling: {}, roots: {} }

const serve = (options: Partial<McpServer.ItemsOptions> = {}) =>
  Effect.gen(function*() {
    const server = yield* McpServer.fromItems({
      modern: true,
      serverInfo,
      instructions: "be modern",
      tools: [askName, twoSteps, allAtOnce, sameKey, needsSampling, logs, echo],
      resources: [notes, constant],
      prompts: [context],
      ...options
    })
    const { transport } = yield* McpServer.connectMemory(server)
    const peer = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
    return { server, peer }
  })

const protocolError = <A>(exit: Exit.Exit<A, McpError.McpError>) => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`expected a failure, got ${String(exit)}`)
  const reason = exit.cause.error.reason
  if (reason._tag !== "Protocol") throw new Error(`expected a Protocol error, got ${reason._tag}`)
  return { code: reason.code, message: reason.message, data: reason.data }
}

const call = (
  peer: Peer.Peer,
  name: string,
  extra: Record<string, unknown> = {},
  capabilities: McpSchema.ClientCapabilities = ALL
) => peer.request("tools/call", { name, arguments: {}, _meta: metaOf(capabilities), ...extra })

const accept = (content: Record<string, unknown>) => ({ action: "accept", content })

describe("McpServer, modern requests (2026-07-28)", () => {
  describe("per-request _meta", () => {
    it.scoped("answers server/discover with the revisions, capabilities, identity and caching hint", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve({ caching: { discover: { ttlMs: 60_000, cacheScope: "public" } } })
        const result = yield* peer.request("server/discover", { _meta: metaOf() })
        expect(result).toMatchObject({
          resultType: "complete",
          supportedVersions: [MODERN, ...McpSchema.SUPPORTED_PROTOCOL_VERSIONS],
          capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: {} },
          instructions: "be modern",
          ttlMs: 60_000,
          cacheScope: "public",
          _meta: { "io.modelcontextprotocol/serverInfo": serverInfo }
        })
        expect((result.capabilities as McpSchema.ServerCapabilities).tasks).toBeUndefined()
      }))

    it.scoped("refuses a request without the required _meta keys (-32602) or an unknown revision (-32022)", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        const missing = [
          {},
          { _meta: { "io.modelcontextprotocol/clientCapabilities": {} } },
          { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } }
        ]
        for (const params of missing) {
          expect(protocolError(yield* Effect.exit(peer.request("server/discover", params))).code).toBe(-32602)
        }
        const unknown = { _meta: metaOf({}, { "io.modelcontextprotocol/protocolVersion": "v999.0.0" }) }
        expect(protocolError(yield* Effect.exit(peer.request("tools/list", unknown)))).toMatchObject({
          code: -32022,
          data: { supported: [MODERN, ...McpSchema.SUPPORTED_PROTOCOL_VERSIONS], requested: "v999.0.0" }
        })
        // Served without clientInfo (a SHOULD), answered as the client it declares.
        const bare = {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientCapabilities": {}
        }
        expect(yield* peer.request("tools/call", { name: "logs", _meta: bare })).toMatchObject(text("anonymous"))
        expect(yield* call(peer, "logs")).toMatchObject(text("modern-client"))
      }))

    it.scoped("answers the methods 2026-07-28 removed with -32601", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe", "tasks/list"]) {
          const exit = yield* Effect.exit(peer.request(method, { _meta: metaOf(), uri: "mem://notes", level: "info" }))
          expect(protocolError(exit).code).toBe(-32601)
        }
      }))

    it.scoped("sends log messages only when the request sets a logLevel", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        const notifications = yield* peer.subscribe
        yield* call(peer, "logs")
        expect(yield* Queue.size(notifications)).toBe(0)
        yield* peer.request("tools/call", {
          name: "logs",
          _meta: metaOf({}, { "io.modelcontextprotocol/logLevel": "info" })
        })
        expect(yield* Queue.take(notifications)).toMatchObject({
          method: "notifications/message",
          params: { level: "info", data: "working" }
        })
      }))

    it.scoped("gives lists and reads their caching hints, and -32602 for an unknown resource", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve({ caching: { tools: { ttlMs: 5000, cacheScope: "public" } } })
        const tools = yield* peer.request("tools/list", { _meta: metaOf() })
        expect(tools).toMatchObject({ resultType: "complete", ttlMs: 5000, cacheScope: "public" })
        for (const method of ["prompts/list", "resources/list", "resources/templates/list"]) {
          expect(yield* peer.request(method, { _meta: metaOf() })).toMatchObject({ ttlMs: 0, cacheScope: "private" })
        }
        const read = yield* peer.request("resources/read", { uri: "mem://notes", _meta: metaOf() })
        expect(read).toMatchObject({ contents: [{ text: "remember" }], ttlMs: 0, cacheScope: "private" })
        // A resource's own hint wins.
        const constantRead = yield* peer.request("resources/read", { uri: "mem://constant", _meta: metaOf() })
        expect(constantRead).toMatchObject({ ttlMs: 86_400_000, cacheScope: "public" })
        const unknown = yield* Effect.exit(peer.request("resources/read", { uri: "mem://none", _meta: metaOf() }))
        expect(protocolError(unknown)).toMatchObject({ code: -32602, data: { uri: "mem://none" } })
      }))
  })

  describe("input required (MRTR)", () => {
    it.scoped("asks in one round and completes with the answer", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        const first = yield* call(peer, "ask_name")
        expect(first).toMatchObject({
          resultType: "input_required",
          inputRequests: {
            user_name: { method: "elicitation/create", params: { message: "What is your name?" } }
          }
        })
        expect(typeof first.requestState).toBe("string")
        const done = yield* call(peer, "ask_name", {
          inputResponses: { user_name: accept({ name: "Alice" }) },
          requestState: first.requestState
        })
        expect(done).toMatchObject({ ...text("Hello, Alice!"), resultType: "complete" })
      }))

    it.scoped("carries earlier answers in requestState over several rounds", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        const first = yield* call(peer, "two_steps")
        expect(Object.keys(first.inputRequests as object)).toEqual(["step1"])
        const second = yield* call(peer, "two_steps", {
          inputResponses: { step1: accept({ name: "Alice" }) },
          requestState: first.requestState
        })
        expect(second.resultType).toBe("input_required")
        expect(Object.keys(second.inputRequests as object)).toEqual(["step2"])
        expect(second.requestState).not.toBe(first.requestState)
        const done = yield* call(peer, "two_steps", {
          inputResponses: { step2: accept({ color: "blue" }) },
          requestState: second.requestState
        })
        expect(done).toMatchObject(text("Alice likes blue"))
      }))

    it.scoped("keeps keys unique in a run: a key asked under twice names the second request input-<n>", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        const first = yield* call(peer, "same_key")
        expect(Object.keys(first.inputRequests as object)).toEqual(["dup"])
        const second = yield* call(peer, "same_key", {
          inputResponses: { dup: accept({ a: "one" }) },
          requestState: first.requestState
        })
        expect(second.inputRequests).toMatchObject({ "input-2": { params: { message: "Second?" } } })
        const done = yield* call(peer, "same_key", {
          inputResponses: { "input-2": accept({ a: "two" }) },
          requestState: second.requestState
        })
        expect(done).toMatchObject(text("one two"))
      }))

    it.scoped("asks requests made at once in the same round", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        const first = yield* call(peer, "all_at_once")
        const asked = first.inputRequests as Record<string, { method: string }>
        expect(Object.values(asked).map((request) => request.method).sort()).toEqual([
          "elicitation/create",
          "roots/list",
          "sampling/createMessage"
        ])
        const answers: Record<string, unknown> = {}
        for (const [key, request] of Object.entries(asked)) {
          answers[key] = request.method === "elicitation/create"
            ? accept({ name: "Ada" })
            : request.method === "roots/list"
            ? { roots: [{ uri: "file:///a" }] }
            : { role: "assistant", content: { type: "text", text: "yo" }, model: "m" }
        }
        const done = yield* call(peer, "all_at_once", { inputResponses: answers, requestState: first.requestState })
        expect(done).toMatchObject(text(`Ada {"type":"text","text":"yo"} 1`))
      }))

    it.scoped("refuses a tampered requestState, or another request's", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        const first = yield* call(peer, "ask_name")
        const answers = { user_name: accept({ name: "Mallory" }) }
        const tampered = `${String(first.requestState)}-TAMPERED`
        const exit = yield* Effect.exit(call(peer, "ask_name", { inputResponses: answers, requestState: tampered }))
        expect(protocolError(exit).code).toBe(-32602)
        const other = yield* Effect.exit(
          call(peer, "two_steps", { inputResponses: answers, requestState: first.requestState })
        )
        expect(protocolError(other).message).toMatch(/another request/)
        // Nor for the same tool with other arguments.
        const otherArgs = yield* Effect.exit(
          call(peer, "ask_name", { arguments: { x: 1 }, inputResponses: answers, requestState: first.requestState })
        )
        expect(protocolError(otherArgs).message).toMatch(/another request/)
      }))

    it.scoped("shares requestState between servers configured with the same secret", () =>
      Effect.gen(function*() {
        const stateSecret = Redacted.make("shared")
        const one = yield* serve({ stateSecret })
        const two = yield* serve({ stateSecret })
        const three = yield* serve()
        const first = yield* call(one.peer, "two_steps")
        const retry = { inputResponses: { step1: accept({ name: "Bo" }) }, requestState: first.requestState }
        expect((yield* call(two.peer, "two_steps", retry)).resultType).toBe("input_required")
        expect(protocolError(yield* Effect.exit(call(three.peer, "two_steps", retry))).code).toBe(-32602)
      }))

    it.scoped("checks the client's capabilities: -32021 from a handler, NotDeclared to it", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        const exit = yield* Effect.exit(call(peer, "needs_sampling", {}, { elicitation: {} }))
        expect(protocolError(exit)).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } })
        const refused = yield* call(peer, "ask_name", {}, { sampling: {} })
        expect(refused).toMatchObject({ isError: true, resultType: "complete" })
      }))

    it.scoped("checks answers against the request, ignores answers to nothing asked", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        const bad = [{ user_name: 12345 }, { user_name: accept({ name: 5 }) }, { user_name: { action: "maybe" } }]
        for (const inputResponses of bad) {
          expect(protocolError(yield* Effect.exit(call(peer, "ask_name", { inputResponses }))).code).toBe(-32602)
        }
        expect(protocolError(yield* Effect.exit(call(peer, "ask_name", { inputResponses: null }))).code).toBe(-32602)
        const extra = { user_name: accept({ name: "Alice" }), unknown_extra_key: accept({ foo: "bar" }) }
        expect(yield* call(peer, "ask_name", { inputResponses: extra })).toMatchObject(text("Hello, Alice!"))
        // Answers to other keys: asked again.
        const wrong = yield* call(peer, "ask_name", { inputResponses: { wrong_key: accept({ data: "x" }) } })
        expect(wrong.resultType).toBe("input_required")
      }))

    it.scoped("asks for input on prompts/get too, never on lists", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve()
        const params = { name: "with_context", _meta: metaOf(ALL) }
        const first = yield* peer.request("prompts/get", params)
        expect(first).toMatchObject({ resultType: "input_required", inputRequests: { user_context: {} } })
        const done = yield* peer.request("prompts/get", {
          ...params,
          inputResponses: { user_context: accept({ context: "tea" }) },
          requestState: first.requestState
        })
        expect(done).toMatchObject({ resultType: "complete", messages: [{ content: { text: "tea" } }] })
        expect((yield* peer.request("tools/list", { _meta: metaOf(ALL) })).resultType).toBe("complete")
      }))
  })

  describe("subscriptions/listen", () => {
    it.scoped("acknowledges what it honours, then tells only that, tagged with its id", () =>
      Effect.gen(function*() {
        const { peer, server } = yield* serve()
        const notifications = yield* peer.subscribe
        const listening = yield* Effect.fork(peer.request("subscriptions/listen", {
          _meta: metaOf(),
          notifications: { toolsListChanged: true, resourceSubscriptions: ["mem://notes"], bogus: true }
        }))
        const ack = yield* Queue.take(notifications)
        expect(ack).toMatchObject({
          method: "notifications/subscriptions/acknowledged",
          params: { notifications: { toolsListChanged: true, resourceSubscriptions: ["mem://notes"] } }
        })
        const id = (ack.params?._meta as Record<string, unknown>)["io.modelcontextprotocol/subscriptionId"]
        expect(id).toBeDefined()
        yield* server.notifyListChanged("prompts")
        yield* server.notifyListChanged("tools")
        yield* server.notifyResourceUpdated("mem://other")
        yield* server.notifyResourceUpdated("mem://notes")
        expect(yield* Queue.take(notifications)).toMatchObject({
          method: "notifications/tools/list_changed",
          params: { _meta: { "io.modelcontextprotocol/subscriptionId": id } }
        })
        expect(yield* Queue.take(notifications)).toMatchObject({
          method: "notifications/resources/updated",
          params: { uri: "mem://notes", _meta: { "io.modelcontextprotocol/subscriptionId": id } }
        })
        yield* Fiber.interrupt(listening)
      }))
  })

  describe("the tasks extension", () => {
    const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } }
    const confirm = McpServer.tool({
      name: "confirm",
      execution: { taskSupport: "optional" },
      inputSchema: { type: "object" },
      handler: (_args, ctx) =>
        ctx.elicit({ message: "Sure?", requestedSchema: form("ok", "boolean") }, { key: "sure" }).pipe(
          Effect.map((answer) => text(`ok: ${String(answer.content?.ok)}`)),
          Effect.orDie
        )
    })
    const forever = McpServer.tool({
      name: "forever",
      execution: { taskSupport: "required" },
      inputSchema: { type: "object" },
      handler: () => Effect.never
    })
    // Asks a name by MRTR before it goes async, then sleeps: the task starts once it has the name.
    const greetLater = McpServer.tool({
      name: "greet_later",
      execution: { taskSupport: "required" },
      inputSchema: { type: "object" },
      handler: (_args, ctx) =>
        ctx.elicit({ message: "Name?", requestedSchema: form("name") }, { key: "who", beforeTask: true }).pipe(
          Effect.flatMap((answer) =>
            Effect.as(Effect.sleep("1 second"), text(`Hello, ${String(answer.content?.name)}`))
          ),
          Effect.orDie
        )
    })
    const quick = McpServer.tool({
      name: "quick",
      execution: { taskSupport: "optional" },
      inputSchema: { type: "object" },
      handler: () => Effect.succeed(text("quick"))
    })
    const tasks = () => serve({ tools: [confirm, forever, greetLater, quick, echo], tasks: { pollInterval: 50 } })
    const get = (peer: Peer.Peer, taskId: unknown) => peer.request("tasks/get", { taskId, _meta: metaOf(TASKS) })
    // Polls without sleeping: the task's fiber moves on between the answers.
    const until = (peer: Peer.Peer, taskId: unknown, status: string) =>
      get(peer, taskId).pipe(Effect.repeat({ until: (task) => task.status === status }))

    it.scoped("runs a task-supporting tool as a task, asks for input on tasks/get, resumes on tasks/update", () =>
      Effect.gen(function*() {
        const { peer } = yield* tasks()
        const discovered = yield* peer.request("server/discover", { _meta: metaOf() })
        expect(discovered.capabilities).toMatchObject({ extensions: { "io.modelcontextprotocol/tasks": {} } })
        const created = yield* call(peer, "confirm", {}, { ...ALL, ...TASKS })
        expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: 3_600_000, pollIntervalMs: 50 })
        const waiting = yield* until(peer, created.taskId, "input_required")
        expect(waiting.inputRequests).toMatchObject({ sure: { method: "elicitation/create" } })
        const bad = yield* Effect.exit(peer.request("tasks/update", {
          taskId: created.taskId,
          inputResponses: { sure: accept({ ok: "yes" }) },
          _meta: metaOf(TASKS)
        }))
        expect(protocolError(bad).code).toBe(-32602)
        const ack = yield* peer.request("tasks/update", {
          taskId: created.taskId,
          inputResponses: { sure: accept({ ok: true }) },
          _meta: metaOf(TASKS)
        })
        expect(ack).toEqual(expect.objectContaining({ resultType: "complete" }))
        expect(ack.taskId).toBeUndefined()
        const done = yield* until(peer, created.taskId, "completed")
        expect(done.result).toMatchObject({ ...text("ok: true"), resultType: "complete" })
        // Without the extension: a plain call (answered by MRTR here).
        expect((yield* call(peer, "confirm")).resultType).toBe("input_required")
      }))

    it.scoped("asks beforeTask input by MRTR, then becomes a task; a call done at once is a task done", () =>
      Effect.gen(function*() {
        const { peer } = yield* tasks()
        const first = yield* call(peer, "greet_later", {}, { ...ALL, ...TASKS })
        expect(first).toMatchObject({
          resultType: "input_required",
          inputRequests: { who: { method: "elicitation/create" } }
        })
        expect(first.taskId).toBeUndefined()
        const created = yield* call(peer, "greet_later", {
          inputResponses: { who: accept({ name: "Ada" }) },
          requestState: first.requestState
        }, { ...ALL, ...TASKS })
        expect(created).toMatchObject({ resultType: "task", status: "working" })
        expect(created.requestState).toBeUndefined()
        // The task runs on in the server: its sleep is on the TestClock.
        yield* TestClock.adjust("1 second")
        const done = yield* until(peer, created.taskId, "completed")
        expect(done.result).toMatchObject(text("Hello, Ada"))
        // A call done before it could go async is a task too, already done.
        const instant = yield* call(peer, "quick", {}, TASKS)
        expect(instant).toMatchObject({ resultType: "task", status: "working" })
        expect(yield* get(peer, instant.taskId)).toMatchObject({ status: "completed", result: text("quick") })
      }))

    it.scoped("keepInline holds a call inline while it waits, until it ends or calls becomeTask", () =>
      Effect.gen(function*() {
        const gate = yield* Deferred.make<void>()
        const held = McpServer.tool({
          name: "held",
          execution: { taskSupport: "required" },
          inputSchema: { type: "object" },
          handler: (_args, ctx) => Effect.as(ctx.keepInline(Deferred.await(gate)), text("held"))
        })
        const escalating = McpServer.tool({
          name: "escalating",
          execution: { taskSupport: "required" },
          inputSchema: { type: "object" },
          handler: (_args, ctx) => ctx.keepInline(Effect.zipRight(ctx.becomeTask(), Effect.never))
        })
        const { peer } = yield* serve({ tools: [held, escalating] })
        const waiting = yield* Effect.fork(call(peer, "held", {}, TASKS))
        // Far past the scheduler turns that make a waiting call a task.
        yield* Effect.forEach(Array.from({ length: 200 }), () => Effect.yieldNow(), { discard: true })
        expect(waiting.unsafePoll()).toBeNull()
        yield* Deferred.succeed(gate, undefined)
        const created = yield* Fiber.join(waiting)
        expect(created).toMatchObject({ resultType: "task" })
        expect(yield* get(peer, created.taskId)).toMatchObject({ status: "completed", result: text("held") })
        expect(yield* call(peer, "escalating", {}, TASKS)).toMatchObject({ resultType: "task", status: "working" })
      }))

    it.scoped("forgets a task after its ttlMs, and ends its work", () =>
      Effect.gen(function*() {
        const ended = yield* Deferred.make<void>()
        const watched = McpServer.tool({
          name: "watched",
          execution: { taskSupport: "required" },
          inputSchema: { type: "object" },
          handler: () => Effect.onInterrupt(Effect.never, () => Deferred.succeed(ended, undefined))
        })
        const { peer } = yield* serve({ tools: [watched], tasks: { ttlMs: 5_000 } })
        const created = yield* call(peer, "watched", {}, TASKS)
        expect(created).toMatchObject({ resultType: "task", ttlMs: 5_000 })
        yield* TestClock.adjust("5 seconds")
        yield* Deferred.await(ended)
        expect(protocolError(yield* Effect.exit(get(peer, created.taskId))).code).toBe(-32602)
      }))

    it.scoped("refuses required-task tools and tasks methods to a client without the extension; cancels", () =>
      Effect.gen(function*() {
        const { peer } = yield* tasks()
        const refused = yield* Effect.exit(call(peer, "forever"))
        expect(protocolError(refused)).toMatchObject({
          code: -32021,
          data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } }
        })
        const created = yield* call(peer, "forever", {}, TASKS)
        const undeclared = yield* Effect.exit(peer.request("tasks/get", { taskId: created.taskId, _meta: metaOf() }))
        expect(protocolError(undeclared).code).toBe(-32021)
        const cancelled = yield* peer.request("tasks/cancel", { taskId: created.taskId, _meta: metaOf(TASKS) })
        expect(cancelled).toEqual(expect.objectContaining({ resultType: "complete" }))
        expect((yield* get(peer, created.taskId)).status).toBe("cancelled")
        const unknown = yield* Effect.exit(get(peer, "no-such-task"))
        expect(protocolError(unknown).code).toBe(-32602)
      }))

    it.scoped("limits working tasks per requestor (all callers without OAuth) and tasks kept; evicts finished first", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve({
          tools: [forever, quick],
          tasks: { maxWorkingPerRequestor: 2, maxKept: 3 }
        })
        const first = yield* call(peer, "forever", {}, TASKS)
        const second = yield* call(peer, "forever", {}, TASKS)
        // A third working task is refused before it starts, the limit named.
        expect(protocolError(yield* Effect.exit(call(peer, "forever", {}, TASKS)))).toMatchObject({
          code: -32603,
          message: "Too many working tasks: at most 2 per requestor; retry once one of them ends",
          data: { limit: "maxWorkingPerRequestor", max: 2 }
        })
        // A finished task does not count: the table keeps 3, one of them done.
        yield* peer.request("tasks/cancel", { taskId: first.taskId, _meta: metaOf(TASKS) })
        const third = yield* call(peer, "forever", {}, TASKS)
        expect((yield* get(peer, first.taskId)).status).toBe("cancelled")
        // The table is full: the oldest finished task is forgotten for the next.
        yield* peer.request("tasks/cancel", { taskId: second.taskId, _meta: metaOf(TASKS) })
        const done = yield* call(peer, "quick", {}, TASKS)
        expect(protocolError(yield* Effect.exit(get(peer, first.taskId))).code).toBe(-32602)
        expect((yield* get(peer, second.taskId)).status).toBe("cancelled")
        expect((yield* until(peer, done.taskId, "completed")).status).toBe("completed")
        expect((yield* get(peer, third.taskId)).status).toBe("working")
      }))

    it.scoped("calls at once count from their start, inline: a burst cannot pass the limit", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve({ tools: [forever], tasks: { maxWorkingPerRequestor: 1 } })
        const both = yield* Effect.all(
          [call(peer, "forever", {}, TASKS), call(peer, "forever", {}, TASKS)].map(
            Effect.exit
          ),
          { concurrency: 2 }
        )
        expect(both.filter(Exit.isSuccess)).toHaveLength(1)
        expect(protocolError(both.find(Exit.isFailure)!)).toMatchObject({ data: { limit: "maxWorkingPerRequestor" } })
      }))

    it.scoped("a table full of working tasks refuses the next, naming maxKept", () =>
      Effect.gen(function*() {
        const { peer } = yield* serve({ tools: [forever], tasks: { maxKept: 1 } })
        yield* call(peer, "forever", {}, TASKS)
        expect(protocolError(yield* Effect.exit(call(peer, "forever", {}, TASKS)))).toMatchObject({
          code: -32603,
          message: "Too many tasks: the server keeps at most 1, all still working; retry once one ends",
          data: { limit: "maxKept", max: 1 }
        })
      }))
  })

  it.scoped("answers modern requests by modernHandlers, made for none of them; a listen and a session by handlers", () =>
    Effect.gen(function*() {
      let made = 0
      const own = (name: string): McpServer.Handlers => ({
        tools: {
          list: () => Effect.succeed([{ name, inputSchema: { type: "object" } }]),
          call: (_name, _args, ctx) =>
            Effect.as(
              ctx.notify("notifications/message", { level: "info", data: ctx.client.info?.name }),
              text(`${name} for ${ctx.client.info?.name ?? "?"}, caller ${ctx.caller?.subject ?? "none"}`)
            )
        },
        resources: { list: () => Effect.succeed([]), read: (uri) => Effect.fail(McpServer.resourceNotFound(uri)) }
      })
      const server = yield* McpServer.make({
        serverInfo,
        handlers: () => Effect.sync(() => (made++, own("per-client"))),
        modernHandlers: own("shared")
      })
      const { transport } = yield* McpServer.connectMemory(server)
      const peer = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
      const notifications = yield* peer.subscribe
      // Whatever the log level: a notification of the request's own, on its stream.
      expect(yield* call(peer, "shared")).toMatchObject(text("shared for modern-client, caller none"))
      expect(yield* Queue.take(notifications)).toMatchObject({
        method: "notifications/message",
        params: { level: "info", data: "modern-client" }
      })
      expect(yield* peer.request("tools/list", { _meta: metaOf() })).toMatchObject({ tools: [{ name: "shared" }] })
      expect(made).toBe(0)
      const listening = yield* Effect.fork(peer.request("subscriptions/listen", {
        _meta: metaOf(),
        notifications: { toolsListChanged: true }
      }))
      expect((yield* Queue.take(notifications)).method).toBe("notifications/subscriptions/acknowledged")
      expect(made).toBe(1)
      yield* Fiber.interrupt(listening)
      const stateful = yield* McpServer.connectMemory(server)
      const client = yield* McpClient.make({ protocolVersion: "2025-11-25" }).pipe(
        Effect.provideService(Transport, stateful.transport)
      )
      const result = yield* client.callTool("per-client", {})
      expect(result.content[0]).toMatchObject({ text: expect.stringMatching(/^per-client for .+, caller none$/) })
      expect(made).toBe(2)
    }))

  it.scoped("serves a stateful client and modern requests side by side", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.fromItems({ modern: true, serverInfo, tools: [echo] })
      const stateful = yield* McpServer.connectMemory(server)
      // A client of the stateful revisions (McpClient would otherwise pick 2026-07-28 here).
      const client = yield* McpClient.make({ protocolVersion: "2025-11-25" }).pipe(
        Effect.provideService(Transport, stateful.transport)
      )
      const modern = yield* McpServer.connectMemory(server)
      const peer = yield* Peer.make().pipe(Effect.provideService(Transport, modern.transport))
      expect(yield* client.callTool("echo", { text: "old" })).toEqual(text("old"))
      const result = yield* peer.request("tools/call", { name: "echo", arguments: { text: "new" }, _meta: metaOf() })
      expect(result).toMatchObject({ ...text("new"), resultType: "complete" })
      expect(stateful.session.client()?.protocolVersion).toBe(McpSchema.LATEST_PROTOCOL_VERSION)
      expect(modern.session.client()).toBeUndefined()
      // A stateful session knows no modern-only method; a modern request in it is its own.
      expect(
        protocolError(yield* Effect.exit(client.request("server/discover", { _meta: metaOf() }, Schema.Unknown))).code
      )
        .toBe(-32601)
    }))
})
