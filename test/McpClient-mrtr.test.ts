import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import * as Host from "../src/Host.js"
import type * as JsonRpc from "../src/JsonRpc.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import type * as Peer from "../src/Peer.js"
import { failure, text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { type ModernServer, modernServer } from "./support/modern.js"

const capabilities = { tools: {}, prompts: {}, resources: {} }

// A server of 2026-07-28 is played by raw handlers: what it answers, and what it was sent.
const connect = (handlers: Record<string, Peer.Handler>, options?: McpClient.Options) =>
  Effect.gen(function*() {
    const fake = yield* modernServer(
      "mrtr-server",
      { ...capabilities, extensions: { "io.modelcontextprotocol/tasks": {} } },
      handlers
    )
    const client = yield* McpClient.make(options).pipe(Effect.provideService(Transport, fake.transport))
    const sent = (method: string) => fake.requests.filter((request) => request.method === method)
    return { fake, client, sent }
  })

const confirm = {
  method: "elicitation/create",
  params: {
    mode: "form",
    message: "Please confirm",
    requestedSchema: {
      type: "object",
      properties: { confirmed: { type: "boolean", default: true } }
    }
  }
}

// A user who accepts every form without typing anything: the Host fills in the defaults.
const accepting = (seen: Array<McpSchema.ElicitRequestParams> = []) =>
  Host.layerElicitation({
    elicit: (request) => Effect.sync(() => seen.push(request)).pipe(Effect.as({ action: "accept", content: {} }))
  })

const sampled: McpSchema.CreateMessageResult = {
  role: "assistant",
  content: { type: "text", text: "Paris" },
  model: "m",
  stopReason: "endTurn"
}

const paramsOf = (request: JsonRpc.Request) => request.params as Record<string, unknown>

// Bytes a careless client might normalize: whitespace, escapes, non-ASCII, a JSON look-alike.
const STATE = " {\"nonce\": \"é\\u00e9\",  \"n\":1.0}\n\t"

describe("MRTR (2026-07-28)", () => {
  it.scoped("answers one round and retries with a new id, the answers and the state byte for byte", () =>
    Effect.gen(function*() {
      const seen: Array<McpSchema.ElicitRequestParams> = []
      const { client, sent } = yield* connect({
        "tools/call": (request) =>
          Effect.succeed(
            paramsOf(request).inputResponses === undefined
              ? { resultType: "input_required", inputRequests: { confirm }, requestState: STATE }
              : { resultType: "complete", ...text(JSON.stringify(paramsOf(request).inputResponses)) }
          )
      }).pipe(Effect.provide(accepting(seen)))
      const result = yield* client.callTool("t", { a: 1 })
      expect(result.content).toEqual([{
        type: "text",
        text: JSON.stringify({ confirm: { action: "accept", content: { confirmed: true } } })
      }])
      const [first, retry] = sent("tools/call")
      expect(retry!.id).not.toEqual(first!.id)
      expect(paramsOf(retry!).requestState).toBe(STATE)
      expect(paramsOf(retry!).name).toBe("t")
      expect(paramsOf(retry!).arguments).toEqual({ a: 1 })
      expect(paramsOf(first!)).not.toHaveProperty("requestState")
      expect((paramsOf(retry!)._meta as Record<string, unknown>)["io.modelcontextprotocol/protocolVersion"]).toBe(
        "2026-07-28"
      )
      expect(seen.map((request) => request.message)).toEqual(["Please confirm"])
    }))

  it.scoped("takes several rounds, each retry with that round's answers and state only", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* connect({
        "tools/call": (request) => {
          const state = paramsOf(request).requestState as string | undefined
          const round = state === undefined ? 1 : Number(state.slice(6)) + 1
          return Effect.succeed(
            round <= 3
              ? {
                resultType: "input_required",
                inputRequests: { [`q${round}`]: confirm },
                requestState: `round-${round}`
              }
              : { resultType: "complete", ...text("done") }
          )
        }
      }).pipe(Effect.provide(accepting()))
      expect((yield* client.callTool("t")).content).toEqual(text("done").content)
      const calls = sent("tools/call").map(paramsOf)
      expect(calls.map((params) => params.requestState)).toEqual([undefined, "round-1", "round-2", "round-3"])
      expect(calls.map((params) => Object.keys((params.inputResponses ?? {}) as object))).toEqual([[], ["q1"], ["q2"], [
        "q3"
      ]])
      expect(new Set(sent("tools/call").map((request) => request.id)).size).toBe(4)
    }))

  it.scoped("answers several input requests of one result: elicitation, sampling and roots", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* connect({
        "prompts/get": (request) =>
          Effect.succeed(
            paramsOf(request).inputResponses === undefined
              ? {
                resultType: "input_required",
                inputRequests: {
                  login: confirm,
                  capital: {
                    method: "sampling/createMessage",
                    params: { messages: [{ role: "user", content: { type: "text", text: "Capital?" } }], maxTokens: 10 }
                  },
                  where: { method: "roots/list" }
                }
              }
              : { resultType: "complete", messages: [] }
          )
      }).pipe(
        Effect.provide(Layer.mergeAll(
          accepting(),
          Host.layerSampling({ createMessage: () => Effect.succeed(sampled) }),
          Host.layerRoots([{ uri: "file:///project", name: "project" }])
        ))
      )
      expect((yield* client.getPrompt("p")).messages).toEqual([])
      const retry = paramsOf(sent("prompts/get")[1]!)
      expect(retry.inputResponses).toEqual({
        login: { action: "accept", content: { confirmed: true } },
        capital: sampled,
        where: { roots: [{ uri: "file:///project", name: "project" }] }
      })
      // No state was given, so none is sent back.
      expect(retry).not.toHaveProperty("requestState")
    }))

  it.scoped("retries at once with the state alone when the server asks for nothing (resources/read)", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* connect({
        "resources/read": (request) =>
          Effect.succeed(
            paramsOf(request).requestState === undefined
              ? { resultType: "input_required", requestState: "later" }
              : { resultType: "complete", contents: [{ uri: "file:///a", text: "a" }] }
          )
      })
      expect((yield* client.readResource("file:///a")).contents).toEqual([{ uri: "file:///a", text: "a" }])
      const retry = paramsOf(sent("resources/read")[1]!)
      const { _meta, ...own } = retry
      expect(own).toEqual({ uri: "file:///a", requestState: "later" })
    }))

  it.scoped("a result without resultType, or complete, is final", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* connect({
        "tools/call": (request) =>
          Effect.succeed(
            paramsOf(request).name === "plain"
              ? text("plain")
              : { resultType: "complete", ...text("complete") }
          )
      })
      expect((yield* client.callTool("plain")).content).toEqual(text("plain").content)
      expect((yield* client.callTool("t")).content).toEqual(text("complete").content)
      expect(sent("tools/call")).toHaveLength(2)
    }))

  it.scoped("keeps parallel calls apart: neither sees the other's answers or state", () =>
    Effect.gen(function*() {
      const asked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const elicitation = Host.layerElicitation({
        elicit: () =>
          Deferred.succeed(asked, undefined).pipe(
            Effect.zipRight(Deferred.await(release)),
            Effect.as({ action: "accept" as const, content: {} })
          )
      })
      const { client, sent } = yield* connect({
        "tools/call": (request) => {
          const params = paramsOf(request)
          if (params.name !== "mrtr") return Effect.succeed({ resultType: "complete", ...text(`${params.name}`) })
          return Effect.succeed(
            params.requestState === undefined
              ? {
                resultType: "input_required",
                inputRequests: { confirm },
                requestState: `state-of-${(params.arguments as { n?: number }).n}`
              }
              : { resultType: "complete", ...text(params.requestState as string) }
          )
        }
      }).pipe(Effect.provide(elicitation))
      const first = yield* Effect.fork(client.callTool("mrtr", { n: 1 }))
      yield* Deferred.await(asked)
      // Sent while the first call's round is open.
      expect((yield* client.callTool("unrelated")).content).toEqual(text("unrelated").content)
      const second = yield* Effect.fork(client.callTool("mrtr", { n: 2 }))
      yield* Deferred.succeed(release, undefined)
      expect((yield* Fiber.join(first)).content).toEqual(text("state-of-1").content)
      expect((yield* Fiber.join(second)).content).toEqual(text("state-of-2").content)
      const unrelated = sent("tools/call").map(paramsOf).find((params) => params.name === "unrelated")!
      expect(unrelated).not.toHaveProperty("inputResponses")
      expect(unrelated).not.toHaveProperty("requestState")
    }))

  it.scoped("an unknown resultType is a Protocol error", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({
        "tools/call": () => Effect.succeed({ resultType: "maybe_later", content: [] })
      })
      const error = failure(yield* Effect.exit(client.callTool("t")))
      expect(error.reason._tag).toBe("Protocol")
      expect(error.message).toContain("maybe_later")
      expect(error.message).toContain("mrtr-server")
    }))

  it.scoped("an input request of a kind the client did not declare fails the call, naming it", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* connect({
        "tools/call": () =>
          Effect.succeed({
            resultType: "input_required",
            inputRequests: { s: { method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } } }
          })
      }).pipe(Effect.provide(accepting()))
      const error = failure(yield* Effect.exit(client.callTool("t")))
      expect(error.reason).toMatchObject({ _tag: "Protocol", code: -32601 })
      expect(error.message).toContain("sampling/createMessage")
      // Nothing is retried without the answer the server needs.
      expect(sent("tools/call")).toHaveLength(1)
    }))

  it.scoped("checks an answer as the stateful path does: a form that misses the schema is not sent", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* connect({
        "tools/call": () =>
          Effect.succeed({
            resultType: "input_required",
            inputRequests: {
              age: {
                method: "elicitation/create",
                params: {
                  message: "Age?",
                  requestedSchema: { type: "object", properties: { age: { type: "integer" } }, required: ["age"] }
                }
              }
            }
          })
      }).pipe(Effect.provide(accepting()))
      const error = failure(yield* Effect.exit(client.callTool("t")))
      expect(error.message).toContain("does not match the requested schema")
      expect(sent("tools/call")).toHaveLength(1)
    }))

  it.scoped("stops a server that keeps asking, with an error naming it", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* connect({
        "tools/call": () =>
          Effect.succeed({ resultType: "input_required", inputRequests: { confirm }, requestState: "x" })
      }).pipe(Effect.provide(accepting()))
      const error = failure(yield* Effect.exit(client.callTool("t")))
      expect(error.reason).toMatchObject({ _tag: "Limit", limit: 10 })
      expect(error.message).toContain("mrtr-server")
      expect(sent("tools/call")).toHaveLength(10)
    }))

  it.scoped("progress of every round reaches the caller", () =>
    Effect.gen(function*() {
      // The handlers reach the server they belong to once it is made.
      const holder: { server?: ModernServer } = {}
      const progress = (request: JsonRpc.Request, value: number) => {
        const token = (paramsOf(request)._meta as { progressToken?: string | number } | undefined)?.progressToken
        return token === undefined
          ? Effect.void
          : Effect.ignore(
            holder.server!.peer.notify("notifications/progress", { progressToken: token, progress: value })
          )
      }
      const { client, fake } = yield* connect({
        "tools/call": (request) =>
          paramsOf(request).inputResponses === undefined
            ? Effect.as(progress(request, 1), { resultType: "input_required", inputRequests: { confirm } })
            : Effect.as(progress(request, 2), { resultType: "complete", ...text("ok") })
      }).pipe(Effect.provide(accepting()))
      holder.server = fake
      const seen: Array<number> = []
      yield* client.callTool("t", {}, { onProgress: (p) => Effect.sync(() => seen.push(p.progress)) })
      expect(seen).toEqual([1, 2])
    }))

  it.scoped("answers a round's input requests at once, each service told the key it was asked under", () =>
    Effect.gen(function*() {
      const keys: Array<string | undefined> = []
      // Each answer waits for the other request to be asked: one after another would never end.
      const both = yield* Deferred.make<void>()
      const { client } = yield* connect({
        "tools/call": (request) =>
          Effect.succeed(
            paramsOf(request).inputResponses === undefined
              ? {
                resultType: "input_required",
                inputRequests: {
                  user_name: confirm,
                  capital: {
                    method: "sampling/createMessage",
                    params: { messages: [{ role: "user", content: { type: "text", text: "Capital?" } }], maxTokens: 9 }
                  },
                  where: { method: "roots/list" }
                }
              }
              : { resultType: "complete", ...text(JSON.stringify(paramsOf(request).inputResponses)) }
          )
      }).pipe(
        Effect.provide(Layer.mergeAll(
          Host.layerElicitation({
            elicit: (_, context) =>
              Effect.sync(() => keys.push(context.key)).pipe(
                Effect.zipRight(Deferred.await(both)),
                Effect.as({ action: "accept" as const, content: {} })
              )
          }),
          Host.layerSampling({
            createMessage: (_, context) =>
              Effect.sync(() => keys.push(context.key)).pipe(
                Effect.zipRight(Deferred.succeed(both, undefined)),
                Effect.as(sampled)
              )
          }),
          // Roots answered per request: told the key too, the shared list not read.
          Layer.effect(
            Host.Roots,
            Effect.map(SubscriptionRef.make<ReadonlyArray<McpSchema.Root>>([]), (roots) => ({
              roots,
              list: (context: Host.RequestContext) =>
                Effect.sync(() => keys.push(context.key)).pipe(Effect.as([{ uri: `file:///${context.key}` }]))
            }))
          )
        ))
      )
      const answered = JSON.parse(((yield* client.callTool("t")).content[0] as { text: string }).text)
      expect(answered.where).toEqual({ roots: [{ uri: "file:///where" }] })
      expect(answered.capital).toEqual(sampled)
      expect(keys.sort()).toEqual(["capital", "user_name", "where"])
    }))

  it.scoped("a call's log messages go to its onLog, in order, before its result; the log level rides on every request", () =>
    Effect.gen(function*() {
      const holder: { server?: ModernServer } = {}
      const log = (data: string) =>
        Effect.ignore(holder.server!.peer.notify("notifications/message", { level: "info", logger: "x", data }))
      const { client, fake, sent } = yield* connect({
        "tools/call": () =>
          Effect.zipRight(
            Effect.zipRight(log("one"), log("two")),
            Effect.succeed({ resultType: "complete", ...text("ok") })
          )
      }, { logLevel: "info" })
      holder.server = fake
      const told: Array<unknown> = []
      const result = yield* client.callTool("t", {}, {
        onLog: (message) => Effect.sync(() => told.push(message.data))
      })
      // Told before the call returned, not later from a fiber.
      expect(told).toEqual(["one", "two"])
      expect(result.content).toEqual(text("ok").content)
      const meta = paramsOf(sent("tools/call")[0]!)._meta as Record<string, unknown>
      expect(meta["io.modelcontextprotocol/logLevel"]).toBe("info")
      // A call without onLog is told nothing, and takes nothing from the next one's.
      yield* client.callTool("t")
      yield* client.callTool("t", {}, { onLog: (message) => Effect.sync(() => told.push(message.data)) })
      expect(told).toEqual(["one", "two", "one", "two"])
    }))

  it.scoped("a call's log messages reach its onLog while it runs, not only when it ends", () =>
    Effect.gen(function*() {
      const holder: { server?: ModernServer } = {}
      const seen = yield* Deferred.make<void>()
      // The server answers only once the client has been told its first log message: a client
      // holding the messages back until the answer would wait forever (the test's timeout).
      const { client, fake } = yield* connect({
        "tools/call": () =>
          Effect.ignore(
            holder.server!.peer.notify("notifications/message", { level: "info", logger: "x", data: "early" })
          )
            .pipe(Effect.zipRight(Deferred.await(seen)), Effect.as({ resultType: "complete", ...text("ok") }))
      }, { logLevel: "info" })
      holder.server = fake
      const told: Array<unknown> = []
      const result = yield* client.callTool("t", {}, {
        onLog: (message) =>
          Effect.zipRight(Effect.sync(() => told.push(message.data)), Deferred.succeed(seen, undefined))
      })
      expect(told).toEqual(["early"])
      expect(result.content).toEqual(text("ok").content)
    }))

  it.scoped("a request naming capabilities of its own declares only those the connection declares too", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* connect({
        "tools/call": () => Effect.succeed({ resultType: "complete", ...text("ok") })
      }).pipe(Effect.provide(accepting()))
      yield* client.callTool("t", {}, {
        meta: {
          "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} }
        }
      })
      const meta = paramsOf(sent("tools/call")[0]!)._meta as Record<string, unknown>
      expect(meta["io.modelcontextprotocol/clientCapabilities"]).toEqual({ elicitation: { form: {} } })
    }))
})

// The tasks extension: a server of 2026-07-28 that makes a task of a tool call.
// A task of the tasks extension as the server tells it.
const taskOf = (status: string, extra: Record<string, unknown> = {}) => ({
  taskId: "task-1",
  status,
  createdAt: "2026-01-01T00:00:00Z",
  lastUpdatedAt: "2026-01-01T00:00:00Z",
  ttlMs: 60_000,
  pollIntervalMs: 1000,
  ...extra
})

describe("the tasks extension", () => {
  // working, then input_required until answered (and once more: the ack is eventually
  // consistent), then completed with what the answer said.
  const lifecycle = () => {
    let polls = 0
    let answer: unknown
    let lagging = true
    const handlers: Record<string, Peer.Handler> = {
      "tools/call": () => Effect.succeed({ resultType: "task", ...taskOf("working") }),
      "tasks/get": () =>
        Effect.sync(() => {
          polls++
          if (polls === 1) return { resultType: "complete", ...taskOf("working") }
          if (answer === undefined || lagging) {
            if (answer !== undefined) lagging = false
            return { resultType: "complete", ...taskOf("input_required", { inputRequests: { confirm } }) }
          }
          return { resultType: "complete", ...taskOf("completed", { result: text(JSON.stringify(answer)) }) }
        }),
      "tasks/update": (request) =>
        Effect.sync(() => {
          answer = paramsOf(request).inputResponses
          return { resultType: "complete" }
        }),
      "tasks/cancel": () => Effect.succeed({ resultType: "complete" })
    }
    return handlers
  }

  const settle = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
    Effect.gen(function*() {
      for (let i = 0; i < 10 && fiber.unsafePoll() === null; i++) yield* TestClock.adjust("1 second")
    })

  it.scoped("declares the extension, follows the task through input_required to its result", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* connect(lifecycle()).pipe(Effect.provide(accepting()))
      expect(client.protocolVersion).toBe("2026-07-28")
      const statuses: Array<string> = []
      const call = yield* Effect.fork(
        client.callTool("t", {}, { onTask: (t) => Effect.sync(() => statuses.push(t.status)) })
      )
      yield* settle(call)
      const result = yield* Fiber.join(call)
      expect(result.content).toEqual(
        text(JSON.stringify({ confirm: { action: "accept", content: { confirmed: true } } })).content
      )
      expect(statuses).toEqual(["working", "working", "input_required", "input_required", "completed"])
      // Each request declares the extension and names the revision, the retries' too.
      for (const request of [...sent("tools/call"), ...sent("tasks/get"), ...sent("tasks/update")]) {
        const meta = paramsOf(request)._meta as Record<string, any>
        expect(meta["io.modelcontextprotocol/protocolVersion"]).toBe("2026-07-28")
        expect(meta["io.modelcontextprotocol/clientCapabilities"].extensions).toEqual({
          "io.modelcontextprotocol/tasks": {}
        })
      }
      // Answered once, though the task listed the request on two polls.
      expect(sent("tasks/update")).toHaveLength(1)
      expect(paramsOf(sent("tasks/update")[0]!).taskId).toBe("task-1")
    }))

  it.scoped("a failed task fails the call with its error", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({
        "tools/call": () => Effect.succeed({ resultType: "task", ...taskOf("working") }),
        "tasks/get": () =>
          Effect.succeed({ resultType: "complete", ...taskOf("failed", { error: { code: -32000, message: "boom" } }) })
      })
      const call = yield* Effect.fork(client.callTool("t"))
      yield* settle(call)
      const error = failure(yield* Fiber.await(call))
      expect(error.reason).toMatchObject({ _tag: "Protocol", code: -32000, message: "boom" })
    }))

  it.scoped("interrupting the call cancels the task", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* connect(lifecycle())
      const statuses: Array<string> = []
      const call = yield* Effect.fork(
        client.callTool("t", {}, { onTask: (t) => Effect.sync(() => statuses.push(t.status)) })
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(call)
      expect(sent("tasks/cancel").map((request) => paramsOf(request).taskId)).toEqual(["task-1"])
      expect(statuses.at(-1)).toBe("cancelled")
    }))

  it.scoped("a task is taken up again by its id on a new connection", () =>
    Effect.gen(function*() {
      const handlers = lifecycle()
      const first = yield* connect(handlers)
      const created = yield* Deferred.make<string>()
      const call = yield* Effect.fork(
        first.client.callTool("t", {}, { onTask: (t) => Effect.asVoid(Deferred.succeed(created, t.taskId)) })
      )
      const taskId = yield* Deferred.await(created)
      expect(taskId).toBe("task-1")
      // The connection ends: the call fails, the task lives on at the server.
      yield* first.fake.close
      yield* TestClock.adjust("1 second")
      expect(Exit.isFailure(yield* Fiber.await(call))).toBe(true)
      expect(first.sent("tasks/cancel")).toHaveLength(0)
      const second = yield* connect(handlers).pipe(Effect.provide(accepting()))
      const resumed = yield* Effect.fork(second.client.followTask(taskId))
      yield* settle(resumed)
      expect((yield* Fiber.join(resumed)).content).toHaveLength(1)
      expect(second.sent("tasks/get").map((request) => paramsOf(request).taskId)).toContain("task-1")
    }))
})

describe("a call's onInput", () => {
  const asking: Record<string, Peer.Handler> = {
    "tools/call": (request) =>
      Effect.succeed(
        paramsOf(request).inputResponses === undefined
          ? { resultType: "input_required", inputRequests: { confirm }, requestState: "s" }
          : { resultType: "complete", ...text(JSON.stringify(paramsOf(request).inputResponses)) }
      )
  }

  it.scoped("answers the call's input requests, told their keys; a call without one asks the host", () =>
    Effect.gen(function*() {
      const seen: Array<McpSchema.ElicitRequestParams> = []
      const { client } = yield* connect(asking).pipe(Effect.provide(accepting(seen)))
      const asked: Array<McpClient.CallInput> = []
      const own = yield* client.callTool("t", {}, {
        onInput: (input) => Effect.sync(() => asked.push(input)).pipe(Effect.as({ action: "decline" }))
      })
      expect(own.content).toEqual(text(JSON.stringify({ confirm: { action: "decline" } })).content)
      expect(asked).toEqual([{ method: "elicitation/create", params: confirm.params, key: "confirm" }])
      expect(seen).toEqual([])
      // Without onInput, the connection's host services answer, as before.
      const hosted = yield* client.callTool("t")
      expect(hosted.content).toEqual(
        text(JSON.stringify({ confirm: { action: "accept", content: { confirmed: true } } })).content
      )
      expect(seen).toHaveLength(1)
    }))

  it.scoped("is not asked for a kind the connection did not declare", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(asking)
      const asked: Array<McpClient.CallInput> = []
      const exit = yield* Effect.exit(client.callTool("t", {}, {
        onInput: (input) => Effect.sync(() => asked.push(input)).pipe(Effect.as({ action: "decline" }))
      }))
      expect(failure(exit).reason).toMatchObject({ _tag: "Protocol", code: -32601 })
      expect(asked).toEqual([])
    }))

  it.scoped("answers the input requests of the task the call became, and of a task taken up again", () =>
    Effect.gen(function*() {
      // The tasks whose input was answered: done at the next poll.
      const answered = new Set<string>()
      const fake = yield* connect(
        {
          "tools/call": () => Effect.succeed({ resultType: "task", ...taskOf("working") }),
          "tasks/get": (request) =>
            Effect.succeed(
              answered.has(String(paramsOf(request).taskId))
                ? { resultType: "complete", ...taskOf("completed", { result: text("done") }) }
                : { resultType: "complete", ...taskOf("input_required", { inputRequests: { confirm } }) }
            ),
          "tasks/update": (request) =>
            Effect.sync(() => {
              answered.add(String(paramsOf(request).taskId))
              return { resultType: "complete" }
            })
        }
      ).pipe(Effect.provide(accepting()))
      const asked: Array<string | undefined> = []
      const onInput: McpClient.CallToolOptions["onInput"] = (input) =>
        Effect.sync(() => asked.push(input.key)).pipe(Effect.as({ action: "accept", content: { confirmed: false } }))
      const call = yield* Effect.fork(fake.client.callTool("t", {}, { onInput }))
      for (let i = 0; i < 5 && call.unsafePoll() === null; i++) yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(call)).content).toEqual(text("done").content)
      answered.clear()
      const followed = yield* Effect.fork(fake.client.followTask("task-1", { onInput }))
      for (let i = 0; i < 5 && followed.unsafePoll() === null; i++) yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(followed)).content).toEqual(text("done").content)
      expect(asked).toEqual(["confirm", "confirm"])
    }))
})
