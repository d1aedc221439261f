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
 * **Deferred.** `deferred(filter, { alwaysLoad })` gives a conversation `search_tools`
 * instead of every tool; what a search finds joins the toolkit on the next turn.
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
 * **The other direction.** `toolItems(toolkit)` serves an app's own @effect/ai toolkit as
 * MCP tools (`McpServer.fromItems`, or next to the fleet's through the gateway): each tool's
 * inputSchema is `Tool.getJsonSchema`'s, what providers are sent, and its arguments are
 * decoded by its parameters schema before its handler runs. What the handler returns is
 * encoded by the tool's success schema and sent as JSON text, plus `structuredContent` (and
 * the tool's `outputSchema`) when that schema encodes to an object; its failure, encoded by
 * the failure schema, is an `isError` result whatever the tool's failureMode, so the model
 * can read it; a defect is an `isError` result that says only that the tool failed (the
 * cause goes to the server's log).
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FleetTools from "./FleetTools.js"
import { traced } from "./internal/traced.js"
import type * as McpSchema from "./McpSchema.js"
import * as McpServer from "./McpServer.js"
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

// The toolkit of a selection's tools now, with their handlers.
const toolkitOf = (selection: FleetTools.Selection): Effect.Effect<Toolkit.WithHandler<Tools>> =>
  Effect.gen(function*() {
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
  Effect.flatMap(FleetTools.make, (fleet) => toolkitOf(fleet.select(filter)))

/**
 * Deferred tools for one conversation: the toolkit it gives (an Effect, resolved by every
 * turn as `toolkit`'s) holds `search_tools`, the management tools and the `alwaysLoad` ones
 * rather than every tool; the tools a search finds join it on the next turn (see
 * `FleetTools.deferred`). Make one per conversation: what its searches found is its own.
 *
 * @example
 * ```ts
 * const toolkit = yield* AiToolkit.deferred({ servers: ["memory"] }, { alwaysLoad: ["mcp__memory__read_graph"] })
 * let response = yield* chat.generateText({ prompt: "Remember that Ada likes tea", toolkit })
 * // the model calls search_tools { query: "store a fact" }; on the next turn it has the hits
 * response = yield* chat.generateText({ prompt: [], toolkit })
 * ```
 *
 * @since 0.4.0
 * @category constructors
 */
export const deferred = (
  filter?: FleetTools.Filter | undefined,
  options?: FleetTools.DeferredOptions | undefined
): Effect.Effect<Effect.Effect<Toolkit.WithHandler<Tools>>, never, ServerRegistry.ServerRegistry | Policy.Policy> =>
  Effect.map(FleetTools.make, (fleet) => toolkitOf(fleet.deferred(filter, options)))

// ---------------------------------------------------------------------------
// An app's own toolkit as MCP tools
// ---------------------------------------------------------------------------

// The hints a tool was given; @effect/ai's defaults are MCP's, so an unset one is left out.
const hintsOf = (tool: Tool.Any): McpSchema.ToolAnnotations | undefined => {
  const has = (tag: { readonly key: string }) => tool.annotations.unsafeMap.has(tag.key)
  const hints: { -readonly [K in keyof McpSchema.ToolAnnotations]: McpSchema.ToolAnnotations[K] } = {}
  if (has(Tool.Readonly)) hints.readOnlyHint = Context.get(tool.annotations, Tool.Readonly)
  if (has(Tool.Destructive)) hints.destructiveHint = Context.get(tool.annotations, Tool.Destructive)
  if (has(Tool.Idempotent)) hints.idempotentHint = Context.get(tool.annotations, Tool.Idempotent)
  if (has(Tool.OpenWorld)) hints.openWorldHint = Context.get(tool.annotations, Tool.OpenWorld)
  return Object.keys(hints).length === 0 ? undefined : hints
}

// The JSON Schema of a success schema that encodes to an object: the tool's outputSchema.
const outputSchemaOf = (success: Schema.Schema.All): McpSchema.JsonObject | undefined => {
  const json = Tool.getJsonSchemaFromSchemaAst(success.ast) as unknown as McpSchema.JsonObject
  return json.type === "object" ? json : undefined
}

// An encoded value as the text a client reads (nothing for a void success).
const jsonContent = (encoded: unknown): Array<McpSchema.ContentBlock> =>
  encoded === undefined ? [] : [{ type: "text", text: JSON.stringify(encoded) }]

const definitionOf = (tool: Tool.Any) => {
  const description = Tool.getDescription(tool as Tool.Tool<string, any>)
  const title = Context.getOption(tool.annotations, Tool.Title)
  const annotations = hintsOf(tool)
  const outputSchema = outputSchemaOf(tool.successSchema)
  return {
    name: tool.name,
    ...(title._tag === "Some" ? { title: title.value } : {}),
    ...(description === undefined ? {} : { description }),
    ...(outputSchema === undefined ? {} : { outputSchema }),
    ...(annotations === undefined ? {} : { annotations })
  }
}

// One tool of an app's toolkit, its handler run in its own context over the caller's.
const toolItem = (tool: Tool.Any, handler: Tool.Handler<string>, context: Context.Context<never>) => {
  const definition = definitionOf(tool)
  const structured = definition.outputSchema !== undefined
  const encodeSuccess = Schema.encodeUnknown(tool.successSchema as Schema.Schema<unknown, unknown>)
  const encodeFailure = Schema.encodeUnknown(tool.failureSchema as Schema.Schema<unknown, unknown>)
  const handlerContext = Context.merge(handler.context, context)
  const call = traced("AiToolkit.callTool")((params: unknown) =>
    Effect.suspend(() => handler.handler(params)).pipe(
      Effect.provide(handlerContext),
      Effect.matchEffect({
        onFailure: (error) =>
          Effect.map(encodeFailure(error), (encoded): McpSchema.CallToolResult => ({
            content: jsonContent(encoded),
            isError: true
          })),
        onSuccess: (value) =>
          Effect.map(encodeSuccess(value), (encoded): McpSchema.CallToolResult =>
            structured
              ? { content: jsonContent(encoded), structuredContent: encoded as McpSchema.JsonObject }
              : { content: jsonContent(encoded) })
      }),
      // A result its schema cannot encode is the app's bug, like a defect: the client is
      // told only that the tool failed; the cause goes to the server's log.
      Effect.orDie,
      Effect.catchAllDefect((defect) =>
        Effect.as(
          Effect.logError(`AiToolkit: the tool ${tool.name} failed`, defect),
          McpServer.toolError(`The tool ${tool.name} failed unexpectedly`)
        )
      )
    )
  )
  const item = McpServer.tool({
    ...definition,
    parameters: tool.parametersSchema as unknown as Schema.Schema<unknown, Record<string, unknown>>,
    handler: call
  })
  // The inputSchema providers are sent for this tool, rather than McpServer's own rendering.
  const inputSchema = Tool.getJsonSchema(tool as Tool.Tool<string, any>) as unknown as McpSchema.JsonObject
  return { ...item, tool: { ...item.tool, inputSchema } }
}

/**
 * An app's own `@effect/ai` toolkit as MCP tools, to serve with `McpServer.fromItems` (next
 * to plain `McpServer.tool`s) or next to the fleet's tools through the gateway. Needs the
 * toolkit's handlers (its `toLayer`) and what its tools require per request; the handlers
 * run in the context they were made in, over the one this Effect ran in. Provider-defined
 * tools, which a model provider runs, are left out. See the module's notes for how results
 * and failures are sent.
 *
 * @example
 * ```ts
 * const server = yield* McpServer.fromItems({
 *   serverInfo: { name: "my-app", version: "1.0.0" },
 *   tools: [...plainTools, ...(yield* AiToolkit.toolItems(MyToolkit))]
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolItems = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>
): Effect.Effect<
  ReadonlyArray<McpServer.ToolItem>,
  never,
  Tool.HandlersFor<Tools> | Tool.Requirements<Tools[keyof Tools]>
> =>
  Effect.flatMap(
    Effect.context<never>(),
    (context) =>
      Effect.forEach(Object.values(toolkit.tools).filter((tool) => Tool.isUserDefined(tool)), (tool) => {
        // Toolkit.toLayer keys each tool's handler by the tool's id, as Toolkit's own `handle` reads it.
        const handler = context.unsafeMap.get(tool.id) as Tool.Handler<string> | undefined
        return handler === undefined
          ? Effect.dieMessage(`AiToolkit.toolItems: no handler for the tool ${tool.name} in context`)
          : Effect.succeed(toolItem(tool, handler, context))
      })
  )
