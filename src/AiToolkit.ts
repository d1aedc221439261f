/**
 * The fleet's tools as an `@effect/ai` toolkit (the 3.x line, `@effect/ai` 0.37), so that
 * `LanguageModel.generateText({ prompt, toolkit })` calls them. Imported from
 * `mcp-fleet/ai`; `@effect/ai` is an optional peer dependency, needed only here.
 *
 * **Live.** `toolkit(filter)` is an Effect that `generateText` resolves on every call (every
 * turn of an agent loop): each turn offers the tools the fleet and the Policy allow at that
 * moment, so servers joining and leaving, `list_changed` and policy edits reach the model
 * without the program being rebuilt. A tool that goes away between the turn's start and the
 * call answers with a failure the model reads (a NotFound reason), not a defect.
 *
 * **Schemas.** @effect/ai 0.37 has no dynamic tools, so each tool is made with `Tool.make`
 * and given parameters that accept any JSON object and carry the tool's inputSchema as
 * their `jsonSchema` annotation. `Tool.getJsonSchema` (what providers send) returns an
 * overriding annotation as it is, so the model sees the inputSchema unchanged, the very
 * object the server sent. The arguments are checked against it by the Policy, as for any
 * call.
 *
 * **Results.** Every tool has `failureMode: "return"`: nothing a call does ends the
 * conversation. A result becomes `{ text, structuredContent? }`, its text being the content
 * blocks as `FleetTools.blockText` renders them (images, audio and blobs become a note, since
 * @effect/ai passes tool results as JSON); an `isError` result and a fleet failure (denied,
 * timeout, unavailable, invalid arguments, gone) become `{ error, reason }`, `reason` being
 * `isError` or the McpError's reason tag.
 *
 * **Policy.** Calls go through `Policy.callTool`: denied tools are not offered, `ask` goes to
 * the Approval service, limits and the audit log apply. The tool annotations (title,
 * readOnly, destructive, idempotent, openWorld) are carried over as @effect/ai's.
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FleetTools from "./FleetTools.js"
import type * as McpSchema from "./McpSchema.js"
import type * as Policy from "./Policy.js"
import type * as ServerRegistry from "./ServerRegistry.js"

/**
 * What the model reads of a call that worked.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Success = Schema.Struct({
  text: Schema.String,
  structuredContent: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "FleetToolSuccess" })

/**
 * What the model reads of a call that failed: the message, and `isError` (the tool said so)
 * or the McpError's reason (`Denied`, `Timeout`, `Unavailable`, `NotFound`, ...).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Failure = Schema.Struct({
  error: Schema.String,
  reason: Schema.String,
  structuredContent: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "FleetToolFailure" })

/**
 * Any JSON object; its JSON Schema is the tool's inputSchema (see the module's notes).
 *
 * @since 0.1.0
 * @category schemas
 */
export const parameters = (inputSchema: McpSchema.Tool["inputSchema"]) =>
  Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({
    jsonSchema: inputSchema
  })

/**
 * One of the fleet's tools as an @effect/ai tool.
 *
 * @since 0.1.0
 * @category models
 */
export interface FleetAiTool extends
  Tool.Tool<string, {
    readonly parameters: ReturnType<typeof parameters>
    readonly success: typeof Success
    readonly failure: typeof Failure
    readonly failureMode: "return"
  }>
{}

/**
 * The tools of a fleet toolkit, by name.
 *
 * @since 0.1.0
 * @category models
 */
export type Tools = Record<string, FleetAiTool>

const annotate = (tool: FleetAiTool, definition: McpSchema.Tool): FleetAiTool => {
  const hints = definition.annotations
  const title = definition.title ?? hints?.title
  let annotated = title === undefined ? tool : tool.annotate(Tool.Title, title)
  if (hints?.readOnlyHint !== undefined) annotated = annotated.annotate(Tool.Readonly, hints.readOnlyHint)
  if (hints?.destructiveHint !== undefined) annotated = annotated.annotate(Tool.Destructive, hints.destructiveHint)
  if (hints?.idempotentHint !== undefined) annotated = annotated.annotate(Tool.Idempotent, hints.idempotentHint)
  if (hints?.openWorldHint !== undefined) annotated = annotated.annotate(Tool.OpenWorld, hints.openWorldHint)
  return annotated
}

/**
 * One of the fleet's tools as an @effect/ai tool: its qualified name, description,
 * inputSchema and annotations.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toAiTool = (tool: FleetTools.FleetTool): FleetAiTool =>
  annotate(
    Tool.make(tool.name, {
      description: tool.tool.description,
      success: Success,
      failure: Failure,
      failureMode: "return"
    }).setParameters(parameters(tool.tool.inputSchema)),
    tool.tool
  )

const structured = (result: McpSchema.CallToolResult) =>
  result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }

// A call as the model reads it: a failure for an isError result or a failed call.
const handler = (selection: FleetTools.Selection, name: string) => (params: Record<string, unknown>) =>
  selection.call(name, params).pipe(
    Effect.matchEffect({
      onFailure: (error) => Effect.fail({ error: error.message, reason: error.reason._tag }),
      onSuccess: (result) =>
        result.isError === true
          ? Effect.fail({ error: FleetTools.resultText(result), reason: "isError", ...structured(result) })
          : Effect.succeed({ text: FleetTools.resultText(result), ...structured(result) })
    })
  )

/**
 * The fleet's tools, as the Policy and `filter` allow them now, as an @effect/ai toolkit
 * with its handlers: pass it as `toolkit` to `LanguageModel.generateText` (or `streamText`,
 * `Chat`), which resolves it anew on every call. Includes the management tools when the
 * McpManagementTools service is in context (unless `filter.management` is false).
 *
 * @example
 * ```ts
 * const response = yield* LanguageModel.generateText({
 *   prompt: "What is in my memory graph?",
 *   toolkit: AiToolkit.toolkit({ servers: ["memory"] })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolkit = (
  filter?: FleetTools.Filter | undefined
): Effect.Effect<Toolkit.WithHandler<Tools>, never, ServerRegistry.ServerRegistry | Policy.Policy> =>
  Effect.gen(function*() {
    const selection = (yield* FleetTools.make).select(filter)
    const tools = yield* selection.tools
    const kit = Toolkit.make(...tools.map(toAiTool)) as unknown as Toolkit.Toolkit<Tools>
    // @effect/ai looks a model's tool call up in this record: without a prototype, a call of
    // `constructor` is an unknown tool (MalformedOutput) rather than Object's (a defect).
    Object.setPrototypeOf(kit.tools, null)
    const handlers: Record<string, ReturnType<typeof handler>> = {}
    for (const tool of tools) handlers[tool.name] = handler(selection, tool.name)
    const context = yield* kit.toContext(handlers as Toolkit.HandlersFrom<Tools>)
    return yield* Effect.provide(kit, context)
  })
