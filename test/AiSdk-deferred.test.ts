// Deferred tools in the AI SDK bridge against real servers (agentFleet): generateText with
// the SDK's mock model, `prepareStep` giving each step the active tools: search_tools and
// the always-loaded ones first, the hits from the step after the search on.
import { describe, expect, it } from "@effect/vitest"
import { generateText, stepCountIs } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import * as Effect from "effect/Effect"
import * as AiSdk from "../src/AiSdk.js"
import * as FleetTools from "../src/FleetTools.js"
import { agentFleet } from "./support/agentFleet.js"
import { hangGuard } from "./support/guard.js"
import { answer, toolCalls } from "./support/mockModel.js"

describe("AiSdk.toAiSdkDeferred (real servers)", () => {
  it.scopedLive(
    "the model is given search_tools first, then the hits it found, and calls them",
    () =>
      Effect.gen(function*() {
        const fleet = yield* agentFleet()
        const tools = yield* FleetTools.make.pipe(Effect.provide(fleet.context))
        const deferred = AiSdk.toAiSdkDeferred(tools, {
          filter: { servers: ["everything", "memory"] },
          alwaysLoad: ["mcp__memory__read_graph"]
        })
        expect(deferred.activeTools().sort()).toEqual(["mcp__memory__read_graph", "search_tools"])
        // Every selected tool is in the set, so a call by a known name works unfound.
        expect(Object.keys(deferred.tools)).toContain("mcp__everything__get-sum")
        expect(Object.keys(deferred.tools).some((name) => name.startsWith("mcp__filesystem__"))).toBe(false)

        const model = new MockLanguageModelV3({
          doGenerate: [
            toolCalls(["search_tools", { query: "add two numbers sum", limit: 2 }]),
            toolCalls(["mcp__everything__get-sum", { a: 40, b: 2 }]),
            answer("42")
          ]
        })
        const { steps } = yield* Effect.promise(() =>
          generateText({
            model,
            tools: deferred.tools,
            prepareStep: deferred.prepareStep,
            stopWhen: stepCountIs(5),
            prompt: "What is 40 + 2?"
          })
        )
        expect(steps).toHaveLength(3)
        const offered = model.doGenerateCalls.map((call) => (call.tools ?? []).map((tool) => tool.name).sort())
        expect(offered[0]).toEqual(["mcp__memory__read_graph", "search_tools"])
        expect(offered[1]).toContain("mcp__everything__get-sum")
        expect(offered[1]!.length).toBeLessThanOrEqual(4)
        const found = steps[0]!.toolResults[0]!.output as { structuredContent: { tools: Array<{ name: string }> } }
        expect(found.structuredContent.tools.map((tool) => tool.name)).toContain("mcp__everything__get-sum")
        expect(JSON.stringify(steps[1]!.toolResults[0]!.output)).toContain("42")
      }),
    hangGuard(60_000)
  )
})
