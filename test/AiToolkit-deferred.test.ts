// Deferred tools in the @effect/ai bridge against real servers (agentFleet): a scripted
// LanguageModel is offered search_tools and the always-loaded tools, searches, and is offered
// the hits on the next turn, which it calls; a call by name before any search works too.
import * as Chat from "@effect/ai/Chat"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Response from "@effect/ai/Response"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as AiToolkit from "../src/AiToolkit.js"
import { agentFleet } from "./support/agentFleet.js"
import { hangGuard } from "./support/guard.js"

type Parts = Array<Response.PartEncoded>

const finish = (reason: "tool-calls" | "stop"): Response.PartEncoded => ({
  type: "finish",
  reason,
  usage: { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }
})

const call = (id: string, name: string, params: Record<string, unknown>): Parts => [
  { type: "tool-call", id, name, params },
  finish("tool-calls")
]

// A LanguageModel that plays `turns`, one per generateText, and keeps the tool names each was offered.
const scripted = (turns: ReadonlyArray<Parts>) =>
  Effect.gen(function*() {
    const offered: Array<Array<string>> = []
    const model = yield* LanguageModel.make({
      generateText: (options) =>
        Effect.sync(() => {
          offered.push(options.tools.map((tool) => tool.name))
          return turns[offered.length - 1] ?? [{ type: "text", text: "done" }, finish("stop")]
        }),
      streamText: () => Stream.die("the script does not stream")
    })
    return { offered, layer: Layer.succeed(LanguageModel.LanguageModel, model) }
  })

describe("AiToolkit.deferred (real servers)", () => {
  it.scopedLive(
    "search_tools first; its hits join the toolkit on the next turn and are called",
    () =>
      Effect.gen(function*() {
        const fleet = yield* agentFleet()
        const model = yield* scripted([
          call("1", "search_tools", { query: "add two numbers sum", limit: 2 }),
          call("2", "mcp__everything__get-sum", { a: 20, b: 22 })
        ])
        const toolkit = yield* AiToolkit.deferred(
          { servers: ["everything", "memory"] },
          { alwaysLoad: ["mcp__memory__read_graph"] }
        ).pipe(Effect.provide(fleet.context))
        const chat = yield* Chat.empty
        const turn = (prompt: string | []) => chat.generateText({ prompt, toolkit }).pipe(Effect.provide(model.layer))
        const first = yield* turn("What is 20 + 22?")
        const found = first.toolResults[0]!
        expect(found.isFailure).toBe(false)
        const answer = found.result as { text: string; structuredContent: { tools: Array<{ name: string }> } }
        expect(answer.structuredContent.tools.map((tool) => tool.name)).toContain("mcp__everything__get-sum")
        expect(answer.structuredContent.tools.length).toBeLessThanOrEqual(2)
        const second = yield* turn([])
        expect(second.toolResults[0]).toMatchObject({ name: "mcp__everything__get-sum", isFailure: false })
        expect(JSON.stringify(second.toolResults[0]!.result)).toContain("42")
        yield* turn([])

        // Turn 1: search_tools and the always-loaded tool only; turn 2 on: the hits too.
        expect(model.offered[0]!.sort()).toEqual(["mcp__memory__read_graph", "search_tools"])
        expect(model.offered[1]).toContain("mcp__everything__get-sum")
        expect(model.offered[1]!.filter((name) => name.startsWith("mcp__filesystem__"))).toEqual([])
        expect(model.offered[1]!.length).toBeLessThanOrEqual(4)
      }),
    hangGuard(60_000)
  )
})
