// An app's own @effect/ai toolkit served as MCP tools (AiToolkit.toolItems): McpServer serves
// the items, our McpClient calls them over a Memory pair. The schemas listed are the ones a
// provider is sent, arguments are decoded by the parameters schema (bad ones refused), and a
// success, a failure and a defect each become the result they should. examples/app-server.ts as
// a real stdio server is test/e2e/app-server.test.ts.
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as AiToolkit from "../src/AiToolkit.js"
import * as McpClient from "../src/McpClient.js"
import * as McpServer from "../src/McpServer.js"
import { Transport } from "../src/Transport.js"

class DivideByZero extends Schema.TaggedError<DivideByZero>()("DivideByZero", { dividend: Schema.Number }) {}

/** A service of the handlers' layer. */
class Ticks extends Context.Tag("test/Ticks")<Ticks, Ref.Ref<number>>() {}

/** A service each request needs (`addDependency`), given where the items are made. */
class User extends Context.Tag("test/User")<User, string>() {}

const Add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: { a: Schema.Number, b: Schema.Number },
  success: Schema.Struct({ sum: Schema.Number })
})
  .annotate(Tool.Title, "Add")
  .annotate(Tool.Readonly, true)
  .annotate(Tool.Idempotent, true)

const Divide = Tool.make("divide", {
  description: "Divides a by b",
  parameters: { a: Schema.Number, b: Schema.Number },
  success: Schema.Number,
  failure: DivideByZero
})

// Parameters and success with a transformation: the handler gets a Date, the client a string.
const Tomorrow = Tool.make("tomorrow", {
  description: "The day after a day",
  parameters: { day: Schema.Date },
  success: Schema.Struct({ day: Schema.Date }),
  failure: Schema.String,
  failureMode: "return"
})
  .annotate(Tool.Destructive, false)
  .annotate(Tool.OpenWorld, false)

const Tick = Tool.make("tick", { description: "Counts" })

const WhoAmI = Tool.make("whoami", { success: Schema.String }).addDependency(User)

const Crash = Tool.make("crash")

const Kit = Toolkit.make(Add, Divide, Tomorrow, Tick, WhoAmI, Crash)

const KitLive = Kit.toLayer(Effect.gen(function*() {
  const ticks = yield* Ticks
  return {
    add: ({ a, b }) => Effect.succeed({ sum: a + b }),
    divide: ({ a, b }) => b === 0 ? Effect.fail(new DivideByZero({ dividend: a })) : Effect.succeed(a / b),
    tomorrow: ({ day }) =>
      day.getUTCFullYear() >= 9999
        ? Effect.fail("The calendar ends in 9999")
        : Effect.succeed({ day: new Date(day.getTime() + 86_400_000) }),
    tick: () => Ref.update(ticks, (n) => n + 1),
    whoami: () => User,
    crash: () => Effect.die(new Error("boom in /home/secret/app.ts"))
  }
}))

// What the server logs, kept (the defect's cause among it).
const serve = (clientOptions?: McpClient.Options) => {
  const logs: Array<string> = []
  const logger = Logger.make(({ message }) => {
    logs.push([message].flat().map((part) => part instanceof Error ? part.message : String(part)).join(" "))
  })
  return Effect.gen(function*() {
    const ticks = yield* Ref.make(0)
    const items = yield* AiToolkit.toolItems(Kit).pipe(
      Effect.provide(KitLive.pipe(Layer.provide(Layer.succeed(Ticks, ticks)))),
      Effect.provideService(User, "ada")
    )
    const server = yield* McpServer.fromItems({ serverInfo: { name: "app", version: "1.0.0" }, tools: items })
    const { transport } = yield* McpServer.connectMemory(server, { name: "app" })
    const client = yield* McpClient.make(clientOptions).pipe(Effect.provideService(Transport, transport))
    return { client, ticks, logs }
  }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
}

const text = (value: string) => [{ type: "text", text: value }]

describe("AiToolkit.toolItems", () => {
  it.scoped("lists each tool as the toolkit describes it", () =>
    Effect.gen(function*() {
      const { client } = yield* serve()
      const tools = yield* client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(["add", "divide", "tomorrow", "tick", "whoami", "crash"])
      const byName = new Map(tools.map((tool) => [tool.name, tool]))
      for (const tool of Object.values<Tool.Any>(Kit.tools)) {
        expect(byName.get(tool.name)!.inputSchema).toEqual(Tool.getJsonSchema(tool as Tool.Tool<string, any>))
      }
      expect(byName.get("add")).toEqual({
        name: "add",
        title: "Add",
        description: "Adds two numbers",
        inputSchema: {
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } },
          required: ["a", "b"],
          additionalProperties: false
        },
        outputSchema: {
          type: "object",
          properties: { sum: { type: "number" } },
          required: ["sum"],
          additionalProperties: false
        },
        annotations: { readOnlyHint: true, idempotentHint: true }
      })
      // Only the hints a tool was given; a success that is no object has no outputSchema.
      expect(byName.get("tomorrow")!.annotations).toEqual({ destructiveHint: false, openWorldHint: false })
      expect(byName.get("divide")).not.toHaveProperty("annotations")
      expect(byName.get("divide")).not.toHaveProperty("outputSchema")
      expect(byName.get("tomorrow")!.outputSchema).toMatchObject({
        type: "object",
        properties: { day: { type: "string" } }
      })
    }))

  it.scoped("leaves out a tool the model provider runs", () =>
    Effect.gen(function*() {
      const WebSearch = Tool.providerDefined({
        id: "openai.web_search",
        toolkitName: "WebSearch",
        providerName: "web_search",
        args: {}
      })({})
      const Mixed = Toolkit.make(Add, WebSearch)
      const items = yield* AiToolkit.toolItems(Mixed).pipe(
        Effect.provide(Mixed.toLayer({ add: ({ a, b }) => Effect.succeed({ sum: a + b }) }))
      )
      expect(items.map((item) => item.tool.name)).toEqual(["add"])
    }))

  it.scoped("a success: JSON text, and structuredContent when the success schema is a struct", () =>
    Effect.gen(function*() {
      const { client, ticks } = yield* serve()
      expect(yield* client.callTool("add", { a: 1, b: 2 })).toEqual({
        content: text(`{"sum":3}`),
        structuredContent: { sum: 3 }
      })
      expect(yield* client.callTool("divide", { a: 1, b: 4 })).toEqual({ content: text("0.25") })
      // Decoded to a Date for the handler, encoded back to a string for the client.
      expect(yield* client.callTool("tomorrow", { day: "2026-11-23T00:00:00.000Z" })).toEqual({
        content: text(`{"day":"2026-11-24T00:00:00.000Z"}`),
        structuredContent: { day: "2026-11-24T00:00:00.000Z" }
      })
      // A void success is no content; the handler ran in its layer's context.
      expect(yield* client.callTool("tick")).toEqual({ content: [] })
      expect(yield* Ref.get(ticks)).toBe(1)
      // A request-level dependency, from where the items were made.
      expect(yield* client.callTool("whoami")).toEqual({ content: text(`"ada"`) })
    }))

  it.scoped("a failure is an isError result with the encoded failure, whatever the failureMode", () =>
    Effect.gen(function*() {
      const { client } = yield* serve()
      expect(yield* client.callTool("divide", { a: 1, b: 0 })).toEqual({
        content: text(`{"dividend":1,"_tag":"DivideByZero"}`),
        isError: true
      })
      expect(yield* client.callTool("tomorrow", { day: "9999-12-31T00:00:00.000Z" })).toEqual({
        content: text(`"The calendar ends in 9999"`),
        isError: true
      })
    }))

  it.scoped("a defect is an isError result that says nothing of it; the server's log has it", () =>
    Effect.gen(function*() {
      const { client, logs } = yield* serve()
      const result = yield* client.callTool("crash")
      expect(result).toEqual({ content: text("The tool crash failed unexpectedly"), isError: true })
      expect(JSON.stringify(result)).not.toContain("secret")
      expect(logs.some((line) => line.includes("the tool crash failed") && line.includes("secret"))).toBe(true)
    }))

  it.scoped("bad arguments: an isError result from 2025-11-25 on, -32602 before; the handler never runs", () =>
    Effect.gen(function*() {
      const { client } = yield* serve()
      const result = yield* client.callTool("add", { a: 1, b: "two" })
      expect(result.isError).toBe(true)
      expect(result.content[0]).toMatchObject({
        type: "text",
        text: expect.stringContaining("Invalid arguments for tool add")
      })
      const notADate = yield* client.callTool("tomorrow", { day: "someday" })
      expect(notADate.isError).toBe(true)
      const old = yield* serve({ protocolVersion: "2025-06-18" })
      const exit = yield* Effect.exit(old.client.callTool("tick", { times: 2 }))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error.reason).toMatchObject({
        _tag: "Protocol",
        code: -32602
      })
      expect(yield* Ref.get(old.ticks)).toBe(0)
    }))
})
