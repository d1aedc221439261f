/**
 * The quickstart fleet (examples/fleet.json) as tools of the AI SDK, in plain async code,
 * with no API key: the model is the SDK's own mock (`MockLanguageModelV3` from `ai/test`),
 * scripted to call two tools on two servers and then answer from their results.
 * `generateText` runs the loop: it calls the tools through the fleet (and its policy) and
 * gives the model their results.
 *
 * To talk to a real model, pass a provider's model instead of `model`, e.g.
 * `openai("gpt-4.1")` from `@ai-sdk/openai` or `anthropic("claude-sonnet-4-5")` from
 * `@ai-sdk/anthropic`.
 *
 * Run it with `npx tsx examples/ai-sdk.ts`. With `--deferred`, the model is given deferred
 * tools (`AiSdk.toAiSdkDeferred`): `search_tools` and the always-loaded
 * `mcp__memory__read_graph` instead of every tool; `prepareStep` gives each step the tools
 * found so far, so the model searches, then calls what it found.
 */
import { generateText, stepCountIs } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { AiSdk } from "../src/ai-sdk/index.js"
import { FleetConfig, FleetTools, ServerRegistry } from "../src/index.js"
import { NodeFleet } from "../src/node/index.js"

const here = path.dirname(fileURLToPath(import.meta.url))

// The fleet of examples/fleet.json with its policy, as a runtime plain code can use.
const runtime = ManagedRuntime.make(
  FleetConfig.layerWithPolicy({ paths: [path.join(here, "fleet.json")] }).pipe(
    Layer.provideMerge(ServerRegistry.layer({ restart: { maxDelay: "2 seconds" } })),
    Layer.provide(NodeFleet.layer),
    // The broken 'github' server of fleet.json logs its failed starts; not this example's point.
    Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
  )
)

const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 0, text: 0, reasoning: undefined }
}

const finished = (text: string) => ({
  content: [{ type: "text" as const, text }],
  finishReason: { unified: "stop" as const, raw: undefined },
  usage,
  warnings: []
})

// The deferred script: search, call the best hit in the next step, answer from its result.
const deferredModel = new MockLanguageModelV3({
  doGenerate: async ({ prompt, tools }) => {
    console.log(`  offered: ${(tools ?? []).map((tool) => tool.name).join(", ")}`)
    const outputs = new Map(
      prompt.flatMap((message) => message.role === "tool" ? message.content : []).flatMap((part) =>
        part.type === "tool-result" ? [[part.toolName, part.output] as const] : []
      )
    )
    const found = outputs.get("search_tools")
    if (found === undefined) {
      return {
        content: [{
          type: "tool-call",
          toolCallId: "1",
          toolName: "search_tools",
          input: "{\"query\":\"echo a message back\"}"
        }],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: []
      }
    }
    const best =
      (JSON.parse(found.type === "text" ? found.value : "{}") as { tools: Array<{ name: string }> }).tools[0]!.name
    const echoed = outputs.get(best)
    if (echoed === undefined) {
      return {
        content: [{ type: "tool-call", toolCallId: "2", toolName: best, input: "{\"message\":\"hi\"}" }],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: []
      }
    }
    return finished(`Found ${best} by searching; it said ${echoed.type === "text" ? echoed.value : "?"}`)
  }
})

// A deterministic model: tool calls first, then an answer made of what the tools returned.
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const results = prompt.flatMap((message) => message.role === "tool" ? message.content : [])
    if (results.length === 0) {
      return {
        content: [
          { type: "tool-call", toolCallId: "1", toolName: "mcp__everything__echo", input: "{\"message\":\"hi\"}" },
          { type: "tool-call", toolCallId: "2", toolName: "mcp__memory__read_graph", input: "{}" }
        ],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: []
      }
    }
    const outputs = results.map((part) =>
      part.type === "tool-result" && part.output.type === "text" ? `${part.toolName}: ${part.output.value}` : ""
    )
    return {
      content: [{ type: "text", text: `The tools said:\n${outputs.join("\n")}` }],
      finishReason: { unified: "stop", raw: undefined },
      usage,
      warnings: []
    }
  }
})

const fleet = await runtime.runPromise(Effect.gen(function*() {
  const registry = yield* ServerRegistry.ServerRegistry
  yield* registry.awaitReady({ servers: ["everything", "memory"], timeout: "60 seconds" })
  return yield* FleetTools.make
}))

const filter = { servers: ["everything", "memory"] }
// Deferred: one per conversation; its prepareStep gives each step what its searches found.
const deferred = process.argv.includes("--deferred")
  ? AiSdk.toAiSdkDeferred(fleet, { filter, alwaysLoad: ["mcp__memory__read_graph"] })
  : undefined
const { steps, text } = await generateText({
  ...(deferred === undefined
    // Made for each call, so the model gets the tools of the moment.
    ? { model, tools: AiSdk.toAiSdkTools(fleet, { filter }) }
    : { model: deferredModel, tools: deferred.tools, prepareStep: deferred.prepareStep }),
  stopWhen: stepCountIs(5),
  prompt: "Say hi and tell me what my memory holds."
})
console.log(`${steps.length} steps; ${steps[0]!.toolCalls.length} tool calls in the first`)
console.log(text)
await runtime.dispose()
