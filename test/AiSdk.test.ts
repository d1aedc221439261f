// The AI SDK bridge against real servers: `generateText` with the SDK's mock model
// (MockLanguageModelV3), the schemas it is given, what the model reads of each result, an
// aborted call cancelled at its server, filters and the policy.
import { describe, expect, it } from "@effect/vitest"
import { asSchema, generateText, stepCountIs } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as path from "node:path"
import * as AiSdk from "../src/AiSdk.js"
import * as FleetTools from "../src/FleetTools.js"
import * as McpManagementTools from "../src/McpManagementTools.js"
import type { RegistryEvent } from "../src/RegistryEvent.js"
import { agentFleet } from "./support/agentFleet.js"
import { until } from "./support/events.js"
import { hangGuard } from "./support/guard.js"
import { answer, toolCalls } from "./support/mockModel.js"

// What the model was given back for each tool call of the previous step, by tool name.
const outputsIn = (model: MockLanguageModelV3, call: number) =>
  Object.fromEntries(
    model.doGenerateCalls[call]!.prompt.flatMap((message) =>
      message.role === "tool"
        ? message.content.flatMap((part) => part.type === "tool-result" ? [[part.toolName, part.output]] : [])
        : []
    )
  )

const logged = (text: string) => (event: RegistryEvent): event is RegistryEvent =>
  event._tag === "LogMessage" && typeof event.data === "string" && event.data.startsWith(text)

describe("AiSdk (real servers)", () => {
  it.scopedLive(
    "generateText with the mock model: schemas unchanged, results and failures as the model reads them",
    () =>
      Effect.gen(function*() {
        const fleet = yield* agentFleet({
          servers: { everything: { tools: { "trigger-long-running-operation": { timeout: 300 } } } }
        })
        const tools = AiSdk.toAiSdkTools(yield* FleetTools.make.pipe(Effect.provide(fleet.context)))
        const catalog = yield* SubscriptionRef.get(fleet.registry.catalog)
        expect(Object.keys(tools).sort()).toEqual(catalog.tools.map((entry) => entry.name).sort())
        for (const entry of catalog.tools) {
          const tool = tools[entry.name]!
          expect(asSchema(tool.inputSchema).jsonSchema).toEqual(entry.tool.inputSchema)
          expect(tool.description).toBe(entry.tool.description)
          expect(tool.metadata).toMatchObject({ server: entry.server, tool: entry.tool.name })
        }

        const model = new MockLanguageModelV3({
          doGenerate: [
            toolCalls(
              ["mcp__everything__echo", { message: "hi" }],
              ["mcp__memory__read_graph", {}],
              ["mcp__everything__get-tiny-image", {}],
              ["mcp__filesystem__read_text_file", { path: path.join(path.dirname(fleet.dir), "elsewhere.txt") }],
              ["mcp__everything__trigger-long-running-operation", { duration: 5, steps: 5 }]
            ),
            answer("done")
          ]
        })
        const result = yield* Effect.promise(() =>
          generateText({ model, tools, prompt: "Use the fleet", stopWhen: stepCountIs(3) })
        )
        expect(result.text).toBe("done")
        for (const offered of model.doGenerateCalls[0]!.tools!) {
          expect(offered).toMatchObject({ type: "function" })
          expect((offered as { inputSchema: unknown }).inputSchema).toEqual(
            catalog.toolsByName.get(offered.name)!.tool.inputSchema
          )
        }
        const outputs = outputsIn(model, 1)
        expect(outputs["mcp__everything__echo"]).toEqual({ type: "text", value: "Echo: hi" })
        expect(outputs["mcp__memory__read_graph"]).toMatchObject({
          type: "text",
          value: expect.stringContaining("entities")
        })
        expect(outputs["mcp__everything__get-tiny-image"]).toMatchObject({
          type: "content",
          value: expect.arrayContaining([
            { type: "image-data", data: expect.any(String), mediaType: "image/png" },
            expect.objectContaining({ type: "text" })
          ])
        })
        expect(outputs["mcp__filesystem__read_text_file"]).toEqual({
          type: "error-text",
          value: expect.stringContaining("Access denied")
        })
        expect(outputs["mcp__everything__trigger-long-running-operation"]).toEqual({
          type: "error-text",
          value: "server 'everything' did not finish tools/call within its maximum of 300 ms"
        })
      }),
    { timeout: hangGuard(60_000) }
  )

  it.scopedLive(
    "a model calling a tool named after an Object.prototype member is told there is none",
    () =>
      Effect.gen(function*() {
        const fleet = yield* agentFleet()
        const tools = AiSdk.toAiSdkTools(yield* FleetTools.make.pipe(Effect.provide(fleet.context)))
        const model = new MockLanguageModelV3({
          doGenerate: [
            toolCalls(["constructor", {}], ["toString", {}], ["mcp__memory__read_graph", {}]),
            answer("done")
          ]
        })
        const result = yield* Effect.promise(() =>
          generateText({ model, tools, prompt: "Use the fleet", stopWhen: stepCountIs(3) })
        )
        expect(result.text).toBe("done")
        const outputs = outputsIn(model, 1)
        for (const name of ["constructor", "toString"]) {
          expect(outputs[name]).toEqual({ type: "error-text", value: expect.stringContaining(`tool '${name}'`) })
        }
        expect(outputs["mcp__memory__read_graph"]).toMatchObject({ type: "text" })
      }),
    { timeout: hangGuard(60_000) }
  )

  it.scopedLive("an aborted call is cancelled at its server", () =>
    Effect.gen(function*() {
      const fleet = yield* agentFleet()
      const events = yield* fleet.registry.subscribe
      const tools = AiSdk.toAiSdkTools(yield* FleetTools.make.pipe(Effect.provide(fleet.context)))
      const controller = new AbortController()
      const running = tools["mcp__waiting__wait"]!.execute!({}, {
        toolCallId: "call-1",
        messages: [],
        abortSignal: controller.signal
      }) as Promise<unknown>
      const started = yield* until(events, logged("waiting "))
      const id = String((started as { data: string }).data).slice("waiting ".length)
      controller.abort()
      const outcome = yield* Effect.promise(() => running.then(() => "answered", (error: unknown) => error))
      expect((outcome as Error).name).toBe("AbortError")
      yield* until(events, logged(`cancelled ${id}`))
    }), { timeout: hangGuard(60_000) })

  it.scopedLive(
    "a filter narrows the set; denied tools are absent; the management tools come when provided",
    () =>
      Effect.gen(function*() {
        const fleet = yield* agentFleet({ deny: ["mcp__memory__delete_*"] })
        const management = yield* McpManagementTools.make().pipe(Effect.provide(fleet.context))
        const fleetTools = yield* FleetTools.make.pipe(
          Effect.provideService(McpManagementTools.McpManagementTools, management),
          Effect.provide(fleet.context)
        )
        const memory = Object.keys(AiSdk.toAiSdkTools(fleetTools, { filter: { servers: ["memory"] } }))
        expect(memory.filter((name) => name.startsWith("mcp__memory__delete_"))).toEqual([])
        expect(memory).toContain("mcp__memory__create_entities")
        expect(memory.every((name) => name.startsWith("mcp__memory__") || McpManagementTools.isManagementTool(name)))
          .toBe(true)
        expect(memory.filter(McpManagementTools.isManagementTool)).toHaveLength(7)
        const one = AiSdk.toAiSdkTools(fleetTools, { filter: { tools: ["read_graph"], management: false } })
        expect(Object.keys(one)).toEqual(["mcp__memory__read_graph"])

        const model = new MockLanguageModelV3({
          doGenerate: [toolCalls(["ListMcpResources", {}]), answer("listed")]
        })
        yield* Effect.promise(() =>
          generateText({
            model,
            tools: AiSdk.toAiSdkTools(fleetTools, { filter: { servers: ["memory"] } }),
            prompt: "What resources are there?",
            stopWhen: stepCountIs(2)
          })
        )
        const listed = outputsIn(model, 1)["ListMcpResources"] as { type: string; value: string }
        expect(listed.type).toBe("text")
        expect(JSON.parse(listed.value).resources.map((resource: { server: string }) => resource.server)).toEqual([
          "memory"
        ])
      }),
    { timeout: hangGuard(60_000) }
  )
})
