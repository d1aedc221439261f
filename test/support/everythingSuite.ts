// The flows of the reference server, @modelcontextprotocol/server-everything: tools,
// structured content, resources, prompts, completion, logging, progress and subscriptions.
// One suite, run over each transport the server speaks (stdio, Streamable HTTP, HTTP+SSE).
import { expect, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import type * as McpClient from "../../src/McpClient.js"
import type * as McpSchema from "../../src/McpSchema.js"
import { firstText, reasonOf } from "../../src/testing/Results.js"
import { server } from "./bundle.js"
import { hangGuard } from "./guard.js"

const require = createRequire(import.meta.url)

/** The server's entry file, to run it with `process.execPath`. */
export const EVERYTHING = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js"
)

/**
 * server-everything on stdio behind a wrapper that exits when its stdin ends
 * (test/fixtures/everything-stdio.mjs): a stop then needs no SIGTERM after the 2 s grace
 * period. Give it "stdio" as its argument, as the published entry.
 */
export const EVERYTHING_STDIO = server("everythingStdio")

/**
 * Starts waiting for the first of the client's notifications that satisfies `predicate`,
 * in a fiber of the current Scope; await the returned fiber for it.
 */
export const firstNotification = (
  client: McpClient.McpClient,
  predicate: (notification: McpSchema.ServerNotification) => boolean
) =>
  Effect.gen(function*() {
    const fiber = yield* client.notifications.pipe(
      Stream.filter(predicate),
      Stream.runHead,
      Effect.forkScoped
    )
    // Let the collector subscribe before the caller triggers anything.
    yield* Effect.yieldNow()
    return fiber
  })

class Everything extends Context.Tag("test/Everything")<Everything, McpClient.McpClient>() {}

/**
 * Runs the flows against one client, connected by `connect` (named "everything") for the
 * whole suite, on the services of `platform`, which live as long as the suite.
 */
export const everythingSuite = <R>(
  label: string,
  connect: Effect.Effect<McpClient.McpClient, unknown, Scope.Scope | R>,
  platform: Layer.Layer<R>
) =>
  layer(Layer.scoped(Everything, Effect.orDie(connect)).pipe(Layer.provide(platform)), {
    excludeTestServices: true,
    timeout: hangGuard(20_000)
  })(label, (it) => {
    it.effect("initialize: revision, serverInfo, capabilities and instructions", () =>
      Effect.gen(function*() {
        const client = yield* Everything
        expect(client.server).toBe("everything")
        expect(client.protocolVersion).toBe("2025-11-25")
        expect(client.serverInfo.name).toBe("mcp-servers/everything")
        expect(client.serverInfo.version).toBe("2.0.0")
        expect(client.capabilities.tools).toBeDefined()
        expect(client.capabilities.resources?.subscribe).toBe(true)
        expect(client.instructions).toBe(
          fs.readFileSync(path.join(path.dirname(EVERYTHING), "docs", "instructions.md"), "utf8")
        )
      }))

    it.effect("tools: list, echo, get-sum, and an invalid call as an isError value", () =>
      Effect.gen(function*() {
        const client = yield* Everything
        const tools = yield* client.listTools()
        const names = tools.map((tool) => tool.name)
        expect(names).toEqual(expect.arrayContaining(["echo", "get-sum", "get-structured-content", "get-env"]))
        const echo = tools.find((tool) => tool.name === "echo")!
        expect(echo.inputSchema.type).toBe("object")
        expect(Object.keys(echo.inputSchema.properties ?? {})).toEqual(["message"])

        const echoed = yield* client.callTool("echo", { message: "hello ✓" })
        expect(echoed.isError).toBeUndefined()
        expect(firstText(echoed)).toBe("Echo: hello ✓")

        const sum = yield* client.callTool("get-sum", { a: 2.5, b: 40 })
        expect(firstText(sum)).toBe("The sum of 2.5 and 40 is 42.5.")

        // Arguments that do not match the inputSchema: a tool error, returned as a value.
        const wrong = yield* client.callTool("get-sum", { a: "two", b: 40 })
        expect(wrong.isError).toBe(true)
        expect(firstText(wrong)).toMatch(/Input validation error: Invalid arguments for tool get-sum/)
      }))

    it.effect("get-structured-content: structuredContent checked against its outputSchema", () =>
      Effect.gen(function*() {
        const client = yield* Everything
        const tools = yield* client.listTools()
        const tool = tools.find((tool) => tool.name === "get-structured-content")!
        expect(tool.outputSchema?.required).toEqual(expect.arrayContaining(["temperature", "conditions", "humidity"]))
        const result = yield* client.callTool("get-structured-content", { location: "Chicago" })
        expect(result.structuredContent).toEqual({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 })
        expect(JSON.parse(firstText(result))).toEqual(result.structuredContent)
      }))

    it.effect("resources: list, templates, read, and an unknown uri as a Protocol error", () =>
      Effect.gen(function*() {
        const client = yield* Everything
        const resources = yield* client.listResources()
        const instructionsUri = "demo://resource/static/document/instructions.md"
        expect(resources.map((resource) => resource.uri)).toContain(instructionsUri)

        const templates = yield* client.listResourceTemplates()
        expect(templates.map((template) => template.uriTemplate)).toEqual(
          expect.arrayContaining([
            "demo://resource/dynamic/text/{resourceId}",
            "demo://resource/dynamic/blob/{resourceId}"
          ])
        )

        const dynamic = yield* client.readResource("demo://resource/dynamic/text/7")
        expect(dynamic.contents).toHaveLength(1)
        expect(dynamic.contents[0]!.uri).toBe("demo://resource/dynamic/text/7")
        expect((dynamic.contents[0] as McpSchema.TextResourceContents).text).toMatch(
          /^Resource 7: This is a plaintext resource created at /
        )

        const file = yield* client.readResource(instructionsUri)
        expect((file.contents[0] as McpSchema.TextResourceContents).text).toBe(client.instructions)

        const blob = yield* client.readResource("demo://resource/dynamic/blob/3")
        const blobText = Buffer.from((blob.contents[0] as McpSchema.BlobResourceContents).blob, "base64").toString(
          "utf8"
        )
        expect(blobText).toMatch(/^Resource 3: This is a base64 blob created at /)

        const missing = yield* Effect.flip(client.readResource("demo://nothing/here"))
        const reason = reasonOf(missing, "Protocol")
        expect(reason.method).toBe("resources/read")
        expect(reason.code).toBe(-32602)
        expect(missing.message).toMatch(
          /^server 'everything' answered resources\/read with error -32602: .*demo:\/\/nothing\/here/
        )
      }))

    it.effect("prompts: list, and get with arguments", () =>
      Effect.gen(function*() {
        const client = yield* Everything
        const prompts = yield* client.listPrompts()
        expect(prompts.map((prompt) => prompt.name)).toEqual(
          expect.arrayContaining(["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"])
        )
        const args = prompts.find((prompt) => prompt.name === "args-prompt")!
        expect(args.arguments?.map((argument) => [argument.name, argument.required ?? false])).toEqual([
          ["city", true],
          ["state", false]
        ])

        const prompt = yield* client.getPrompt("args-prompt", { city: "Lyon", state: "Rhône" })
        expect(prompt.messages).toHaveLength(1)
        expect(prompt.messages[0]!.role).toBe("user")
        expect(prompt.messages[0]!.content).toEqual({ type: "text", text: "What's weather in Lyon, Rhône?" })

        const embedded = yield* client.getPrompt("resource-prompt", { resourceType: "Text", resourceId: "5" })
        expect(embedded.messages[1]!.content.type).toBe("resource")
      }))

    it.effect("complete: a completable prompt argument, with context, and a resource template", () =>
      Effect.gen(function*() {
        const client = yield* Everything
        const ref = { type: "ref/prompt", name: "completable-prompt" } as const
        const departments = yield* client.complete(ref, { name: "department", value: "S" })
        expect(departments.completion.values).toEqual(["Sales", "Support"])

        const names = yield* client.complete(ref, { name: "name", value: "" }, {
          arguments: { department: "Engineering" }
        })
        expect(names.completion.values).toEqual(["Alice", "Bob", "Charlie"])

        const ids = yield* client.complete(
          { type: "ref/resource", uri: "demo://resource/dynamic/text/{resourceId}" },
          { name: "resourceId", value: "42" }
        )
        expect(ids.completion.values).toEqual(["42"])
      }))

    it.effect("ping and setLoggingLevel", () =>
      Effect.gen(function*() {
        const client = yield* Everything
        yield* client.ping()
        yield* client.setLoggingLevel("debug")
        // An unknown level is refused by the server.
        const refused = yield* Effect.flip(client.setLoggingLevel("verbose" as McpSchema.LoggingLevel))
        expect(reasonOf(refused, "Protocol").method).toBe("logging/setLevel")
      }))

    it.effect("progress: trigger-long-running-operation reports every step to onProgress and the stream", () =>
      Effect.scoped(Effect.gen(function*() {
        const client = yield* Everything
        const onStream = yield* client.notifications.pipe(
          Stream.filter((notification) => notification.method === "notifications/progress"),
          Stream.take(3),
          Stream.runCollect,
          Effect.forkScoped
        )
        yield* Effect.yieldNow()
        const seen: Array<readonly [number, number | undefined]> = []
        const result = yield* client.callTool("trigger-long-running-operation", { duration: 0.3, steps: 3 }, {
          onProgress: (progress) => Effect.sync(() => seen.push([progress.progress, progress.total]))
        })
        expect(firstText(result)).toBe("Long running operation completed. Duration: 0.3 seconds, Steps: 3.")
        expect(seen).toEqual([[1, 3], [2, 3], [3, 3]])
        const streamed = yield* onStream.await.pipe(Effect.timeout(hangGuard(5_000)), Effect.flatten)
        expect(Chunk.toReadonlyArray(streamed).map((n) => (n.params as { progress: number }).progress)).toEqual([
          1,
          2,
          3
        ])
      })))

    it.effect("notifications: a log message from toggle-simulated-logging", () =>
      Effect.scoped(Effect.gen(function*() {
        const client = yield* Everything
        yield* client.setLoggingLevel("debug")
        const message = yield* firstNotification(client, (n) => n.method === "notifications/message")
        const started = yield* client.callTool("toggle-simulated-logging", {})
        expect(firstText(started)).toMatch(/^Started simulated, random-leveled logging/)
        const log = yield* message.await.pipe(Effect.timeout(hangGuard(5_000)), Effect.flatten)
        const params = Option.getOrThrow(log).params as { level: string; data: unknown }
        expect(params.data).toMatch(/-level message|level-message/)
        const stopped = yield* client.callTool("toggle-simulated-logging", {})
        expect(firstText(stopped)).toMatch(/^Stopped simulated logging/)
      })))

    it.effect("subscribeResource: resources/updated arrives for the subscribed uri", () =>
      Effect.scoped(Effect.gen(function*() {
        const client = yield* Everything
        const uri = "demo://resource/dynamic/text/1"
        const acknowledged = yield* firstNotification(
          client,
          (n) => n.method === "notifications/message" && String((n.params as { data?: unknown }).data).includes(uri)
        )
        const updated = yield* firstNotification(
          client,
          (n) => n.method === "notifications/resources/updated" && (n.params as { uri?: unknown }).uri === uri
        )
        yield* client.subscribeResource(uri)
        // The server acknowledges a subscription with a log message.
        yield* acknowledged.await.pipe(Effect.timeout(hangGuard(5_000)), Effect.flatten)
        // The update simulation sends one round of updates at once.
        yield* client.callTool("toggle-subscriber-updates", {})
        const notification = yield* updated.await.pipe(Effect.timeout(hangGuard(5_000)), Effect.flatten)
        expect(Option.isSome(notification)).toBe(true)
        yield* client.callTool("toggle-subscriber-updates", {})
        yield* client.unsubscribeResource(uri)
      })))
  })
