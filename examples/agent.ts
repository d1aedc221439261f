/**
 * An agent on @effect/ai over the quickstart fleet (examples/fleet.json), with no API key:
 * the LanguageModel is a scripted one that asks for three tool calls (on two servers, and
 * the ListMcpResources management tool), then answers from what they returned. The loop,
 * the toolkit and the fleet are what a real agent uses; only the model is played.
 *
 * To talk to a real model, provide a provider's layer instead of `ScriptedModel`, e.g.
 * with `@effect/ai-openai` (or `@effect/ai-anthropic`, the same way):
 *
 *   const Model = OpenAiLanguageModel.model("gpt-4.1").pipe(
 *     Layer.provide(OpenAiClient.layerConfig({ apiKey: Config.redacted("OPENAI_API_KEY") })),
 *     Layer.provide(NodeHttpClient.layerUndici)
 *   )
 *
 * Run it with `npx tsx examples/agent.ts`. With `--deferred`, the model is given deferred
 * tools (`AiToolkit.deferred`): `search_tools`, the management tools and the always-loaded
 * `mcp__memory__read_graph` instead of every tool; it searches, and the tools it finds are
 * offered on the next turn.
 */
import * as Chat from "@effect/ai/Chat"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import { NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { AiToolkit } from "../src/ai/index.js"
import { FleetConfig, McpManagementTools, ServerRegistry } from "../src/index.js"
import { NodeFleet } from "../src/node/index.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const usage = { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }

// The tool results in the prompt, by tool name: what a model reads back.
const toolResults = (prompt: Prompt.Prompt) =>
  new Map(
    prompt.content.flatMap((message) =>
      message.role === "tool" ? message.content.map((part) => [part.name, part.result] as const) : []
    )
  )

const deferred = process.argv.includes("--deferred")

// The deferred script: search, call the best hit on the next turn, answer from its result.
const deferredTurn = (prompt: Prompt.Prompt, offered: ReadonlyArray<string>): Array<Response.PartEncoded> => {
  const results = toolResults(prompt)
  const found = results.get("search_tools") as { structuredContent?: { tools: Array<{ name: string }> } } | undefined
  if (found === undefined) {
    console.log(`  offered: ${offered.join(", ")}`)
    return [
      { type: "tool-call", id: "1", name: "search_tools", params: { query: "echo a message back", limit: 3 } },
      { type: "finish", reason: "tool-calls", usage }
    ]
  }
  const best = found.structuredContent!.tools[0]!.name
  const echoed = results.get(best) as { text?: string } | undefined
  if (echoed === undefined) {
    console.log(`  offered: ${offered.join(", ")}`)
    return [
      { type: "tool-call", id: "2", name: best, params: { message: "hello from a deferred tool" } },
      { type: "finish", reason: "tool-calls", usage }
    ]
  }
  return [
    { type: "text", text: `Found ${best} by searching; it said "${echoed.text}".` },
    { type: "finish", reason: "stop", usage }
  ]
}

/** A deterministic model: first it asks for tools, then it answers from their results. */
const ScriptedModel = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: (options) =>
      Effect.sync((): Array<Response.PartEncoded> => {
        if (deferred) return deferredTurn(options.prompt, options.tools.map((tool) => tool.name))
        const results = toolResults(options.prompt)
        if (results.size === 0) {
          return [
            { type: "tool-call", id: "1", name: "mcp__everything__echo", params: { message: "hello from the agent" } },
            { type: "tool-call", id: "2", name: "mcp__filesystem__list_directory", params: { path: here } },
            { type: "tool-call", id: "3", name: "ListMcpResources", params: {} },
            { type: "finish", reason: "tool-calls", usage }
          ]
        }
        const text = (name: string) => (results.get(name) as { text?: string; error?: string }).text ?? "(failed)"
        const files = text("mcp__filesystem__list_directory").split("\n").length
        const resources = (JSON.parse(text("ListMcpResources")) as { resources: Array<unknown> }).resources.length
        return [
          {
            type: "text",
            text: `The everything server said "${text("mcp__everything__echo")}", this folder holds ${files} ` +
              `entries, and the fleet offers ${resources} resources.`
          },
          { type: "finish", reason: "stop", usage }
        ]
      }),
    streamText: () => Stream.die("the scripted model does not stream")
  })
)

// The agent loop: ask, run the tools the model calls, give it their results, until it answers.
const ask = (question: string) =>
  Effect.gen(function*() {
    const chat = yield* Chat.empty
    // Resolved by each turn: the model always gets the fleet's tools of that moment (deferred:
    // search_tools, the always-loaded ones and what this conversation's searches found).
    const toolkit = deferred
      ? yield* AiToolkit.deferred(undefined, { alwaysLoad: ["mcp__memory__read_graph"] })
      : AiToolkit.toolkit()
    let response = yield* chat.generateText({ prompt: question, toolkit })
    for (let turn = 1; response.toolCalls.length > 0 && turn < 10; turn++) {
      for (const result of response.toolResults) {
        const shown = JSON.stringify(result.result).slice(0, 100)
        console.log(`  ${result.isFailure ? "✗" : "✓"} ${result.name} → ${shown}`)
      }
      response = yield* chat.generateText({ prompt: [], toolkit })
    }
    return response.text
  })

const program = Effect.gen(function*() {
  const fleet = yield* ServerRegistry.ServerRegistry
  yield* fleet.awaitReady({ servers: ["everything", "memory", "filesystem"], timeout: "60 seconds" })
  const question = "What does the fleet have for me?"
  console.log(`> ${question}`)
  console.log(yield* ask(question))
})

// The fleet of examples/fleet.json, its policy block in force, and the management tools.
const Fleet = McpManagementTools.layer().pipe(
  Layer.provideMerge(FleetConfig.layerWithPolicy({ paths: [path.join(here, "fleet.json")] })),
  Layer.provideMerge(ServerRegistry.layer({ restart: { maxDelay: "2 seconds" } })),
  Layer.provide(NodeFleet.layer)
)

NodeRuntime.runMain(
  program.pipe(
    Effect.provide([ScriptedModel, Fleet]),
    // The broken 'github' server of fleet.json logs its failed starts; not this example's point.
    Logger.withMinimumLogLevel(LogLevel.Error)
  )
)
