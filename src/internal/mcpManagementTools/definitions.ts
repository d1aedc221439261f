/**
 * The resource and poll management tools as a model sees them (`load_skill` is in
 * `skills.ts`): their names, descriptions and hints, and their parameters as Schemas. The
 * inputSchema each tool advertises is made from the same Schema that decodes its arguments,
 * so the two never disagree.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"

const Server = Schema.String.annotations({ description: "A server of the fleet, as ListMcpResources names it" })
const Uri = Schema.String.annotations({ description: "The resource's URI" })

/** `ListMcpResources`: resources and templates, of one server or all. */
export const ListMcpResources = Schema.Struct({
  server: Schema.optional(Server.annotations({ description: "Only this server's resources. Default: every server" }))
})

/** `ReadMcpResource`: one resource's contents. */
export const ReadMcpResource = Schema.Struct({ server: Server, uri: Uri })

/** `SubscribeMcpResource`: updates of one resource. */
export const SubscribeMcpResource = Schema.Struct({ server: Server, uri: Uri })

/** `UnsubscribeMcpResource`: by id, or by server and URI. */
export const UnsubscribeMcpResource = Schema.Struct({
  subscriptionId: Schema.optional(Schema.String.annotations({ description: "The id SubscribeMcpResource gave" })),
  server: Schema.optional(Server),
  uri: Schema.optional(Uri)
})

/** `SubscribePolling`: a tool or resource fetched on an interval. */
export const SubscribePolling = Schema.Struct({
  type: Schema.Literal("tool", "resource").annotations({ description: "Poll a tool call or a resource read" }),
  server: Server,
  toolName: Schema.optional(
    Schema.String.annotations({ description: "type tool: the tool, by its name on the server or its full name" })
  ),
  uri: Schema.optional(Uri.annotations({ description: "type resource: the resource's URI" })),
  arguments: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
      jsonSchema: { type: "object", description: "type tool: the arguments of each call" }
    })
  ),
  intervalMs: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1000)).annotations({
    jsonSchema: { type: "integer", minimum: 1000, description: "Milliseconds between fetches, at least 1000" }
  })
})

/** `UnsubscribePolling`: stops a poll. */
export const UnsubscribePolling = Schema.Struct({
  pollId: Schema.String.annotations({ description: "The id SubscribePolling gave" })
})

const hints = (idempotent: boolean): McpSchema.ToolAnnotations => ({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: idempotent,
  openWorldHint: false
})

/** A management tool's definition: read-only, its inputSchema made from `parameters`. */
export const define = (
  name: string,
  description: string,
  parameters: Schema.Schema.AnyNoContext,
  idempotent: boolean
): McpSchema.Tool => ({
  name,
  description,
  inputSchema: JSONSchema.fromAST(parameters.ast, {
    definitions: {},
    topLevelReferenceStrategy: "skip"
  }) as unknown as McpSchema.Tool["inputSchema"],
  annotations: hints(idempotent)
})

/** The definitions, in the order they are listed. */
export const tools: ReadonlyArray<McpSchema.Tool> = [
  define(
    "ListMcpResources",
    "Lists the resources (and resource templates) the fleet's MCP servers offer, with the server of each.",
    ListMcpResources,
    true
  ),
  define("ReadMcpResource", "Reads a resource of an MCP server by its URI.", ReadMcpResource, true),
  define(
    "SubscribeMcpResource",
    "Subscribes to updates of a resource; returns a subscriptionId. The host is told when it changes.",
    SubscribeMcpResource,
    true
  ),
  define(
    "UnsubscribeMcpResource",
    "Ends a resource subscription, named by its subscriptionId or by server and uri.",
    UnsubscribeMcpResource,
    true
  ),
  define(
    "SubscribePolling",
    "Calls a tool or reads a resource every intervalMs (at least 1000) and tells the host when the result " +
      "changes; returns a pollId and the current result.",
    SubscribePolling,
    false
  ),
  define("UnsubscribePolling", "Stops a poll, named by its pollId.", UnsubscribePolling, true)
]

/** The names of the management tools. */
export const names: ReadonlySet<string> = new Set(tools.map((tool) => tool.name))

/** Decodes a tool's arguments; bad ones fail with a Validation reason naming the tool. */
export const decode = <A, I>(
  name: string,
  schema: Schema.Schema<A, I>,
  args: Record<string, unknown> | undefined
) =>
  Schema.decodeUnknown(schema)(args ?? {}).pipe(
    Effect.mapError((error) =>
      McpError.validation(undefined, {
        method: name,
        message: ParseResult.TreeFormatter.formatErrorSync(error)
      })
    )
  )

/** A tool's answer as JSON: the text a model reads, and the same as `structuredContent`. */
export const jsonResult = (value: Record<string, unknown>): McpSchema.CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  structuredContent: value
})
