/**
 * The fleet's tools as an AI SDK `ToolSet` (the `ai` package, v6), for `generateText` and
 * `streamText`. Imported from `mcp-fleet/ai-sdk`; `ai` is an optional peer dependency,
 * needed only here.
 *
 * Each tool is a dynamic tool whose `inputSchema` is `jsonSchema()` of the tool's own
 * inputSchema, unchanged. `execute` runs the call through the fleet (`FleetTools`, so the
 * Policy's rules, approval, limits and audit apply) on the runtime the FleetTools were made
 * in; the call's abort signal interrupts it, which cancels it at the server. It returns the
 * MCP result as the server sent it, and `toModelOutput` gives the model its text, images
 * and files (an `isError` result as an error text). A failure of the fleet (denied, timeout,
 * unavailable, a tool gone meanwhile) is thrown as the McpError, which the AI SDK hands
 * the model as the tool's error.
 *
 * The set holds the tools of the moment it is made: make it for each `generateText` call to
 * follow the catalog.
 *
 * Deferred tools (`toAiSdkDeferred`): the model is given `search_tools` instead of every
 * tool, and what it finds joins on the next step, through `prepareStep`'s `activeTools`.
 *
 * @since 0.1.0
 */
import type { Tool, ToolSet } from "ai"
import { dynamicTool, jsonSchema } from "ai"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import * as FleetTools from "./FleetTools.js"
import * as McpSchema from "./McpSchema.js"

/**
 * How the tool set is made.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Which tools to include. Default: every tool the Policy allows. */
  readonly filter?: FleetTools.Filter | undefined
}

/**
 * What the model is given of a tool's result.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelOutput = Awaited<ReturnType<NonNullable<Tool["toModelOutput"]>>>

type Part = Extract<ModelOutput, { type: "content" }>["value"][number]

const partsOf = (block: McpSchema.ContentBlock): Array<Part> => {
  if (McpSchema.isKnownContentBlock(block)) {
    switch (block.type) {
      case "image":
        return [{ type: "image-data", data: block.data, mediaType: block.mimeType }]
      case "audio":
        return [{ type: "file-data", data: block.data, mediaType: block.mimeType }]
      case "resource":
        if ("blob" in block.resource) {
          return [
            { type: "text", text: `[resource ${block.resource.uri}]` },
            {
              type: "file-data",
              data: block.resource.blob,
              mediaType: block.resource.mimeType ?? "application/octet-stream"
            }
          ]
        }
    }
  }
  return [{ type: "text", text: FleetTools.blockText(block) }]
}

/**
 * A tool result as the model gets it: `error-text` for an `isError` result; plain text when
 * everything is text; otherwise text, image and file parts. `structuredContent` is added as
 * JSON text when no content block carries it.
 *
 * @since 0.1.0
 * @category utils
 */
export const toModelOutput = (result: McpSchema.CallToolResult): ModelOutput => {
  const parts = result.content.flatMap(partsOf)
  if (result.structuredContent !== undefined && parts.length === 0) {
    parts.push({ type: "text", text: JSON.stringify(result.structuredContent) })
  }
  const texts = parts.every((part) => part.type === "text")
    ? parts.map((part) => (part as { readonly text: string }).text).join("\n")
    : undefined
  if (result.isError === true) return { type: "error-text", value: texts ?? FleetTools.resultText(result) }
  return texts === undefined ? { type: "content", value: parts } : { type: "text", value: texts }
}

/**
 * The fleet's tools, as the Policy and the filter allow them now, as an AI SDK ToolSet.
 *
 * @example
 * ```ts
 * const fleet = await runtime.runPromise(FleetTools.make)
 * const { text } = await generateText({
 *   model,
 *   tools: toAiSdkTools(fleet, { filter: { servers: ["memory"] } }),
 *   stopWhen: stepCountIs(5),
 *   prompt: "What is in my memory graph?"
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toAiSdkTools = (fleet: FleetTools.FleetTools, options: Options = {}): ToolSet => {
  const selection = fleet.select(options.filter)
  return toolSet(fleet, selection, Runtime.runSync(fleet.runtime)(selection.tools))
}

// `tools` as a ToolSet whose calls go through `selection`.
const toolSet = (
  fleet: FleetTools.FleetTools,
  selection: FleetTools.Selection,
  given: ReadonlyArray<FleetTools.FleetTool>
): ToolSet => {
  const run = Runtime.runPromiseExit(fleet.runtime)
  // No prototype: the SDK looks a model's tool call up by name, and a model naming
  // `constructor` must be told there is no such tool rather than find Object's.
  const tools: ToolSet = Object.create(null)
  for (const { name, server, tool } of given) {
    tools[name] = dynamicTool({
      ...(tool.description === undefined ? {} : { description: tool.description }),
      ...(tool.title === undefined ? {} : { title: tool.title }),
      inputSchema: jsonSchema(tool.inputSchema as Parameters<typeof jsonSchema>[0]),
      // Not sent to the model: where the tool comes from, for the app's own use.
      metadata: {
        ...(server === undefined ? {} : { server }),
        tool: tool.name,
        ...(tool.annotations === undefined ? {} : { annotations: { ...tool.annotations } })
      },
      execute: async (input, { abortSignal }) => {
        const exit = await run(
          selection.call(name, input as Record<string, unknown>),
          abortSignal === undefined ? undefined : { signal: abortSignal }
        )
        if (Exit.isSuccess(exit)) return exit.value
        // Aborted: the call was cancelled at the server; the AI SDK expects the signal's reason.
        if (abortSignal?.aborted === true) throw abortSignal.reason
        throw Cause.squash(exit.cause)
      },
      toModelOutput: ({ output }) => toModelOutput(output as McpSchema.CallToolResult)
    })
  }
  return tools
}

/**
 * Deferred tools for one `generateText` (or `streamText`) call, through its step hooks.
 *
 * @since 0.4.0
 * @category models
 */
export interface Deferred {
  /** Every selected tool and `search_tools`: pass as `tools` (a model may call any by name). */
  readonly tools: ToolSet
  /** The tools the model is given now: `search_tools`, the always-loaded ones, those found so far. */
  readonly activeTools: () => Array<string>
  /** Pass as `prepareStep`: each step gives the model `activeTools()`, so a hit joins on the next step. */
  readonly prepareStep: () => { activeTools: Array<string> }
}

/**
 * Deferred tools as the AI SDK takes them: the model is given `search_tools` (and the
 * management tools, and the `alwaysLoad` ones) instead of every tool, and what a search
 * finds joins on the next step, through `prepareStep`'s `activeTools`. The `tools` hold
 * every selected tool, so a call of one the model knows by name works before it is found.
 * Make one per conversation: what its searches found is its own.
 *
 * @example
 * ```ts
 * const deferred = toAiSdkDeferred(fleet, { filter: { servers: ["memory"] } })
 * const { text } = await generateText({
 *   model,
 *   tools: deferred.tools,
 *   prepareStep: deferred.prepareStep,
 *   stopWhen: stepCountIs(5),
 *   prompt: "Remember that Ada likes tea."
 * })
 * ```
 *
 * @since 0.4.0
 * @category constructors
 */
export const toAiSdkDeferred = (
  fleet: FleetTools.FleetTools,
  options: Options & FleetTools.DeferredOptions = {}
): Deferred => {
  const runSync = Runtime.runSync(fleet.runtime)
  const selection = fleet.deferred(options.filter, options)
  const every = runSync(fleet.select(options.filter).tools)
  const tools = toolSet(fleet, selection, [{
    name: FleetTools.SEARCH_TOOLS,
    server: undefined,
    tool: FleetTools.searchToolsTool
  }, ...every])
  const activeTools = () => runSync(selection.tools).map((tool) => tool.name)
  return { tools, activeTools, prepareStep: () => ({ activeTools: activeTools() }) }
}
