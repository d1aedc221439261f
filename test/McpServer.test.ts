import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as Host from "../src/Host.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "../src/McpServer.js"
import * as Peer from "../src/Peer.js"
import * as Stdio from "../src/Stdio.js"
import { text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { bundled } from "./support/bundle.js"
import { recordingTracer } from "./support/tracing.js"

const echo = McpServer.tool({
  name: "echo",
  description: "Says it back",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text: said }) => Effect.succeed(text(said))
})

const notes = McpServer.resource({
  uri: "mem://notes",
  name: "notes",
  mimeType: "text/plain",
  read: () => Effect.succeed({ contents: [{ uri: "mem://notes", text: "remember" }] })
})

const greet = McpServer.prompt({
  name: "greet",
  arguments: [{ name: "who", required: true }],
  get: (args) =>
    Effect.succeed({ messages: [{ role: "user", content: { type: "text", text: `Hello, ${args.who}` } }] }),
  complete: { who: (value) => Effect.succeed(["ada", "alan", "grace"].filter((name) => name.startsWith(value))) }
})

const serverInfo = { name: "test-server", version: "1.0.0" }

const serve = (options: Partial<McpServer.ItemsOptions> = {}) =>
  Effect.gen(function*() {
    const server = yield* McpServer.fromItems({
      serverInfo,
      tools: [echo],
      resources: [notes],
      prompts: [greet],
      ...options
    })
    const { session, transport } = yield* McpServer.connectMemory(server, { name: "test-server" })
    return { server, session, transport }
  })

// These tests are of stateful sessions (McpServer-stateless.test.ts has the 2026-07-28 ones,
// which a server answers too by default): their clients speak 2025-11-25 unless told.
const STATEFUL: McpClient.Options = { protocolVersion: "2025-11-25" }

const connect = (options: Partial<McpServer.ItemsOptions> = {}, client?: McpClient.Options) =>
  Effect.gen(function*() {
    const served = yield* serve(options)
    const mcp = yield* McpClient.make({ ...STATEFUL, ...client }).pipe(
      Effect.provideService(Transport, served.transport)
    )
    return { ...served, client: mcp }
  })

const protocolError = <A>(exit: Exit.Exit<A, McpError.McpError>) => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`expected a failure, got ${String(exit)}`)
  const reason = exit.cause.error.reason
  if (reason._tag !== "Protocol") throw new Error(`expected a Protocol error, got ${reason._tag}`)
  return { code: reason.code, message: reason.message, data: reason.data }
}

describe("McpServer", () => {
  describe("lifecycle", () => {
    for (const revision of McpSchema.SUPPORTED_PROTOCOL_VERSIONS) {
      it.scoped(`initializes at ${revision}`, () =>
        Effect.gen(function*() {
          const { client, session } = yield* connect({ instructions: "be nice" }, { protocolVersion: revision })
          expect(client.protocolVersion).toBe(revision)
          expect(client.serverInfo).toEqual(serverInfo)
          expect(client.instructions).toBe("be nice")
          expect(session.client()).toMatchObject({ protocolVersion: revision, info: { name: "mcp-fleet" } })
          expect(client.capabilities).toMatchObject({
            tools: { listChanged: true },
            resources: { subscribe: true, listChanged: true },
            prompts: { listChanged: true },
            logging: {}
          })
          // What the revision does not know is not declared.
          expect(client.capabilities.completions !== undefined).toBe(revision >= "2025-03-26")
        }))
    }

    it.scoped("answers an unknown revision with the latest", () =>
      Effect.gen(function*() {
        const { transport } = yield* serve()
        const peer = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
        const result = yield* peer.request("initialize", {
          protocolVersion: "1999-01-01",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" }
        })
        expect(result.protocolVersion).toBe(McpSchema.LATEST_PROTOCOL_VERSION)
      }))

    it.scoped("answers ping before initialize and refuses anything else", () =>
      Effect.gen(function*() {
        const { transport } = yield* serve()
        const peer = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
        expect(yield* peer.request("ping")).toEqual({})
        expect(protocolError(yield* Effect.exit(peer.request("tools/list"))).code).toBe(-32600)
        const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
        yield* peer.request("initialize", init)
        expect(protocolError(yield* Effect.exit(peer.request("initialize", init))).code).toBe(-32600)
        expect(protocolError(yield* Effect.exit(peer.request("nothing/here"))).code).toBe(-32601)
      }))
  })

  describe("tools, resources, prompts", () => {
    it.scoped("lists and calls tools, with Schema-decoded arguments", () =>
      Effect.gen(function*() {
        const { client } = yield* connect()
        const [tool] = yield* client.listTools()
        expect(tool).toMatchObject({
          name: "echo",
          description: "Says it back",
          inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
        })
        expect(yield* client.callTool("echo", { text: "hi" })).toEqual(text("hi"))
        const unknown = protocolError(yield* Effect.exit(client.callTool("nope")))
        expect(unknown).toMatchObject({ code: -32602, message: "Unknown tool: nope" })
      }))

    it.scoped("reads resources, and -32002 for an unknown one", () =>
      Effect.gen(function*() {
        const { client } = yield* connect()
        expect(yield* client.listResources()).toEqual([{ uri: "mem://notes", name: "notes", mimeType: "text/plain" }])
        expect(yield* client.readResource("mem://notes")).toEqual({
          contents: [{ uri: "mem://notes", text: "remember" }]
        })
        expect(protocolError(yield* Effect.exit(client.readResource("mem://none")))).toEqual({
          code: -32002,
          message: "Resource not found: mem://none",
          data: { uri: "mem://none" }
        })
      }))

    it.scoped("lists and gets prompts", () =>
      Effect.gen(function*() {
        const { client } = yield* connect()
        expect((yield* client.listPrompts()).map((prompt) => prompt.name)).toEqual(["greet"])
        const got = yield* client.getPrompt("greet", { who: "Ada" })
        expect(got.messages[0]!.content).toEqual({ type: "text", text: "Hello, Ada" })
        expect(protocolError(yield* Effect.exit(client.getPrompt("nope"))).code).toBe(-32602)
        yield* client.ping()
      }))
  })

  describe("errors", () => {
    it.scoped("bad tool arguments: a tool execution error from 2025-11-25, -32602 before", () =>
      Effect.gen(function*() {
        const latest = yield* connect()
        const result = yield* latest.client.callTool("echo", { text: 1 })
        expect(result.isError).toBe(true)
        expect(result.content[0]).toMatchObject({
          type: "text",
          text: expect.stringContaining("Invalid arguments for tool echo")
        })
        const older = yield* connect({}, { protocolVersion: "2025-06-18" })
        const refused = protocolError(yield* Effect.exit(older.client.callTool("echo", {})))
        expect(refused.code).toBe(-32602)
        expect(refused.message).toContain("Invalid arguments for tool echo")
      }))

    it.scoped("a handler's defect is -32603 with a generic message", () =>
      Effect.gen(function*() {
        const broken = McpServer.tool({ name: "broken", handler: () => Effect.die(new Error("token=s3cret")) })
        const { client } = yield* connect({ tools: [broken] })
        const error = protocolError(yield* Effect.exit(client.callTool("broken")))
        expect(error).toEqual({ code: -32603, message: "Internal error", data: undefined })
      }))

    it.scoped("bad params and bad cursors are -32602; lists come in pages", () =>
      Effect.gen(function*() {
        const many = Array.from({ length: 5 }, (_, i) =>
          McpServer.tool({ name: `t${i}`, handler: () => Effect.succeed(text(String(i))) }))
        const { client } = yield* connect({ tools: many, pageSize: 2 })
        expect((yield* client.listTools()).map((tool) =>
          tool.name
        )).toEqual(["t0", "t1", "t2", "t3", "t4"])
        const raw = yield* serve({ tools: many, pageSize: 2 })
        const rawPeer = yield* Peer.make().pipe(Effect.provideService(Transport, raw.transport))
        yield* rawPeer.request("initialize", {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" }
        })
        const first = yield* rawPeer.request("tools/list")
        expect(first.tools).toHaveLength(2)
        expect(typeof first.nextCursor).toBe("string")
        expect(protocolError(yield* Effect.exit(rawPeer.request("tools/list", { cursor: "bad" }))).code).toBe(-32602)
        expect(
          protocolError(yield* Effect.exit(rawPeer.request("prompts/list", { cursor: first.nextCursor as string })))
            .code
        ).toBe(-32602)
        expect(protocolError(yield* Effect.exit(rawPeer.request("tools/call", { arguments: {} }))).code).toBe(-32602)
        expect(protocolError(yield* Effect.exit(rawPeer.request("logging/setLevel", { level: "loud" }))).code).toBe(
          -32602
        )
      }))
  })

  describe("notifications", () => {
    it.scoped("adding and removing items tells every session their list changed", () =>
      Effect.gen(function*() {
        const { client, server } = yield* connect()
        const second = yield* McpClient.make(STATEFUL).pipe(
          Effect.provideService(Transport, (yield* McpServer.connectMemory(server)).transport)
        )
        const notes1 = yield* client.subscribe
        const notes2 = yield* second.subscribe
        const shout = McpServer.tool({ name: "shout", handler: () => Effect.succeed(text("HEY")) })
        yield* server.addTool(shout)
        expect((yield* Queue.take(notes1)).method).toBe("notifications/tools/list_changed")
        expect((yield* Queue.take(notes2)).method).toBe("notifications/tools/list_changed")
        expect((yield* second.listTools()).map((tool) => tool.name)).toEqual(["echo", "shout"])
        expect(yield* second.callTool("shout")).toEqual(text("HEY"))
        yield* server.removePrompt("greet")
        expect((yield* Queue.take(notes1)).method).toBe("notifications/prompts/list_changed")
        expect(yield* client.listPrompts()).toEqual([])
        yield* server.addResource(McpServer.resource({
          uri: "mem://more",
          name: "more",
          read: () => Effect.succeed({ contents: [] })
        }))
        expect((yield* Queue.take(notes1)).method).toBe("notifications/resources/list_changed")
        expect(server.sessions()).toBe(2)
      }))

    it.scoped("nothing is told that the declared capabilities do not announce", () =>
      Effect.gen(function*() {
        const { client, server, session } = yield* connect({ capabilities: { tools: {} } })
        const notes = yield* client.subscribe
        yield* server.addTool(McpServer.tool({ name: "quiet", handler: () => Effect.succeed(text("")) }))
        yield* server.log("emergency", "unheard")
        yield* session.peer.notify("notifications/marker")
        expect((yield* Queue.take(notes)).method).toBe("notifications/marker")
      }))

    it.scoped("progress goes to the caller with its token", () =>
      Effect.gen(function*() {
        const steps = McpServer.tool({
          name: "steps",
          handler: (_, ctx) =>
            Effect.zipRight(
              Effect.forEach([1, 2], (n) => ctx.progress(n, 2, `step ${n}`), { discard: true }),
              Effect.succeed(text("done"))
            )
        })
        const { client } = yield* connect({ tools: [steps] })
        const seen: Array<Peer.Progress> = []
        const result = yield* client.callTool("steps", {}, {
          onProgress: (progress) => Effect.sync(() => seen.push(progress))
        })
        expect(result).toEqual(text("done"))
        expect(seen).toEqual([
          { progress: 1, total: 2, message: "step 1" },
          { progress: 2, total: 2, message: "step 2" }
        ])
        // Without a token, nothing is sent (and nothing fails).
        expect(yield* client.callTool("steps", {}, { resetTimeoutOnProgress: false })).toEqual(text("done"))
      }))

    it.scoped("a cancelled request interrupts its handler", () =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const interrupted = yield* Deferred.make<void>()
        const hang = McpServer.tool({
          name: "hang",
          handler: () =>
            Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )
        })
        const { client } = yield* connect({ tools: [hang] })
        const call = yield* Effect.fork(client.callTool("hang"))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(call)
        yield* Deferred.await(interrupted)
      }))

    it.scoped("log messages honour each session's level", () =>
      Effect.gen(function*() {
        const chatty = McpServer.tool({
          name: "chatty",
          handler: (_, ctx) =>
            Effect.zipRight(
              Effect.zipRight(ctx.log("info", "detail"), ctx.log("error", { what: "bad" }, "db")),
              Effect.succeed(text("ok"))
            )
        })
        const { client, server } = yield* connect({ tools: [chatty] })
        const notes = yield* client.subscribe
        // Before any setLevel, every level goes.
        yield* server.log("debug", "hello")
        expect((yield* Queue.take(notes)).params).toEqual({ level: "debug", data: "hello" })
        yield* client.setLoggingLevel("warning")
        yield* client.callTool("chatty")
        yield* server.log("info", "hidden")
        yield* server.log("critical", "shown", "core")
        const messages = [yield* Queue.take(notes), yield* Queue.take(notes)]
        expect(messages.map((message) => message.params)).toEqual([
          { level: "error", logger: "db", data: { what: "bad" } },
          { level: "critical", logger: "core", data: "shown" }
        ])
        expect(yield* Queue.size(notes)).toBe(0)
      }))

    it.scoped("resources/updated goes to the sessions subscribed to the URI", () =>
      Effect.gen(function*() {
        const { client, server } = yield* connect()
        const notes = yield* client.subscribe
        yield* client.subscribeResource("mem://notes")
        yield* server.notifyResourceUpdated("mem://other")
        yield* server.notifyResourceUpdated("mem://notes")
        expect(yield* Queue.take(notes)).toMatchObject({
          method: "notifications/resources/updated",
          params: { uri: "mem://notes" }
        })
        yield* client.unsubscribeResource("mem://notes")
        yield* server.notifyResourceUpdated("mem://notes")
        yield* server.log("info", "marker")
        expect((yield* Queue.take(notes)).method).toBe("notifications/message")
      }))
  })

  describe("templates and completion", () => {
    const users = McpServer.resourceTemplate({
      uriTemplate: "mem://users/{id}",
      name: "user",
      read: (uri, { id }) => Effect.succeed({ contents: [{ uri, text: `user ${id}` }] }),
      complete: { id: (value) => Effect.succeed(["1", "12", "2"].filter((id) => id.startsWith(value))) }
    })

    it.scoped("reads through a template and completes its variables and prompt arguments", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({ resourceTemplates: [users] })
        expect(yield* client.listResourceTemplates()).toEqual([{ uriTemplate: "mem://users/{id}", name: "user" }])
        expect(yield* client.readResource("mem://users/a%20b")).toEqual({
          contents: [{ uri: "mem://users/a%20b", text: "user a b" }]
        })
        expect(protocolError(yield* Effect.exit(client.readResource("mem://users/1/x"))).code).toBe(-32002)
        const ids = yield* client.complete({ type: "ref/resource", uri: "mem://users/{id}" }, {
          name: "id",
          value: "1"
        })
        expect(ids.completion).toEqual({ values: ["1", "12"], total: 2, hasMore: false })
        const who = yield* client.complete({ type: "ref/prompt", name: "greet" }, { name: "who", value: "a" })
        expect(who.completion.values).toEqual(["ada", "alan"])
        const none = yield* client.complete({ type: "ref/prompt", name: "greet" }, { name: "other", value: "" })
        expect(none.completion.values).toEqual([])
      }))
  })

  describe("requests to the client", () => {
    const answer: McpSchema.CreateMessageResult = {
      role: "assistant",
      content: { type: "text", text: "sampled" },
      model: "m"
    }
    const ask = McpServer.tool({
      name: "ask",
      handler: (_, ctx) =>
        Effect.gen(function*() {
          const sampled = yield* ctx.sample({
            messages: [{ role: "user", content: { type: "text", text: "hi" } }],
            maxTokens: 5
          })
          const form = yield* ctx.elicit({
            message: "name?",
            requestedSchema: { type: "object", properties: { name: { type: "string" } } }
          })
          const roots = yield* ctx.listRoots()
          return text(JSON.stringify([sampled.content, form, roots.roots.map((root) => root.uri)]))
        }).pipe(Effect.catchTag("McpServerError", (error) =>
          Effect.succeed(McpServer.toolError(`${error.reason}: ${error.message}`))))
    })

    it.scoped("sampling, elicitation and roots from a tool handler, answered by the host services", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({ tools: [ask] }).pipe(
          Effect.provide(Layer.mergeAll(
            Host.layerSampling({ createMessage: () => Effect.succeed(answer) }),
            Host.layerElicitation({ elicit: () => Effect.succeed({ action: "accept", content: { name: "Ada" } }) }),
            Host.layerRoots([{ uri: "file:///srv", name: "srv" }])
          ))
        )
        const result = yield* client.callTool("ask")
        expect(JSON.parse((result.content[0] as McpSchema.TextContent).text)).toEqual([
          { type: "text", text: "sampled" },
          { action: "accept", content: { name: "Ada" } },
          ["file:///srv"]
        ])
      }))

    it.scoped("a URL elicitation is refused when the client declared forms only", () =>
      Effect.gen(function*() {
        const url = McpServer.tool({
          name: "url",
          handler: (_, ctx) =>
            Effect.match(
              ctx.elicit({ mode: "url", message: "sign in", elicitationId: "e-1", url: "https://example.com" }),
              {
                onFailure: (error) => text(`${error.reason}: ${error.message}`),
                onSuccess: (result) => text(result.action)
              }
            )
        })
        const { client } = yield* connect({ tools: [url] }).pipe(
          Effect.provide(Host.layerElicitation({ elicit: () => Effect.succeed({ action: "accept" }) }))
        )
        expect(yield* client.callTool("url")).toEqual(
          text("NotDeclared: elicitation/create: the client did not declare the elicitation.url capability")
        )
      }))

    it.scoped("refused, with nothing sent, when the client did not declare the capability", () =>
      Effect.gen(function*() {
        const { client, session } = yield* connect({ tools: [ask] })
        const result = yield* client.callTool("ask")
        expect(result).toEqual(McpServer.toolError(
          "NotDeclared: sampling/createMessage: the client did not declare the sampling capability"
        ))
        expect(session.peer.inFlight()).toBe(0)
      }))
  })

  describe("outbound", () => {
    it.scoped("what a request sends goes through the session's Outbound, with the request it belongs to", () =>
      Effect.gen(function*() {
        const notified: Array<[string, unknown]> = []
        const within: Array<unknown> = []
        const chatty = McpServer.tool({
          name: "chatty",
          handler: (_, ctx) =>
            Effect.gen(function*() {
              yield* ctx.log("info", "working")
              yield* ctx.progress(1)
              const roots = yield* ctx.listRoots()
              return text(String(roots.roots.length))
            }).pipe(Effect.orDie)
        })
        const server = yield* McpServer.fromItems({ serverInfo, tools: [chatty] })
        const peer: { current?: Peer.Peer } = {}
        const served = yield* McpServer.connectMemory(server, {
          outbound: {
            notify: (method, params, related) =>
              Effect.suspend(() => {
                notified.push([method, related])
                return Effect.ignore(peer.current!.notify(method, params))
              }),
            within: (related, send) => Effect.zipRight(Effect.sync(() => within.push(related)), send)
          }
        })
        peer.current = served.session.peer
        const client = yield* McpClient.make(STATEFUL).pipe(
          Effect.provideService(Transport, served.transport),
          Effect.provide(Host.layerRoots([]))
        )
        const seen: Array<Peer.Progress> = []
        expect(yield* client.callTool("chatty", {}, { onProgress: (p) => Effect.sync(() => seen.push(p)) })).toEqual(
          text("0")
        )
        const call = notified[0]![1]
        expect(typeof call).toBe("number")
        expect(notified).toEqual([["notifications/message", call], ["notifications/progress", call]])
        expect(within).toEqual([call])
        expect(seen).toEqual([{ progress: 1 }])
      }))
  })

  describe("sessions", () => {
    it.scoped("handlers made per session see the client that initialized it", () =>
      Effect.gen(function*() {
        const made: Array<string> = []
        const server = yield* McpServer.make({
          serverInfo,
          handlers: (client) =>
            Effect.sync(() => {
              made.push(client.info?.name ?? "?")
              const mine: McpSchema.Tool = { name: `for-${client.info?.name}`, inputSchema: { type: "object" } }
              return {
                tools: {
                  list: () => Effect.succeed([mine]),
                  call: (name, _args, ctx) =>
                    name === mine.name
                      ? Effect.succeed(text(ctx.client.protocolVersion))
                      : Effect.fail(McpServer.unknownTool(name))
                }
              }
            })
        })
        const clientOf = (name: string) =>
          Effect.flatMap(McpServer.connectMemory(server), ({ transport }) =>
            McpClient.make({ clientInfo: { name, version: "1" }, protocolVersion: "2025-06-18" }).pipe(
              Effect.provideService(Transport, transport)
            ))
        const a = yield* clientOf("a")
        const b = yield* clientOf("b")
        expect((yield* a.listTools()).map((tool) =>
          tool.name
        )).toEqual(["for-a"])
        expect((yield* b.listTools()).map((tool) => tool.name)).toEqual(["for-b"])
        expect(yield* b.callTool("for-b")).toEqual(text("2025-06-18"))
        expect(made).toEqual(["a", "b"])
        // Nothing it does not serve is declared or answered.
        expect(a.capabilities).toEqual({ tools: { listChanged: true }, logging: {} })
      }))
  })

  describe("tasks", () => {
    it.scoped("a tool that supports tasks runs as one when asked, told done by notifications/tasks/status", () =>
      Effect.gen(function*() {
        const release = yield* Deferred.make<void>()
        const long = McpServer.tool({
          name: "long",
          execution: { taskSupport: "required" },
          handler: (_, ctx) =>
            Effect.zipRight(
              Effect.zipRight(ctx.status("halfway"), Deferred.await(release)),
              Effect.succeed(text("finally"))
            )
        })
        const { client } = yield* connect({ tools: [long, echo], tasks: { notifyStatus: true, pollInterval: 45_000 } })
        expect(client.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } })
        const seen: Array<McpSchema.Task> = []
        const call = yield* Effect.fork(
          client.callTool("long", {}, { onTask: (task) => Effect.sync(() => seen.push(task)) })
        )
        yield* Effect.yieldNow().pipe(
          Effect.repeat({ until: () => seen.some((task) => task.statusMessage === "halfway") })
        )
        // Its id is a random UUID: unguessable.
        const taskId = seen[0]!.taskId
        expect(taskId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
        expect(yield* client.listTasks()).toMatchObject([{ taskId, status: "working", ttl: 3_600_000 }])
        yield* Deferred.succeed(release, undefined)
        // tasks/result is the call's own answer, tied to its task.
        expect(yield* Fiber.join(call)).toEqual({
          ...text("finally"),
          _meta: { "io.modelcontextprotocol/related-task": { taskId } }
        })
        expect(seen.at(-1)).toMatchObject({ taskId, status: "completed" })
        // A plain call to a tool that requires a task is refused.
        const raw = protocolError(
          yield* Effect.exit(client.request("tools/call", { name: "long" }, McpSchema.CallToolResult))
        )
        expect(raw).toMatchObject({ code: -32601, message: "Tool long must be called as a task" })
        // And a task of a tool that supports none is refused too.
        const plain = protocolError(yield* Effect.exit(client.callTool("echo", { text: "x" }, { task: true })))
        expect(plain).toMatchObject({ code: -32601, message: "Tool echo does not support tasks" })
      }))

    it.scoped("a task whose tool reports an error ends failed", () =>
      Effect.gen(function*() {
        const failing = McpServer.tool({
          name: "failing",
          execution: { taskSupport: "optional" },
          handler: () => Effect.succeed(McpServer.toolError("no luck"))
        })
        const { client } = yield* connect({ tools: [failing], tasks: { notifyStatus: true } })
        const seen: Array<McpSchema.Task> = []
        const result = yield* client.callTool("failing", {}, {
          task: true,
          onTask: (task) => Effect.sync(() => seen.push(task))
        })
        expect(result.isError).toBe(true)
        expect(seen.at(-1)?.status).toBe("failed")
      }))

    it.scoped("a task is kept for the ttl its call asks, at most ttlMs; then forgotten, its work ended", () =>
      Effect.gen(function*() {
        const ended = yield* Deferred.make<void>()
        const forever = McpServer.tool({
          name: "forever",
          execution: { taskSupport: "required" },
          handler: () => Effect.onInterrupt(Effect.never, () => Deferred.succeed(ended, undefined))
        })
        const { client } = yield* connect({ tools: [forever], tasks: { ttlMs: 60_000 } })
        const create = (ttl: number) =>
          Effect.map(
            client.request("tools/call", { name: "forever", task: { ttl } }, McpSchema.CreateTaskResult),
            (created) => created.task
          )
        const short = yield* create(5_000)
        expect(short.ttl).toBe(5_000)
        expect((yield* create(600_000)).ttl).toBe(60_000)
        const waiting = yield* Effect.fork(
          client.request("tasks/result", { taskId: short.taskId }, McpSchema.CallToolResult)
        )
        yield* TestClock.adjust("5 seconds")
        yield* Deferred.await(ended)
        expect(protocolError(yield* Fiber.await(waiting))).toMatchObject({ code: -32602 })
        const gone = yield* Effect.exit(client.request("tasks/get", { taskId: short.taskId }, McpSchema.Task))
        expect(protocolError(gone)).toMatchObject({ code: -32602, message: `Unknown task: ${short.taskId}` })
        expect((yield* client.listTasks()).map((task) => task.ttl)).toEqual([60_000])
      }))

    it.scoped("a task asking for input with its session gone waits within its ttl, then ends", () =>
      Effect.gen(function*() {
        const asking = yield* Deferred.make<void>()
        const interrupted = yield* Deferred.make<void>()
        const go = yield* Deferred.make<void>()
        const ask = McpServer.tool({
          name: "ask",
          execution: { taskSupport: "required" },
          handler: (_, ctx) =>
            Deferred.await(go).pipe(
              Effect.zipRight(Deferred.succeed(asking, undefined)),
              Effect.zipRight(ctx.elicit({ message: "Name?", requestedSchema: { type: "object", properties: {} } })),
              Effect.as(text("answered")),
              Effect.orDie,
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )
        })
        const server = yield* McpServer.fromItems({ serverInfo, tools: [ask], tasks: {} })
        const scope = yield* Scope.make()
        const { transport } = yield* Scope.extend(McpServer.connectMemory(server), scope)
        const client = yield* Scope.extend(
          McpClient.make(STATEFUL).pipe(Effect.provideService(Transport, transport)),
          scope
        )
        const created = yield* client.request(
          "tools/call",
          { name: "ask", task: { ttl: 5_000 } },
          McpSchema.CreateTaskResult
        )
        yield* Scope.close(scope, Exit.void)
        expect(server.sessions()).toBe(0)
        yield* Deferred.succeed(go, undefined)
        yield* Deferred.await(asking)
        // Nobody follows it: at its ttl's end its work ends, the request unasked.
        yield* TestClock.adjust("5 seconds")
        yield* Deferred.await(interrupted)
        expect(created.task.ttl).toBe(5_000)
      }))

    it.scoped("limits working tasks per requestor (the session, without OAuth) and tasks kept; evicts finished first", () =>
      Effect.gen(function*() {
        const forever = McpServer.tool({
          name: "forever",
          execution: { taskSupport: "required" },
          handler: () => Effect.never
        })
        const { server, client: one } = yield* connect({
          tools: [forever],
          tasks: { maxWorkingPerRequestor: 2, maxKept: 3 }
        })
        const { transport } = yield* McpServer.connectMemory(server)
        const two = yield* McpClient.make(STATEFUL).pipe(Effect.provideService(Transport, transport))
        const create = (client: McpClient.McpClient) =>
          Effect.map(
            client.request("tools/call", { name: "forever", task: {} }, McpSchema.CreateTaskResult),
            (created) => created.task.taskId
          )
        const first = yield* create(one)
        yield* create(one)
        const refused = protocolError(yield* Effect.exit(create(one)))
        expect(refused).toEqual({
          code: -32603,
          message: "Too many working tasks: at most 2 per requestor; retry once one of them ends",
          data: { limit: "maxWorkingPerRequestor", max: 2 }
        })
        // Another session is another requestor; the server now keeps 3, all working.
        yield* create(two)
        expect(protocolError(yield* Effect.exit(create(two)))).toMatchObject({
          code: -32603,
          data: { limit: "maxKept", max: 3 }
        })
        // A finished task counts for neither: the oldest one is forgotten to make room.
        yield* one.request("tasks/cancel", { taskId: first }, McpSchema.Task)
        const next = yield* create(two)
        const gone = yield* Effect.exit(one.request("tasks/get", { taskId: first }, McpSchema.Task))
        expect(protocolError(gone)).toMatchObject({ code: -32602, message: `Unknown task: ${first}` })
        expect((yield* two.listTasks()).map((task) => task.taskId)).toContain(next)
      }))
  })

  it.scoped("records a span for each request a session answers when a tracer is installed", () =>
    Effect.gen(function*() {
      const { names, tracer: recording } = yield* recordingTracer
      const server = yield* McpServer.fromItems({ serverInfo, tools: [echo] })
      const { transport } = yield* McpServer.connectMemory(server).pipe(Effect.withTracer(recording))
      const client = yield* McpClient.make(STATEFUL).pipe(Effect.provideService(Transport, transport))
      yield* client.callTool("echo", { text: "a" })
      yield* server.notifyListChanged("tools").pipe(Effect.withTracer(recording))
      // Each request's SERVER span (`{mcp.method.name} {target}`), and in it the method's own.
      expect(names).toEqual([
        "McpServer.connect",
        "initialize",
        "McpServer.initialize",
        "tools/list",
        "McpServer.tools/list",
        "tools/call echo",
        "McpServer.tools/call",
        "McpServer.notifyListChanged"
      ])
    }))

  it.scoped("layerItems provides the server as an ItemServer and as an McpServer", () =>
    Effect.gen(function*() {
      const items = yield* McpServer.ItemServer
      const server = yield* McpServer.McpServer
      expect(server).toBe(items)
      const { transport } = yield* McpServer.connectMemory(server)
      const client = yield* McpClient.make(STATEFUL).pipe(Effect.provideService(Transport, transport))
      yield* items.removeTool("echo")
      expect(yield* client.listTools()).toEqual([])
    }).pipe(Effect.provide(McpServer.layerItems({ serverInfo, tools: [echo] }))))

  describe("over stdio", () => {
    it.live(
      "a child process serving with serveStdio answers a real client, and exits when it hangs up",
      () =>
        Effect.gen(function*() {
          const transport = yield* Stdio.make({
            name: "fixture",
            command: process.execPath,
            args: [yield* Effect.promise(() => bundled("test/fixtures/mcp-server.ts"))]
          })
          const client = yield* McpClient.make(STATEFUL).pipe(Effect.provideService(Transport, transport))
          expect(client.serverInfo).toEqual({ name: "fixture", version: "1.0.0" })
          expect((yield* client.listTools()).map((tool) => tool.name)).toEqual(["add"])
          expect(yield* client.callTool("add", { a: 2, b: 3 })).toEqual(text("5"))
          expect((yield* client.callTool("add", { a: "2" })).isError).toBe(true)
          const [contents] = (yield* client.readResource("proc://pid")).contents
          expect(Number((contents as McpSchema.TextResourceContents).text)).toBe(transport.info().pid)
          return transport
        }).pipe(
          Effect.scoped,
          // Closing its stdin ended the session, and with it the program, before any signal.
          Effect.tap((transport) => expect(transport.info().shutdown).toMatchObject({ endedBy: "stdin" }))
        ),
      30_000
    )
  })
})
