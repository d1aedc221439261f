import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { isPlainCallToolResult } from "../src/internal/mcpClient/toolResult.js"
import * as McpClient from "../src/McpClient.js"
import * as McpSchema from "../src/McpSchema.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure, text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { recordingTracer } from "./support/tracing.js"

const echo: FakeServer.FakeTool = {
  tool: { name: "echo", inputSchema: { type: "object" } },
  call: (args) => Effect.succeed(text(String(args.text)))
}

const weather = (structured: Record<string, unknown> | undefined, isError?: boolean): FakeServer.FakeTool => ({
  tool: {
    name: "weather",
    inputSchema: { type: "object" },
    outputSchema: {
      type: "object",
      properties: { temperature: { type: "number" }, conditions: { type: "string" } },
      required: ["temperature", "conditions"],
      additionalProperties: false
    }
  },
  call: () =>
    Effect.succeed({
      ...text("weather"),
      ...(structured === undefined ? {} : { structuredContent: structured }),
      ...(isError === undefined ? {} : { isError })
    })
})

const connect = (server: FakeServer.Options, options?: McpClient.Options) =>
  Effect.gen(function*() {
    const fake = yield* FakeServer.make({ name: "fake", ...server })
    const client = yield* McpClient.make(options).pipe(Effect.provideService(Transport, fake.transport))
    return { fake, client }
  })

const methods = (fake: FakeServer.FakeServer) => fake.requests.map((request) => request.method)

describe("McpClient", () => {
  describe("initialize", () => {
    it.scoped("asks for 2025-11-25 and sends notifications/initialized", () =>
      Effect.gen(function*() {
        const fake = yield* FakeServer.make({ tools: [echo], instructions: "be nice" })
        const seen = yield* fake.peer.subscribe
        const client = yield* McpClient.make({ clientInfo: { name: "test", version: "1" } }).pipe(
          Effect.provideService(Transport, fake.transport)
        )
        // First the server/discover probe, which a 2025-11-25 server does not know.
        expect(fake.requests.map((request) => request.method)).toEqual(["server/discover", "initialize"])
        expect(fake.requests[1]!.params).toMatchObject({
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "test", version: "1" }
        })
        expect(client.protocolVersion).toBe("2025-11-25")
        expect(client.instructions).toBe("be nice")
        expect(client.serverInfo).toEqual({ name: "fake", version: "1.0.0" })
        expect((yield* Queue.take(seen)).method).toBe("notifications/initialized")
      }))

    for (const version of ["2024-11-05", "2025-03-26", "2025-06-18"] as const) {
      it.scoped(`accepts a server that answers ${version}`, () =>
        Effect.gen(function*() {
          const { client } = yield* connect({ protocolVersion: version, tools: [echo] })
          expect(client.protocolVersion).toBe(version)
          expect(yield* client.callTool("echo", { text: "hi" })).toEqual(text("hi"))
        }))
    }

    it.scoped("refuses a revision it does not speak", () =>
      Effect.gen(function*() {
        const error = failure(yield* Effect.exit(connect({ protocolVersion: "2099-01-01" })))
        expect(error.reason._tag).toBe("Unsupported")
        expect(error.message).toBe(
          "server 'fake': the server chose protocol revision 2099-01-01; mcp-fleet speaks 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"
        )
      }))

    it.scoped("reports a malformed initialize answer", () =>
      Effect.gen(function*() {
        const error = failure(
          yield* Effect.exit(connect({
            handlers: { initialize: () => Effect.succeed({ protocolVersion: "2025-11-25", capabilities: {} }) }
          }))
        )
        expect(error.reason).toMatchObject({ _tag: "Validation", method: "initialize" })
        expect(error.message).toMatch(/serverInfo/)
      }))

    it.scoped("times out a server that never answers initialize", () =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(connect({ handlers: { initialize: () => Effect.never } }, {
          initializeTimeout: "10 seconds"
        }))
        yield* TestClock.adjust("10 seconds")
        expect(failure(yield* Fiber.await(fiber)).reason).toMatchObject({ _tag: "Timeout", method: "initialize" })
      }))
  })

  describe("capabilities", () => {
    it.scoped("fails fast, with no round trip, for what the server did not declare", () =>
      Effect.gen(function*() {
        const { client, fake } = yield* connect({ tools: [echo] })
        const before = fake.requests.length
        const attempts = [
          client.listPrompts(),
          client.getPrompt("x"),
          client.listResources(),
          client.readResource("file:///x"),
          client.subscribeResource("file:///x"),
          client.complete({ type: "ref/prompt", name: "x" }, { name: "a", value: "" }),
          client.setLoggingLevel("info")
        ]
        for (const attempt of attempts) {
          expect(failure(yield* Effect.exit(attempt)).reason._tag).toBe("Unsupported")
        }
        expect(fake.requests.length).toBe(before)
        expect(failure(yield* Effect.exit(client.listPrompts())).message).toBe(
          "server 'fake': cannot list prompts: the server did not declare the 'prompts' capability"
        )
      }))

    it.scoped("refuses subscribe when resources do not declare subscribe", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({ capabilities: { resources: {} } })
        expect(failure(yield* Effect.exit(client.subscribeResource("file:///x"))).reason._tag).toBe("Unsupported")
      }))

    it.scoped("allows completion on 2024-11-05 servers with prompts", () =>
      Effect.gen(function*() {
        const { client, fake } = yield* connect({
          protocolVersion: "2024-11-05",
          capabilities: { prompts: {} },
          handlers: { "completion/complete": () => Effect.succeed({ completion: { values: ["a", "ab"] } }) }
        })
        const result = yield* client.complete({ type: "ref/prompt", name: "p" }, { name: "x", value: "a" })
        expect(result.completion.values).toEqual(["a", "ab"])
        expect(fake.requests.at(-1)!.params).toEqual({
          ref: { type: "ref/prompt", name: "p" },
          argument: { name: "x", value: "a" }
        })
      }))
  })

  describe("lists", () => {
    const tools = Array.from({ length: 25 }, (_, i): FakeServer.FakeTool => ({
      tool: { name: `tool${i}`, inputSchema: { type: "object" } },
      call: () => Effect.succeed(text(String(i)))
    }))

    it.scoped("returns every page", () =>
      Effect.gen(function*() {
        const { client, fake } = yield* connect({ tools, pageSize: 10 })
        const listed = yield* client.listTools()
        expect(listed.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.tool.name))
        // The cursors the server gave, sent back as they came.
        const cursors = fake.requests.filter((request) => request.method === "tools/list").map((request) =>
          request.params?.cursor
        )
        expect(cursors).toHaveLength(3)
        expect(cursors[0]).toBeUndefined()
        expect(new Set(cursors.slice(1).map((cursor) => typeof cursor))).toEqual(new Set(["string"]))
        expect(cursors[1]).not.toBe(cursors[2])
      }))

    it.scoped("stops at the page limit", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({ tools, pageSize: 10 }, { maxPages: 2 })
        const error = failure(yield* Effect.exit(client.listTools()))
        expect(error.reason).toMatchObject({ _tag: "Limit", limit: 2 })
        expect(error.message).toBe("server 'fake': tools/list: the number of pages of 3 exceeds the limit of 2")
      }))

    it.scoped("stops at the item limit", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({ tools, pageSize: 10 }, { maxItems: 15 })
        expect(failure(yield* Effect.exit(client.listTools())).reason).toMatchObject({
          _tag: "Limit",
          size: 20,
          limit: 15
        })
      }))

    it.scoped("detects a cursor loop", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({
          capabilities: { prompts: {} },
          handlers: {
            "prompts/list": (request) =>
              Effect.succeed({
                prompts: [{ name: `p${String(request.params?.cursor)}` }],
                nextCursor: request.params?.cursor === "b" ? "a" : "b"
              })
          }
        })
        const error = failure(yield* Effect.exit(client.listPrompts()))
        expect(error.reason).toMatchObject({ _tag: "Validation", method: "prompts/list" })
        expect(error.message).toBe(`server 'fake' (prompts/list): the server repeated the cursor "b"`)
      }))

    it.scoped("lists and reads resources and prompts", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({
          resources: [{ resource: { uri: "mem://a", name: "a" }, text: "alpha" }],
          prompts: [{
            prompt: { name: "greet", arguments: [{ name: "who", required: true }] },
            get: (args) => ({ messages: [{ role: "user", content: { type: "text", text: `hello ${args.who}` } }] })
          }]
        })
        expect(yield* client.listResources()).toEqual([{ uri: "mem://a", name: "a" }])
        expect(yield* client.listResourceTemplates()).toEqual([])
        expect(yield* client.readResource("mem://a")).toEqual({ contents: [{ uri: "mem://a", text: "alpha" }] })
        const missing = failure(yield* Effect.exit(client.readResource("mem://b")))
        expect(missing.reason).toMatchObject({ _tag: "Protocol", code: -32002 })
        expect((yield* client.listPrompts())[0]!.name).toBe("greet")
        expect((yield* client.getPrompt("greet", { who: "you" })).messages[0]!.content).toEqual({
          type: "text",
          text: "hello you"
        })
        yield* client.subscribeResource("mem://a")
        yield* client.unsubscribeResource("mem://a")
        yield* client.ping()
      }))

    it.scoped("keeps unknown fields of what it decodes", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({
          tools: [{
            tool: { name: "x", inputSchema: { type: "object" }, futureField: { a: 1 } } as McpSchema.Tool,
            call: () =>
              Effect.succeed(
                { content: [{ type: "text", text: "t", extra: true }], more: 1 } as McpSchema.CallToolResult
              )
          }]
        })
        expect(yield* client.listTools()).toEqual([{
          name: "x",
          inputSchema: { type: "object" },
          futureField: { a: 1 }
        }])
        expect(yield* client.callTool("x")).toEqual({ content: [{ type: "text", text: "t", extra: true }], more: 1 })
      }))
  })

  describe("callTool", () => {
    it.scoped("returns isError results as values", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({
          tools: [{
            tool: { name: "bad", inputSchema: { type: "object" } },
            call: () => Effect.succeed({ ...text("nope"), isError: true })
          }]
        })
        expect(yield* client.callTool("bad")).toEqual({ ...text("nope"), isError: true })
      }))

    it.scoped("fails with a Protocol error for an unknown tool", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({ tools: [echo] })
        const error = failure(yield* Effect.exit(client.callTool("nope")))
        expect(error.reason).toMatchObject({ _tag: "Protocol", method: "tools/call", code: -32602 })
      }))

    it.scoped("accepts structured content that matches the outputSchema", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({ tools: [weather({ temperature: 21, conditions: "sunny" })] })
        expect((yield* client.callTool("weather")).structuredContent).toEqual({ temperature: 21, conditions: "sunny" })
      }))

    it.scoped("rejects structured content that does not match, naming the field", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({ tools: [weather({ temperature: "hot", conditions: "sunny" })] })
        const error = failure(yield* Effect.exit(client.callTool("weather")))
        expect(error.reason).toMatchObject({ _tag: "Validation", method: "tools/call" })
        expect(error.message).toBe(
          "server 'fake' (tools/call): tool 'weather' returned structuredContent that does not match its outputSchema: /temperature must be number"
        )
      }))

    it.scoped("rejects a missing structuredContent when there is an outputSchema", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({ tools: [weather(undefined)] })
        const error = failure(yield* Effect.exit(client.callTool("weather")))
        expect(error.message).toMatch(/has an outputSchema but returned no structuredContent/)
      }))

    it.scoped("does not check the structured content of an error result", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({ tools: [weather(undefined, true)] })
        expect((yield* client.callTool("weather")).isError).toBe(true)
      }))

    it.scoped("validates draft-07 output schemas too", () =>
      Effect.gen(function*() {
        const tool = weather({ temperature: 1 })
        const draft07 = {
          ...tool,
          tool: {
            ...tool.tool,
            outputSchema: { $schema: "http://json-schema.org/draft-07/schema#", ...tool.tool.outputSchema }
          }
        }
        const { client } = yield* connect({ tools: [draft07] })
        expect(failure(yield* Effect.exit(client.callTool("weather"))).message).toMatch(
          /must have required property 'conditions'/
        )
      }))

    it.scoped("lists tools once, and again after tools/list_changed", () =>
      Effect.gen(function*() {
        const { client, fake } = yield* connect({ tools: [echo] })
        const notifications = yield* Effect.fork(Stream.runCollect(Stream.take(client.notifications, 1)))
        yield* client.callTool("echo", { text: "a" })
        yield* client.callTool("echo", { text: "b" })
        expect(methods(fake)).toEqual(["server/discover", "initialize", "tools/list", "tools/call", "tools/call"])
        yield* Effect.yieldNow()
        yield* fake.peer.notify("notifications/tools/list_changed")
        const [changed] = Chunk.toReadonlyArray(yield* Fiber.join(notifications))
        expect(changed).toEqual({ method: "notifications/tools/list_changed" })
        yield* client.callTool("echo", { text: "c" })
        expect(methods(fake).slice(5)).toEqual(["tools/list", "tools/call"])
      }))

    it.scoped("sends a progress token and keeps a long call alive while progress comes", () =>
      Effect.gen(function*() {
        const progress: Array<number> = []
        const slow: FakeServer.FakeTool = {
          tool: { name: "slow", inputSchema: { type: "object" } },
          call: (_, context) =>
            Effect.gen(function*() {
              for (let i = 1; i <= 5; i++) {
                yield* Effect.sleep("8 seconds")
                yield* context.progress(i, 5)
              }
              return text("done")
            })
        }
        const { client } = yield* connect({ tools: [slow] })
        const fiber = yield* Effect.fork(
          client.callTool("slow", {}, {
            timeout: "10 seconds",
            onProgress: (p) => Effect.sync(() => progress.push(p.progress))
          })
        )
        for (let i = 0; i < 5; i++) {
          yield* TestClock.adjust("8 seconds")
          yield* Effect.yieldNow()
        }
        expect(yield* Fiber.join(fiber)).toEqual(text("done"))
        expect(progress).toEqual([1, 2, 3, 4, 5])
      }))

    it.scoped("sends _meta with the call", () =>
      Effect.gen(function*() {
        const { client, fake } = yield* connect({ tools: [echo] })
        yield* client.callTool("echo", { text: "x" }, { meta: { trace: "t1" }, resetTimeoutOnProgress: false })
        expect(fake.requests.at(-1)!.params).toEqual({ name: "echo", arguments: { text: "x" }, _meta: { trace: "t1" } })
      }))

    it.scoped("rejects a malformed result of a tool without an outputSchema", () =>
      Effect.gen(function*() {
        const { client } = yield* connect({
          tools: [{
            tool: { name: "odd", inputSchema: { type: "object" } },
            call: () =>
              Effect.succeed({ content: [{ type: "image", data: "AA==" }] } as unknown as McpSchema.CallToolResult)
          }]
        })
        const error = failure(yield* Effect.exit(client.callTool("odd")))
        expect(error.reason).toMatchObject({ _tag: "Validation", method: "tools/call" })
      }))

    it.scoped("fails a call in flight with Closed when the server goes away", () =>
      Effect.gen(function*() {
        const { client, fake } = yield* connect({
          tools: [{ tool: { name: "hang", inputSchema: { type: "object" } }, call: () => Effect.never }]
        })
        yield* client.listTools()
        const fiber = yield* Effect.fork(client.callTool("hang"))
        yield* Effect.yieldNow()
        yield* fake.close
        const error = failure(yield* Fiber.await(fiber))
        expect(error.reason).toMatchObject({ _tag: "Closed", method: "tools/call" })
        expect((yield* client.closed).reason._tag).toBe("Closed")
      }))
  })

  describe("plain tool results, which callTool does not decode", () => {
    const decode = McpSchema.decodeUnknown(McpSchema.CallToolResult)
    const plain: Array<Record<string, unknown>> = [
      { content: [] },
      { content: [{ type: "text", text: "hi" }] },
      { content: [{ type: "text", text: "a", extra: { nested: [1, null] } }], isError: false, more: "kept" },
      { isError: true, content: [{ text: "b", type: "text" }, { type: "image", data: "AA==", mimeType: "image/png" }] },
      { content: [{ type: "audio", mimeType: "audio/wav", data: "AA==" }] }
    ]
    it("are what decoding them gives, key order included", () => {
      for (const result of plain) {
        expect(isPlainCallToolResult(result)).toBe(true)
        const decoded = decode(result)
        expect(Either.isRight(decoded)).toBe(true)
        expect(JSON.stringify(Either.getOrThrow(decoded))).toBe(JSON.stringify(result))
        expect(Either.getOrThrow(decoded)).toStrictEqual(result)
      }
    })

    const notPlain: Array<Record<string, unknown>> = [
      // Valid, but with parts the schema checks in depth.
      { content: [{ type: "text", text: "a", annotations: { priority: 1 } }] },
      { content: [{ type: "text", text: "a", _meta: { k: 1 } }] },
      { content: [{ type: "resource_link", uri: "file:///a", name: "a" }] },
      { content: [{ type: "future", anything: 1 }] },
      { content: [], structuredContent: { x: 1 } },
      { content: [], _meta: { k: 1 } },
      // Invalid.
      { content: [{ type: "text", text: 1 }] },
      { content: [{ type: "image", data: "AA==" }] },
      { content: [{ type: "text" }] },
      { content: ["text"] },
      { content: [null] },
      { content: {} },
      {},
      { content: [], isError: "yes" },
      { content: [], isError: undefined },
      { content: [{ type: "toString", text: "a" }] }
    ]
    it("are only those", () => {
      for (const result of notPlain) expect(isPlainCallToolResult(result), JSON.stringify(result)).toBe(false)
    })
  })

  it.scoped("records a span named after each operation when a tracer is installed", () =>
    Effect.gen(function*() {
      const { names, tracer: recording } = yield* recordingTracer
      const { client } = yield* connect({ tools: [echo] })
      yield* client.callTool("echo", { text: "a" })
      expect(names).toEqual([])
      yield* client.callTool("echo", { text: "b" }).pipe(Effect.withTracer(recording))
      yield* client.ping().pipe(Effect.withTracer(recording))
      expect(names).toEqual(["McpClient.callTool", "McpClient.ping"])
    }))

  it.scoped("decodes server notifications into typed values", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* connect({ tools: [echo] })
      const fiber = yield* Effect.fork(Stream.runCollect(Stream.take(client.notifications, 3)))
      yield* Effect.yieldNow()
      yield* fake.peer.notify("notifications/message", { level: "warning", logger: "db", data: { slow: true } })
      yield* fake.peer.notify("notifications/resources/updated", { uri: "mem://a" })
      yield* fake.peer.notify("notifications/custom", { x: 1 })
      expect(Chunk.toReadonlyArray(yield* Fiber.join(fiber))).toEqual([
        { method: "notifications/message", params: { level: "warning", logger: "db", data: { slow: true } } },
        { method: "notifications/resources/updated", params: { uri: "mem://a" } },
        { method: "notifications/custom", params: { x: 1 } }
      ])
    }))
})
