/**
 * MCP message schemas for the client side of protocol revisions 2024-11-05, 2025-03-26,
 * 2025-06-18 and 2025-11-25: one superset in which every field a later revision added is
 * optional. Decoded values are plain JSON objects (Type and Encoded are identical); decode
 * with `parseOptions` (or `decodeUnknown`) so unknown fields survive at every depth.
 *
 * A section of its own holds what the client and the server need of the modern revision
 * (2026-07-28): `server/discover`, the `_meta` keys of a request, caching hints, the errors
 * -32020 to -32022, the server's revision and the methods it adds, and listen filters.
 *
 * @since 0.1.0
 */
import type * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { LiteralValue, ParseOptions } from "effect/SchemaAST"
import { struct } from "./internal/mcpSchema/struct.js"
import { RequestId } from "./JsonRpc.js"

// ---------------------------------------------------------------------------
// Protocol revisions and decoding
// ---------------------------------------------------------------------------

/**
 * The newest protocol revision this library speaks.
 *
 * @since 0.1.0
 */
export const LATEST_PROTOCOL_VERSION = "2025-11-25"

/**
 * Every protocol revision this library speaks, newest first.
 *
 * @since 0.1.0
 */
export const SUPPORTED_PROTOCOL_VERSIONS = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05"
] as const

/**
 * One of the supported protocol revisions.
 *
 * @since 0.1.0
 */
export const ProtocolVersion = Schema.Literal(...SUPPORTED_PROTOCOL_VERSIONS).annotations({
  identifier: "ProtocolVersion"
})

/**
 * @since 0.1.0
 */
export type ProtocolVersion = typeof ProtocolVersion.Type

/**
 * Options for decoding MCP messages: unknown fields are kept (a gateway passes messages
 * through), keys keep their input order (so re-encoding is byte-for-byte), and a missing
 * required key is an error even when its schema is `Unknown`.
 *
 * @since 0.1.0
 */
export const parseOptions: ParseOptions = {
  onExcessProperty: "preserve",
  propertyOrder: "original",
  exact: true
}

/**
 * Decode an unknown value with `parseOptions`, returning an `Either`. The decoder is compiled
 * on its first use: modules define theirs up front, and most never run in a given process.
 *
 * @since 0.1.0
 */
export const decodeUnknown = <A, I>(schema: Schema.Schema<A, I, never>) => {
  let compiled: ReturnType<typeof Schema.decodeUnknownEither<A, I>> | undefined
  return (u: unknown, overrideOptions?: ParseOptions): Either.Either<A, ParseResult.ParseError> =>
    (compiled ??= Schema.decodeUnknownEither(schema, parseOptions))(u, overrideOptions)
}

// ---------------------------------------------------------------------------
// Common types
// ---------------------------------------------------------------------------

/**
 * Any JSON object: JSON Schemas, structured content, tool arguments, `_meta`.
 *
 * @since 0.1.0
 */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "JsonObject"
})

/**
 * @since 0.1.0
 */
export type JsonObject = typeof JsonObject.Type

// The optional fields most structs share, built once: each `Schema.optional` makes a union
// and two classes (some 10 KB at import), and these few came up over 70 times.
const optionalString = Schema.optional(Schema.String)
const optionalBoolean = Schema.optional(Schema.Boolean)
const optionalNumber = Schema.optional(Schema.Number)
const optionalJsonObject = Schema.optional(JsonObject)
const optionalStrings = Schema.optional(Schema.Array(Schema.String))

/**
 * An opaque pagination cursor.
 *
 * @since 0.1.0
 */
export const Cursor = Schema.String.annotations({ identifier: "Cursor" })

/**
 * A token tying `notifications/progress` to the request that asked for it.
 *
 * @since 0.1.0
 */
export const ProgressToken = Schema.Union(Schema.String, Schema.Int).annotations({
  identifier: "ProgressToken"
})

/**
 * @since 0.1.0
 */
export type ProgressToken = typeof ProgressToken.Type

/**
 * The sender or recipient of a message: `user` or `assistant`.
 *
 * @since 0.1.0
 */
export const Role = Schema.Literal("user", "assistant").annotations({ identifier: "Role" })

/**
 * @since 0.1.0
 */
export type Role = typeof Role.Type

/**
 * The `_meta` of request params: an open object that may carry a `progressToken`.
 *
 * @since 0.1.0
 */
export const RequestMeta = struct(
  { progressToken: Schema.optional(ProgressToken) },
  { identifier: "RequestMeta" },
  JsonObject
)

/**
 * @since 0.1.0
 */
export interface RequestMeta extends Schema.Schema.Type<typeof RequestMeta> {}

const metaFields = { _meta: optionalJsonObject }
const requestParamsFields = { _meta: Schema.optional(RequestMeta) }

/**
 * Params of a notification that carries nothing but `_meta`.
 *
 * @since 0.1.0
 */
export const NotificationParams = struct(metaFields, { identifier: "NotificationParams" })

/**
 * @since 0.1.0
 */
export interface NotificationParams extends Schema.Schema.Type<typeof NotificationParams> {}

/**
 * A result that signals success and carries no data (ping, subscribe, setLevel, ...).
 *
 * @since 0.1.0
 */
export const EmptyResult = struct(metaFields, { identifier: "EmptyResult" })

/**
 * @since 0.1.0
 */
export interface EmptyResult extends Schema.Schema.Type<typeof EmptyResult> {}

/**
 * Params of a paginated list request (`tools/list`, `resources/list`, ...).
 *
 * @since 0.1.0
 */
export const PaginatedRequestParams = struct({
  ...requestParamsFields,
  cursor: Schema.optional(Cursor)
}, { identifier: "PaginatedRequestParams" })

/**
 * @since 0.1.0
 */
export interface PaginatedRequestParams extends Schema.Schema.Type<typeof PaginatedRequestParams> {}

/** The shape shared by every paginated list result: `_meta`, `nextCursor` and the page. */
const paginatedResult = <Fields extends Schema.Struct.Fields>(page: Fields) =>
  struct({ ...metaFields, nextCursor: Schema.optional(Cursor), ...page })

/**
 * An icon a client may display (added in 2025-11-25).
 *
 * @since 0.1.0
 */
export const Icon = struct({
  src: Schema.String,
  mimeType: optionalString,
  sizes: optionalStrings,
  theme: Schema.optional(Schema.Literal("light", "dark"))
}, { identifier: "Icon" })

/**
 * @since 0.1.0
 */
export interface Icon extends Schema.Schema.Type<typeof Icon> {}

// `title` arrived in 2025-06-18, `icons` in 2025-11-25.
const baseMetadataFields = { name: Schema.String, title: optionalString }
const iconsFields = { icons: Schema.optional(Schema.Array(Icon)) }

/**
 * Name and version of an MCP client or server.
 *
 * @since 0.1.0
 */
export const Implementation = struct({
  ...baseMetadataFields,
  version: Schema.String,
  ...iconsFields,
  // description and websiteUrl: 2025-11-25
  description: optionalString,
  websiteUrl: optionalString
}, { identifier: "Implementation" })

/**
 * @since 0.1.0
 */
export interface Implementation extends Schema.Schema.Type<typeof Implementation> {}

// ---------------------------------------------------------------------------
// Capabilities and initialization
// ---------------------------------------------------------------------------

const listChangedFields = { listChanged: optionalBoolean }
const experimentalField = {
  experimental: Schema.optional(Schema.Record({ key: Schema.String, value: JsonObject }))
}
// Task support (2025-11-25): which of tasks/list, tasks/cancel, and which request types.
const tasksCapability = <Requests extends Schema.Struct.Fields>(requests: Requests) =>
  struct({
    list: optionalJsonObject,
    cancel: optionalJsonObject,
    requests: Schema.optional(struct(requests))
  })

/**
 * What a client supports. An open object: clients may declare capabilities of their own.
 *
 * @since 0.1.0
 */
export const ClientCapabilities = struct(
  {
    ...experimentalField,
    roots: Schema.optional(struct(listChangedFields)),
    // `sampling` was a bare object until 2025-11-25 added `context` and `tools`.
    sampling: Schema.optional(struct({
      context: optionalJsonObject,
      tools: optionalJsonObject
    })),
    // `elicitation`: 2025-06-18 (bare object); `form` / `url` modes: 2025-11-25.
    elicitation: Schema.optional(struct({
      form: optionalJsonObject,
      url: optionalJsonObject
    })),
    tasks: Schema.optional(tasksCapability({
      sampling: Schema.optional(struct({ createMessage: optionalJsonObject })),
      elicitation: Schema.optional(struct({ create: optionalJsonObject }))
    }))
  },
  { identifier: "ClientCapabilities" },
  JsonObject
)

/**
 * @since 0.1.0
 */
export interface ClientCapabilities extends Schema.Schema.Type<typeof ClientCapabilities> {}

/**
 * What a server supports. An open object: servers may declare capabilities of their own.
 *
 * @since 0.1.0
 */
export const ServerCapabilities = struct(
  {
    ...experimentalField,
    logging: optionalJsonObject,
    completions: optionalJsonObject, // 2025-03-26
    prompts: Schema.optional(struct(listChangedFields)),
    resources: Schema.optional(struct({
      subscribe: optionalBoolean,
      ...listChangedFields
    })),
    tools: Schema.optional(struct(listChangedFields)),
    tasks: Schema.optional(tasksCapability({
      tools: Schema.optional(struct({ call: optionalJsonObject }))
    }))
  },
  { identifier: "ServerCapabilities" },
  JsonObject
)

/**
 * @since 0.1.0
 */
export interface ServerCapabilities extends Schema.Schema.Type<typeof ServerCapabilities> {}

/**
 * Params of `initialize`.
 *
 * @since 0.1.0
 */
export const InitializeRequestParams = struct({
  ...requestParamsFields,
  // A plain string, not `ProtocolVersion`: the peer may name a revision we do not speak.
  protocolVersion: Schema.String,
  capabilities: ClientCapabilities,
  clientInfo: Implementation
}, { identifier: "InitializeRequestParams" })

/**
 * @since 0.1.0
 */
export interface InitializeRequestParams extends Schema.Schema.Type<typeof InitializeRequestParams> {}

/**
 * The server's answer to `initialize`.
 *
 * @since 0.1.0
 */
export const InitializeResult = struct({
  ...metaFields,
  protocolVersion: Schema.String,
  capabilities: ServerCapabilities,
  serverInfo: Implementation,
  instructions: optionalString
}, { identifier: "InitializeResult" })

/**
 * @since 0.1.0
 */
export interface InitializeResult extends Schema.Schema.Type<typeof InitializeResult> {}

// ---------------------------------------------------------------------------
// Content
// ---------------------------------------------------------------------------

/**
 * Hints for the client about how to use or show an object.
 *
 * @since 0.1.0
 */
export const Annotations = struct({
  audience: Schema.optional(Schema.Array(Role)),
  priority: optionalNumber,
  lastModified: optionalString // 2025-06-18
}, { identifier: "Annotations" })

/**
 * @since 0.1.0
 */
export interface Annotations extends Schema.Schema.Type<typeof Annotations> {}

// Content `_meta` arrived in 2025-06-18.
const annotatedFields = { annotations: Schema.optional(Annotations), ...metaFields }

/**
 * Text content.
 *
 * @since 0.1.0
 */
export const TextContent = struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  ...annotatedFields
}, { identifier: "TextContent" })

/**
 * @since 0.1.0
 */
export interface TextContent extends Schema.Schema.Type<typeof TextContent> {}

/**
 * A base64-encoded image.
 *
 * @since 0.1.0
 */
export const ImageContent = struct({
  type: Schema.Literal("image"),
  data: Schema.String,
  mimeType: Schema.String,
  ...annotatedFields
}, { identifier: "ImageContent" })

/**
 * @since 0.1.0
 */
export interface ImageContent extends Schema.Schema.Type<typeof ImageContent> {}

/**
 * Base64-encoded audio (added in 2025-03-26).
 *
 * @since 0.1.0
 */
export const AudioContent = struct({
  type: Schema.Literal("audio"),
  data: Schema.String,
  mimeType: Schema.String,
  ...annotatedFields
}, { identifier: "AudioContent" })

/**
 * @since 0.1.0
 */
export interface AudioContent extends Schema.Schema.Type<typeof AudioContent> {}

const resourceContentsFields = {
  uri: Schema.String,
  mimeType: optionalString,
  ...metaFields
}

/**
 * The text of a resource.
 *
 * @since 0.1.0
 */
export const TextResourceContents = struct({
  ...resourceContentsFields,
  text: Schema.String
}, { identifier: "TextResourceContents" })

/**
 * @since 0.1.0
 */
export interface TextResourceContents extends Schema.Schema.Type<typeof TextResourceContents> {}

/**
 * The base64-encoded bytes of a resource.
 *
 * @since 0.1.0
 */
export const BlobResourceContents = struct({
  ...resourceContentsFields,
  blob: Schema.String
}, { identifier: "BlobResourceContents" })

/**
 * @since 0.1.0
 */
export interface BlobResourceContents extends Schema.Schema.Type<typeof BlobResourceContents> {}

/**
 * The contents of a resource: text or blob.
 *
 * @since 0.1.0
 */
export const ResourceContents = Schema.Union(TextResourceContents, BlobResourceContents).annotations({
  identifier: "ResourceContents"
})

/**
 * @since 0.1.0
 */
export type ResourceContents = typeof ResourceContents.Type

const resourceFields = {
  uri: Schema.String,
  ...baseMetadataFields,
  description: optionalString,
  mimeType: optionalString,
  annotations: Schema.optional(Annotations),
  size: optionalNumber,
  ...iconsFields,
  ...metaFields
}

/**
 * A resource the server can read.
 *
 * @since 0.1.0
 */
export const Resource = struct(resourceFields, { identifier: "Resource" })

/**
 * @since 0.1.0
 */
export interface Resource extends Schema.Schema.Type<typeof Resource> {}

/**
 * A link to a resource inside a tool result or prompt (added in 2025-06-18).
 *
 * @since 0.1.0
 */
export const ResourceLink = struct({
  type: Schema.Literal("resource_link"),
  ...resourceFields
}, { identifier: "ResourceLink" })

/**
 * @since 0.1.0
 */
export interface ResourceLink extends Schema.Schema.Type<typeof ResourceLink> {}

/**
 * A resource's contents embedded in a tool result or prompt.
 *
 * @since 0.1.0
 */
export const EmbeddedResource = struct({
  type: Schema.Literal("resource"),
  resource: ResourceContents,
  ...annotatedFields
}, { identifier: "EmbeddedResource" })

/**
 * @since 0.1.0
 */
export interface EmbeddedResource extends Schema.Schema.Type<typeof EmbeddedResource> {}

/**
 * The content block types the supported revisions define.
 *
 * @since 0.1.0
 */
export const KnownContentBlock = Schema.Union(
  TextContent,
  ImageContent,
  AudioContent,
  ResourceLink,
  EmbeddedResource
).annotations({ identifier: "KnownContentBlock" })

/**
 * @since 0.1.0
 */
export type KnownContentBlock = typeof KnownContentBlock.Type

/**
 * A `key` that none of `members` declares as its literal: the tag of a fallback variant, so a
 * value from a newer peer still decodes while a malformed known variant is still rejected.
 */
const unknownTag = <K extends string>(
  key: K,
  members: ReadonlyArray<{ readonly fields: { readonly [P in K]: { readonly literals: ReadonlyArray<LiteralValue> } } }>
) => {
  const known = new Set(members.flatMap((member) => member.fields[key].literals))
  const tag = Schema.String.pipe(Schema.filter((value) => !known.has(value), {
    message: (issue) => `${JSON.stringify(issue.actual)} is a known ${key}: its own schema applies`
  }))
  return { known, tag }
}

const contentTypes = unknownTag("type", KnownContentBlock.members)

/**
 * A content block of a type defined after 2025-11-25, kept as it came.
 *
 * @since 0.1.0
 */
export const UnknownContentBlock = struct({ type: contentTypes.tag }, {
  identifier: "UnknownContentBlock"
}, JsonObject)

/**
 * @since 0.1.0
 */
export interface UnknownContentBlock extends Schema.Schema.Type<typeof UnknownContentBlock> {}

/**
 * Any content block in a tool result or prompt message, including unknown future types.
 *
 * @since 0.1.0
 */
export const ContentBlock = Schema.Union(...KnownContentBlock.members, UnknownContentBlock).annotations({
  identifier: "ContentBlock"
})

/**
 * @since 0.1.0
 */
export type ContentBlock = typeof ContentBlock.Type

/**
 * Whether a content block is of a known type (narrows `switch (block.type)` properly).
 *
 * @since 0.1.0
 */
export const isKnownContentBlock = (block: ContentBlock): block is KnownContentBlock =>
  contentTypes.known.has(block.type)

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

/**
 * Untrusted hints about a tool's behaviour (added in 2025-03-26).
 *
 * @since 0.1.0
 */
export const ToolAnnotations = struct({
  title: optionalString,
  readOnlyHint: optionalBoolean,
  destructiveHint: optionalBoolean,
  idempotentHint: optionalBoolean,
  openWorldHint: optionalBoolean
}, { identifier: "ToolAnnotations" })

/**
 * @since 0.1.0
 */
export interface ToolAnnotations extends Schema.Schema.Type<typeof ToolAnnotations> {}

/**
 * How a tool may be executed (added in 2025-11-25).
 *
 * @since 0.1.0
 */
export const ToolExecution = struct({
  taskSupport: Schema.optional(Schema.Literal("forbidden", "optional", "required"))
}, { identifier: "ToolExecution" })

/**
 * @since 0.1.0
 */
export interface ToolExecution extends Schema.Schema.Type<typeof ToolExecution> {}

/**
 * A tool the server offers.
 *
 * @since 0.1.0
 */
export const Tool = struct({
  ...baseMetadataFields,
  description: optionalString,
  // JSON Schemas with `type: "object"` at the root; validated later, not here.
  inputSchema: JsonObject,
  outputSchema: optionalJsonObject, // 2025-06-18
  annotations: Schema.optional(ToolAnnotations),
  execution: Schema.optional(ToolExecution),
  ...iconsFields,
  ...metaFields
}, { identifier: "Tool" })

/**
 * @since 0.1.0
 */
export interface Tool extends Schema.Schema.Type<typeof Tool> {}

/**
 * A page of `tools/list`.
 *
 * @since 0.1.0
 */
export const ListToolsResult = paginatedResult({ tools: Schema.Array(Tool) }).annotations({
  identifier: "ListToolsResult"
})

/**
 * @since 0.1.0
 */
export interface ListToolsResult extends Schema.Schema.Type<typeof ListToolsResult> {}

/**
 * Asks for task-augmented execution of a request (2025-11-25).
 *
 * @since 0.1.0
 */
export const TaskMetadata = struct({
  ttl: optionalNumber
}, { identifier: "TaskMetadata" })

/**
 * @since 0.1.0
 */
export interface TaskMetadata extends Schema.Schema.Type<typeof TaskMetadata> {}

/**
 * Params of `tools/call`.
 *
 * @since 0.1.0
 */
export const CallToolRequestParams = struct({
  ...requestParamsFields,
  name: Schema.String,
  arguments: optionalJsonObject,
  task: Schema.optional(TaskMetadata)
}, { identifier: "CallToolRequestParams" })

/**
 * @since 0.1.0
 */
export interface CallToolRequestParams extends Schema.Schema.Type<typeof CallToolRequestParams> {}

/**
 * The result of `tools/call`; tool failures come back with `isError: true`.
 *
 * @since 0.1.0
 */
export const CallToolResult = struct({
  ...metaFields,
  content: Schema.Array(ContentBlock),
  structuredContent: optionalJsonObject, // 2025-06-18
  isError: optionalBoolean
}, { identifier: "CallToolResult" })

/**
 * @since 0.1.0
 */
export interface CallToolResult extends Schema.Schema.Type<typeof CallToolResult> {}

// ---------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------

/**
 * A template (RFC 6570) for resources the server can read.
 *
 * @since 0.1.0
 */
export const ResourceTemplate = struct({
  uriTemplate: Schema.String,
  ...baseMetadataFields,
  description: optionalString,
  mimeType: optionalString,
  annotations: Schema.optional(Annotations),
  ...iconsFields,
  ...metaFields
}, { identifier: "ResourceTemplate" })

/**
 * @since 0.1.0
 */
export interface ResourceTemplate extends Schema.Schema.Type<typeof ResourceTemplate> {}

/**
 * A page of `resources/list`.
 *
 * @since 0.1.0
 */
export const ListResourcesResult = paginatedResult({ resources: Schema.Array(Resource) }).annotations({
  identifier: "ListResourcesResult"
})

/**
 * @since 0.1.0
 */
export interface ListResourcesResult extends Schema.Schema.Type<typeof ListResourcesResult> {}

/**
 * A page of `resources/templates/list`.
 *
 * @since 0.1.0
 */
export const ListResourceTemplatesResult = paginatedResult({
  resourceTemplates: Schema.Array(ResourceTemplate)
}).annotations({ identifier: "ListResourceTemplatesResult" })

/**
 * @since 0.1.0
 */
export interface ListResourceTemplatesResult extends Schema.Schema.Type<typeof ListResourceTemplatesResult> {}

const resourceRequestFields = { ...requestParamsFields, uri: Schema.String }

/**
 * Params of `resources/read`.
 *
 * @since 0.1.0
 */
export const ReadResourceRequestParams = struct(resourceRequestFields, {
  identifier: "ReadResourceRequestParams"
})

/**
 * @since 0.1.0
 */
export interface ReadResourceRequestParams extends Schema.Schema.Type<typeof ReadResourceRequestParams> {}

/**
 * The result of `resources/read`.
 *
 * @since 0.1.0
 */
export const ReadResourceResult = struct({
  ...metaFields,
  contents: Schema.Array(ResourceContents)
}, { identifier: "ReadResourceResult" })

/**
 * @since 0.1.0
 */
export interface ReadResourceResult extends Schema.Schema.Type<typeof ReadResourceResult> {}

/**
 * Params of `resources/subscribe`.
 *
 * @since 0.1.0
 */
export const SubscribeRequestParams = struct(resourceRequestFields, {
  identifier: "SubscribeRequestParams"
})

/**
 * @since 0.1.0
 */
export interface SubscribeRequestParams extends Schema.Schema.Type<typeof SubscribeRequestParams> {}

/**
 * Params of `resources/unsubscribe`.
 *
 * @since 0.1.0
 */
export const UnsubscribeRequestParams = struct(resourceRequestFields, {
  identifier: "UnsubscribeRequestParams"
})

/**
 * @since 0.1.0
 */
export interface UnsubscribeRequestParams extends Schema.Schema.Type<typeof UnsubscribeRequestParams> {}

// ---------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------

/**
 * An argument a prompt template accepts.
 *
 * @since 0.1.0
 */
export const PromptArgument = struct({
  ...baseMetadataFields,
  description: optionalString,
  required: optionalBoolean
}, { identifier: "PromptArgument" })

/**
 * @since 0.1.0
 */
export interface PromptArgument extends Schema.Schema.Type<typeof PromptArgument> {}

/**
 * A prompt or prompt template the server offers.
 *
 * @since 0.1.0
 */
export const Prompt = struct({
  ...baseMetadataFields,
  description: optionalString,
  arguments: Schema.optional(Schema.Array(PromptArgument)),
  ...iconsFields,
  ...metaFields
}, { identifier: "Prompt" })

/**
 * @since 0.1.0
 */
export interface Prompt extends Schema.Schema.Type<typeof Prompt> {}

/**
 * A page of `prompts/list`.
 *
 * @since 0.1.0
 */
export const ListPromptsResult = paginatedResult({ prompts: Schema.Array(Prompt) }).annotations({
  identifier: "ListPromptsResult"
})

/**
 * @since 0.1.0
 */
export interface ListPromptsResult extends Schema.Schema.Type<typeof ListPromptsResult> {}

/**
 * Params of `prompts/get`.
 *
 * @since 0.1.0
 */
export const GetPromptRequestParams = struct({
  ...requestParamsFields,
  name: Schema.String,
  arguments: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
}, { identifier: "GetPromptRequestParams" })

/**
 * @since 0.1.0
 */
export interface GetPromptRequestParams extends Schema.Schema.Type<typeof GetPromptRequestParams> {}

/**
 * One message of a rendered prompt.
 *
 * @since 0.1.0
 */
export const PromptMessage = struct({
  role: Role,
  content: ContentBlock
}, { identifier: "PromptMessage" })

/**
 * @since 0.1.0
 */
export interface PromptMessage extends Schema.Schema.Type<typeof PromptMessage> {}

/**
 * The result of `prompts/get`.
 *
 * @since 0.1.0
 */
export const GetPromptResult = struct({
  ...metaFields,
  description: optionalString,
  messages: Schema.Array(PromptMessage)
}, { identifier: "GetPromptResult" })

/**
 * @since 0.1.0
 */
export interface GetPromptResult extends Schema.Schema.Type<typeof GetPromptResult> {}

// ---------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------

/**
 * Names a prompt whose argument is being completed.
 *
 * @since 0.1.0
 */
export const PromptReference = struct({
  type: Schema.Literal("ref/prompt"),
  ...baseMetadataFields
}, { identifier: "PromptReference" })

/**
 * @since 0.1.0
 */
export interface PromptReference extends Schema.Schema.Type<typeof PromptReference> {}

/**
 * Names a resource (template) whose URI variable is being completed.
 *
 * @since 0.1.0
 */
export const ResourceTemplateReference = struct({
  type: Schema.Literal("ref/resource"),
  uri: Schema.String
}, { identifier: "ResourceTemplateReference" })

/**
 * @since 0.1.0
 */
export interface ResourceTemplateReference extends Schema.Schema.Type<typeof ResourceTemplateReference> {}

/**
 * The 2024-11-05 / 2025-03-26 name of `ResourceTemplateReference` (same wire shape).
 *
 * @since 0.1.0
 */
export const ResourceReference = ResourceTemplateReference

/**
 * @since 0.1.0
 */
export type ResourceReference = ResourceTemplateReference

/**
 * Params of `completion/complete`.
 *
 * @since 0.1.0
 */
export const CompleteRequestParams = struct({
  ...requestParamsFields,
  ref: Schema.Union(PromptReference, ResourceTemplateReference),
  argument: struct({ name: Schema.String, value: Schema.String }),
  // 2025-06-18: previously resolved arguments
  context: Schema.optional(struct({
    arguments: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
  }))
}, { identifier: "CompleteRequestParams" })

/**
 * @since 0.1.0
 */
export interface CompleteRequestParams extends Schema.Schema.Type<typeof CompleteRequestParams> {}

/**
 * The result of `completion/complete` (at most 100 values).
 *
 * @since 0.1.0
 */
export const CompleteResult = struct({
  ...metaFields,
  completion: struct({
    values: Schema.Array(Schema.String),
    total: optionalNumber,
    hasMore: optionalBoolean
  })
}, { identifier: "CompleteResult" })

/**
 * @since 0.1.0
 */
export interface CompleteResult extends Schema.Schema.Type<typeof CompleteResult> {}

// ---------------------------------------------------------------------------
// Logging, progress, cancellation
// ---------------------------------------------------------------------------

/**
 * A log severity (the RFC 5424 syslog levels).
 *
 * @since 0.1.0
 */
export const LoggingLevel = Schema.Literal(
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency"
).annotations({ identifier: "LoggingLevel" })

/**
 * @since 0.1.0
 */
export type LoggingLevel = typeof LoggingLevel.Type

/**
 * Params of `logging/setLevel`.
 *
 * @since 0.1.0
 */
export const SetLevelRequestParams = struct({
  ...requestParamsFields,
  level: LoggingLevel
}, { identifier: "SetLevelRequestParams" })

/**
 * @since 0.1.0
 */
export interface SetLevelRequestParams extends Schema.Schema.Type<typeof SetLevelRequestParams> {}

/**
 * Params of `notifications/message`.
 *
 * @since 0.1.0
 */
export const LoggingMessageNotificationParams = struct({
  ...metaFields,
  level: LoggingLevel,
  logger: optionalString,
  data: Schema.Unknown
}, { identifier: "LoggingMessageNotificationParams" })

/**
 * @since 0.1.0
 */
export interface LoggingMessageNotificationParams extends Schema.Schema.Type<typeof LoggingMessageNotificationParams> {}

/**
 * Params of `notifications/progress`.
 *
 * @since 0.1.0
 */
export const ProgressNotificationParams = struct({
  ...metaFields,
  progressToken: ProgressToken,
  progress: Schema.Number,
  total: optionalNumber,
  message: optionalString // 2025-03-26
}, { identifier: "ProgressNotificationParams" })

/**
 * @since 0.1.0
 */
export interface ProgressNotificationParams extends Schema.Schema.Type<typeof ProgressNotificationParams> {}

/**
 * Params of `notifications/cancelled`.
 *
 * @since 0.1.0
 */
export const CancelledNotificationParams = struct({
  ...metaFields,
  // Required until 2025-06-18; optional since 2025-11-25 (task cancellation uses tasks/cancel).
  requestId: Schema.optional(RequestId),
  reason: optionalString
}, { identifier: "CancelledNotificationParams" })

/**
 * @since 0.1.0
 */
export interface CancelledNotificationParams extends Schema.Schema.Type<typeof CancelledNotificationParams> {}

/**
 * Params of `notifications/resources/updated`.
 *
 * @since 0.1.0
 */
export const ResourceUpdatedNotificationParams = struct({
  ...metaFields,
  uri: Schema.String
}, { identifier: "ResourceUpdatedNotificationParams" })

/**
 * @since 0.1.0
 */
export interface ResourceUpdatedNotificationParams
  extends Schema.Schema.Type<typeof ResourceUpdatedNotificationParams>
{}

/**
 * The state of a task (2025-11-25): a request the server runs on its own time, polled with
 * `tasks/get` and answered by `tasks/result`.
 *
 * @since 0.2.0
 */
export const Task = struct({
  ...metaFields,
  taskId: Schema.String,
  status: Schema.Literal("working", "input_required", "completed", "failed", "cancelled"),
  ttl: Schema.optional(Schema.NullOr(Schema.Number)),
  createdAt: optionalString,
  lastUpdatedAt: optionalString,
  pollInterval: optionalNumber,
  statusMessage: optionalString
}, { identifier: "Task" })

/**
 * @since 0.2.0
 */
export interface Task extends Schema.Schema.Type<typeof Task> {}

/**
 * The answer to a task-augmented request: the task it became.
 *
 * @since 0.2.0
 */
export const CreateTaskResult = struct({
  ...metaFields,
  task: Task
}, { identifier: "CreateTaskResult" })

/**
 * @since 0.2.0
 */
export interface CreateTaskResult extends Schema.Schema.Type<typeof CreateTaskResult> {}

/**
 * A page of `tasks/list` (2025-11-25).
 *
 * @since 0.2.0
 */
export const ListTasksResult = paginatedResult({ tasks: Schema.Array(Task) }).annotations({
  identifier: "ListTasksResult"
})

/**
 * @since 0.2.0
 */
export interface ListTasksResult extends Schema.Schema.Type<typeof ListTasksResult> {}

// ---------------------------------------------------------------------------
// Sampling, elicitation and roots: what a server asks of its client
// ---------------------------------------------------------------------------

/**
 * A model's request to use a tool, in a sampling message (2025-11-25).
 *
 * @since 0.2.0
 */
export const ToolUseContent = struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: JsonObject,
  ...metaFields
}, { identifier: "ToolUseContent" })

/**
 * @since 0.2.0
 */
export interface ToolUseContent extends Schema.Schema.Type<typeof ToolUseContent> {}

/**
 * The result of a tool the model asked for, in a sampling message (2025-11-25).
 *
 * @since 0.2.0
 */
export const ToolResultContent = struct({
  type: Schema.Literal("tool_result"),
  toolUseId: Schema.String,
  content: Schema.Array(ContentBlock),
  structuredContent: optionalJsonObject,
  isError: optionalBoolean,
  ...metaFields
}, { identifier: "ToolResultContent" })

/**
 * @since 0.2.0
 */
export interface ToolResultContent extends Schema.Schema.Type<typeof ToolResultContent> {}

/**
 * A content block of a sampling message: text, image, audio, and (2025-11-25) tool use and
 * tool results.
 *
 * @since 0.2.0
 */
export const SamplingContent = Schema.Union(
  TextContent,
  ImageContent,
  AudioContent,
  ToolUseContent,
  ToolResultContent
).annotations({ identifier: "SamplingContent" })

/**
 * @since 0.2.0
 */
export type SamplingContent = typeof SamplingContent.Type

/**
 * One message of a sampling conversation; its content is one block, or (2025-11-25) several.
 *
 * @since 0.2.0
 */
export const SamplingMessage = struct({
  role: Role,
  content: Schema.Union(SamplingContent, Schema.Array(SamplingContent)),
  ...metaFields
}, { identifier: "SamplingMessage" })

/**
 * @since 0.2.0
 */
export interface SamplingMessage extends Schema.Schema.Type<typeof SamplingMessage> {}

const Priority = Schema.Number.pipe(Schema.between(0, 1))

/**
 * The server's preferences for the model the client picks; the client may ignore them.
 *
 * @since 0.2.0
 */
export const ModelPreferences = struct({
  hints: Schema.optional(Schema.Array(struct({ name: optionalString }))),
  costPriority: Schema.optional(Priority),
  speedPriority: Schema.optional(Priority),
  intelligencePriority: Schema.optional(Priority)
}, { identifier: "ModelPreferences" })

/**
 * @since 0.2.0
 */
export interface ModelPreferences extends Schema.Schema.Type<typeof ModelPreferences> {}

/**
 * Params of `sampling/createMessage`.
 *
 * @since 0.2.0
 */
export const CreateMessageRequestParams = struct({
  ...requestParamsFields,
  messages: Schema.Array(SamplingMessage),
  modelPreferences: Schema.optional(ModelPreferences),
  systemPrompt: optionalString,
  includeContext: Schema.optional(Schema.Literal("none", "thisServer", "allServers")),
  temperature: optionalNumber,
  maxTokens: Schema.Int,
  stopSequences: optionalStrings,
  metadata: optionalJsonObject,
  // tools and toolChoice: 2025-11-25, only to a client that declared `sampling.tools`.
  tools: Schema.optional(Schema.Array(Tool)),
  toolChoice: Schema.optional(struct({ mode: Schema.optional(Schema.Literal("auto", "required", "none")) })),
  task: Schema.optional(TaskMetadata)
}, { identifier: "CreateMessageRequestParams" })

/**
 * @since 0.2.0
 */
export interface CreateMessageRequestParams extends Schema.Schema.Type<typeof CreateMessageRequestParams> {}

/**
 * The client's answer to `sampling/createMessage`. `stopReason` is open: `endTurn`,
 * `stopSequence`, `maxTokens`, `toolUse` (2025-11-25) or a provider's own.
 *
 * @since 0.2.0
 */
export const CreateMessageResult = struct({
  ...metaFields,
  role: Role,
  content: Schema.Union(SamplingContent, Schema.Array(SamplingContent)),
  model: Schema.String,
  stopReason: optionalString
}, { identifier: "CreateMessageResult" })

/**
 * @since 0.2.0
 */
export interface CreateMessageResult extends Schema.Schema.Type<typeof CreateMessageResult> {}

/**
 * Params of a form `elicitation/create` (`mode` absent or `form`): a message and a flat JSON
 * Schema of the fields to ask for (strings, numbers, booleans, enums — SEP-1330's titled and
 * multi-select ones among them — with SEP-1034 `default`s).
 *
 * @since 0.2.0
 */
export const ElicitFormParams = struct({
  ...requestParamsFields,
  mode: Schema.optional(Schema.Literal("form")),
  message: Schema.String,
  requestedSchema: struct(
    {
      type: Schema.Literal("object"),
      properties: Schema.Record({ key: Schema.String, value: JsonObject }),
      required: optionalStrings
    },
    undefined,
    JsonObject
  ),
  task: Schema.optional(TaskMetadata)
}, { identifier: "ElicitFormParams" })

/**
 * @since 0.2.0
 */
export interface ElicitFormParams extends Schema.Schema.Type<typeof ElicitFormParams> {}

/**
 * Params of a URL `elicitation/create` (2025-11-25): the user is sent to `url`, and the server
 * says when that is done with `notifications/elicitation/complete`.
 *
 * @since 0.2.0
 */
export const ElicitUrlParams = struct({
  ...requestParamsFields,
  mode: Schema.Literal("url"),
  message: Schema.String,
  elicitationId: Schema.String,
  url: Schema.String,
  task: Schema.optional(TaskMetadata)
}, { identifier: "ElicitUrlParams" })

/**
 * @since 0.2.0
 */
export interface ElicitUrlParams extends Schema.Schema.Type<typeof ElicitUrlParams> {}

/**
 * Params of `elicitation/create`, form or URL.
 *
 * @since 0.2.0
 */
export const ElicitRequestParams = Schema.Union(ElicitFormParams, ElicitUrlParams).annotations({
  identifier: "ElicitRequestParams"
})

/**
 * @since 0.2.0
 */
export type ElicitRequestParams = typeof ElicitRequestParams.Type

/**
 * A value of an accepted form: a string, number, boolean, or (multi-select) strings.
 *
 * @since 0.2.0
 */
export const ElicitValue = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String))

/**
 * @since 0.2.0
 */
export type ElicitValue = typeof ElicitValue.Type

/**
 * The client's answer to `elicitation/create`: the user accepted (with the form's `content`),
 * declined, or dismissed it (`cancel`).
 *
 * @since 0.2.0
 */
export const ElicitResult = struct({
  ...metaFields,
  action: Schema.Literal("accept", "decline", "cancel"),
  content: Schema.optional(Schema.Record({ key: Schema.String, value: ElicitValue }))
}, { identifier: "ElicitResult" })

/**
 * @since 0.2.0
 */
export interface ElicitResult extends Schema.Schema.Type<typeof ElicitResult> {}

/**
 * A folder or file the server may work in; `uri` is a `file://` URI.
 *
 * @since 0.2.0
 */
export const Root = struct({
  uri: Schema.String.pipe(Schema.startsWith("file://")),
  name: optionalString,
  ...metaFields
}, { identifier: "Root" })

/**
 * @since 0.2.0
 */
export interface Root extends Schema.Schema.Type<typeof Root> {}

/**
 * The client's answer to `roots/list`.
 *
 * @since 0.2.0
 */
export const ListRootsResult = struct({
  ...metaFields,
  roots: Schema.Array(Root)
}, { identifier: "ListRootsResult" })

/**
 * @since 0.2.0
 */
export interface ListRootsResult extends Schema.Schema.Type<typeof ListRootsResult> {}

// ---------------------------------------------------------------------------
// Revision 2026-07-28: multi round-trip requests, subscriptions/listen, the tasks extension
// ---------------------------------------------------------------------------

/**
 * One thing a server asks of its client inside a result (2026-07-28): a request object
 * (`elicitation/create`, `sampling/createMessage`, `roots/list`), answered by the same host
 * handlers as the stateful revisions' server requests.
 *
 * @since 0.3.0
 */
export const InputRequest = struct(
  {
    method: Schema.String,
    params: optionalJsonObject
  },
  { identifier: "InputRequest" },
  JsonObject
)

/**
 * @since 0.3.0
 */
export interface InputRequest extends Schema.Schema.Type<typeof InputRequest> {}

/**
 * The server's input requests by its own keys.
 *
 * @since 0.3.0
 */
export const InputRequests = Schema.Record({ key: Schema.String, value: InputRequest }).annotations({
  identifier: "InputRequests"
})

/**
 * @since 0.3.0
 */
export type InputRequests = typeof InputRequests.Type

/**
 * The client's answers, under the keys of the input requests they answer.
 *
 * @since 0.3.0
 */
export const InputResponses = Schema.Record({ key: Schema.String, value: JsonObject }).annotations({
  identifier: "InputResponses"
})

/**
 * @since 0.3.0
 */
export type InputResponses = typeof InputResponses.Type

/**
 * A result saying the request needs input first (2026-07-28): the client answers
 * `inputRequests` and retries the request with `inputResponses` and `requestState` (echoed
 * unchanged, never looked into).
 *
 * @since 0.3.0
 */
export const InputRequiredResult = struct({
  ...metaFields,
  resultType: Schema.Literal("input_required"),
  inputRequests: Schema.optional(InputRequests),
  requestState: optionalString
}, { identifier: "InputRequiredResult" })

/**
 * @since 0.3.0
 */
export interface InputRequiredResult extends Schema.Schema.Type<typeof InputRequiredResult> {}

/**
 * What a `subscriptions/listen` stream asks for, and what the server's acknowledgment grants.
 * `taskIds` belongs to the tasks extension.
 *
 * @since 0.3.0
 */
export const SubscriptionFilter = struct(
  {
    toolsListChanged: optionalBoolean,
    promptsListChanged: optionalBoolean,
    resourcesListChanged: optionalBoolean,
    resourceSubscriptions: optionalStrings,
    taskIds: optionalStrings
  },
  { identifier: "SubscriptionFilter" },
  JsonObject
)

/**
 * @since 0.3.0
 */
export interface SubscriptionFilter extends Schema.Schema.Type<typeof SubscriptionFilter> {}

/**
 * `notifications/subscriptions/acknowledged`: the subset of the filter the server honours,
 * for the stream named by `_meta["io.modelcontextprotocol/subscriptionId"]`.
 *
 * @since 0.3.0
 */
export const SubscriptionsAcknowledgedParams = struct({
  ...metaFields,
  notifications: SubscriptionFilter
}, { identifier: "SubscriptionsAcknowledgedParams" })

/**
 * @since 0.3.0
 */
export interface SubscriptionsAcknowledgedParams extends Schema.Schema.Type<typeof SubscriptionsAcknowledgedParams> {}

/**
 * The `_meta` key naming the `subscriptions/listen` stream (its request id) a notification
 * belongs to.
 *
 * @since 0.3.0
 */
export const SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId"

/**
 * The name of the tasks extension, declared under `extensions` in the capabilities.
 *
 * @since 0.3.0
 */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

/**
 * The name of the skills extension (SEP-2640), declared by a server under `extensions` in its
 * capabilities: it serves `skills/list` and `skills/get`, and its skills' files as resources.
 *
 * @since 0.4.0
 */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills"

/**
 * One file of a skill's manifest: its URI, the SHA-256 of its raw bytes (`sha256:` and 64
 * lowercase hex digits) and their length.
 *
 * @since 0.4.0
 */
export const SkillFile = struct(
  {
    uri: Schema.String,
    digest: Schema.String,
    size: Schema.Number
  },
  { identifier: "SkillFile" },
  JsonObject
)

/**
 * @since 0.4.0
 */
export interface SkillFile extends Schema.Schema.Type<typeof SkillFile> {}

/**
 * A skill's entry, as `skills/list` and `skills/get` give it: the URI of its `SKILL.md`, that
 * file's YAML frontmatter as a JSON object (`name` and `description` at least), and the
 * complete manifest of its files, or `"dynamic"` when the server publishes none.
 *
 * @since 0.4.0
 */
export const Skill = struct(
  {
    uri: Schema.String,
    frontmatter: struct({ name: Schema.String, description: Schema.String }, undefined, JsonObject),
    resources: Schema.Union(Schema.Array(SkillFile), Schema.Literal("dynamic"))
  },
  { identifier: "Skill" },
  JsonObject
)

/**
 * @since 0.4.0
 */
export interface Skill extends Schema.Schema.Type<typeof Skill> {}

/**
 * A page of `skills/list`.
 *
 * @since 0.4.0
 */
export const ListSkillsResult = paginatedResult({ skills: Schema.Array(Skill) }).annotations({
  identifier: "ListSkillsResult"
})

/**
 * @since 0.4.0
 */
export interface ListSkillsResult extends Schema.Schema.Type<typeof ListSkillsResult> {}

/**
 * The answer of `skills/get`: one skill's entry.
 *
 * @since 0.4.0
 */
export const GetSkillResult = struct({ ...metaFields, skill: Skill }, {
  identifier: "GetSkillResult"
})

/**
 * @since 0.4.0
 */
export interface GetSkillResult extends Schema.Schema.Type<typeof GetSkillResult> {}

/**
 * A task of the tasks extension, as `tasks/get`, `notifications/tasks` and a
 * `resultType: "task"` answer give it: its status with what that status carries (the input
 * requests, the result, the error).
 *
 * @since 0.3.0
 */
export const DetailedTask = struct({
  ...metaFields,
  resultType: optionalString,
  taskId: Schema.String,
  status: Schema.Literal("working", "input_required", "completed", "failed", "cancelled"),
  statusMessage: optionalString,
  createdAt: optionalString,
  lastUpdatedAt: optionalString,
  ttlMs: Schema.optional(Schema.NullOr(Schema.Number)),
  pollIntervalMs: optionalNumber,
  inputRequests: Schema.optional(InputRequests),
  result: optionalJsonObject,
  error: Schema.optional(
    struct({ code: Schema.Number, message: Schema.String, data: Schema.optional(Schema.Unknown) })
  )
}, { identifier: "DetailedTask" })

/**
 * @since 0.3.0
 */
export interface DetailedTask extends Schema.Schema.Type<typeof DetailedTask> {}

// ---------------------------------------------------------------------------
// Method names and server notifications
// ---------------------------------------------------------------------------

/**
 * Every request and notification method a client sends, receives or handles.
 *
 * @since 0.1.0
 */
export const Method = {
  // client → server requests
  Initialize: "initialize",
  Ping: "ping",
  ToolsList: "tools/list",
  ToolsCall: "tools/call",
  ResourcesList: "resources/list",
  ResourcesTemplatesList: "resources/templates/list",
  ResourcesRead: "resources/read",
  ResourcesSubscribe: "resources/subscribe",
  ResourcesUnsubscribe: "resources/unsubscribe",
  PromptsList: "prompts/list",
  PromptsGet: "prompts/get",
  CompletionComplete: "completion/complete",
  LoggingSetLevel: "logging/setLevel",
  SkillsList: "skills/list", // the skills extension (SEP-2640)
  SkillsGet: "skills/get",
  // tasks (2025-11-25), either direction
  TasksGet: "tasks/get",
  TasksResult: "tasks/result",
  TasksList: "tasks/list",
  TasksCancel: "tasks/cancel",
  TasksUpdate: "tasks/update", // the tasks extension (2026-07-28)
  SubscriptionsListen: "subscriptions/listen", // 2026-07-28
  // server → client requests
  SamplingCreateMessage: "sampling/createMessage",
  RootsList: "roots/list",
  ElicitationCreate: "elicitation/create", // 2025-06-18
  // notifications
  Initialized: "notifications/initialized",
  Cancelled: "notifications/cancelled",
  Progress: "notifications/progress",
  LoggingMessage: "notifications/message",
  ResourcesUpdated: "notifications/resources/updated",
  ResourcesListChanged: "notifications/resources/list_changed",
  ToolsListChanged: "notifications/tools/list_changed",
  PromptsListChanged: "notifications/prompts/list_changed",
  RootsListChanged: "notifications/roots/list_changed",
  ElicitationComplete: "notifications/elicitation/complete", // 2025-11-25
  TasksStatus: "notifications/tasks/status", // 2025-11-25
  SubscriptionsAcknowledged: "notifications/subscriptions/acknowledged", // 2026-07-28
  TaskNotification: "notifications/tasks" // the tasks extension (2026-07-28)
} as const

/**
 * @since 0.1.0
 */
export type Method = (typeof Method)[keyof typeof Method]

const notification = <M extends string, P extends Schema.Struct.Field>(method: M, params: P) =>
  struct({ method: Schema.Literal(method), params })

/**
 * `notifications/tools/list_changed`.
 *
 * @since 0.1.0
 */
export const ToolListChangedNotification = notification(
  Method.ToolsListChanged,
  Schema.optional(NotificationParams)
).annotations({ identifier: "ToolListChangedNotification" })

/**
 * @since 0.1.0
 */
export interface ToolListChangedNotification extends Schema.Schema.Type<typeof ToolListChangedNotification> {}

/**
 * `notifications/resources/list_changed`.
 *
 * @since 0.1.0
 */
export const ResourceListChangedNotification = notification(
  Method.ResourcesListChanged,
  Schema.optional(NotificationParams)
).annotations({ identifier: "ResourceListChangedNotification" })

/**
 * @since 0.1.0
 */
export interface ResourceListChangedNotification extends Schema.Schema.Type<typeof ResourceListChangedNotification> {}

/**
 * `notifications/prompts/list_changed`.
 *
 * @since 0.1.0
 */
export const PromptListChangedNotification = notification(
  Method.PromptsListChanged,
  Schema.optional(NotificationParams)
).annotations({ identifier: "PromptListChangedNotification" })

/**
 * @since 0.1.0
 */
export interface PromptListChangedNotification extends Schema.Schema.Type<typeof PromptListChangedNotification> {}

/**
 * `notifications/resources/updated`.
 *
 * @since 0.1.0
 */
export const ResourceUpdatedNotification = notification(
  Method.ResourcesUpdated,
  ResourceUpdatedNotificationParams
).annotations({ identifier: "ResourceUpdatedNotification" })

/**
 * @since 0.1.0
 */
export interface ResourceUpdatedNotification extends Schema.Schema.Type<typeof ResourceUpdatedNotification> {}

/**
 * `notifications/message`: a log message from the server.
 *
 * @since 0.1.0
 */
export const LoggingMessageNotification = notification(
  Method.LoggingMessage,
  LoggingMessageNotificationParams
).annotations({ identifier: "LoggingMessageNotification" })

/**
 * @since 0.1.0
 */
export interface LoggingMessageNotification extends Schema.Schema.Type<typeof LoggingMessageNotification> {}

/**
 * `notifications/progress`.
 *
 * @since 0.1.0
 */
export const ProgressNotification = notification(Method.Progress, ProgressNotificationParams).annotations({
  identifier: "ProgressNotification"
})

/**
 * @since 0.1.0
 */
export interface ProgressNotification extends Schema.Schema.Type<typeof ProgressNotification> {}

/**
 * `notifications/cancelled`.
 *
 * @since 0.1.0
 */
export const CancelledNotification = notification(Method.Cancelled, CancelledNotificationParams).annotations({
  identifier: "CancelledNotification"
})

/**
 * @since 0.1.0
 */
export interface CancelledNotification extends Schema.Schema.Type<typeof CancelledNotification> {}

/**
 * `notifications/tasks/status` (2025-11-25): a task's new status; its params are the task.
 *
 * @since 0.2.0
 */
export const TaskStatusNotification = notification(Method.TasksStatus, Task).annotations({
  identifier: "TaskStatusNotification"
})

/**
 * @since 0.2.0
 */
export interface TaskStatusNotification extends Schema.Schema.Type<typeof TaskStatusNotification> {}

/**
 * The server notifications this module gives a typed shape.
 *
 * @since 0.1.0
 */
export const KnownServerNotification = Schema.Union(
  ToolListChangedNotification,
  ResourceListChangedNotification,
  PromptListChangedNotification,
  ResourceUpdatedNotification,
  LoggingMessageNotification,
  ProgressNotification,
  CancelledNotification,
  TaskStatusNotification
).annotations({ identifier: "KnownServerNotification" })

/**
 * @since 0.1.0
 */
export type KnownServerNotification = typeof KnownServerNotification.Type

const notificationMethods = unknownTag("method", KnownServerNotification.members)

/**
 * Any other server notification, kept as `{ method, params }`.
 *
 * @since 0.1.0
 */
export const UnknownServerNotification = struct({
  method: notificationMethods.tag,
  params: Schema.optional(Schema.Unknown)
}, { identifier: "UnknownServerNotification" })

/**
 * @since 0.1.0
 */
export interface UnknownServerNotification extends Schema.Schema.Type<typeof UnknownServerNotification> {}

/**
 * A notification from the server, keyed on `method`; unknown methods decode to
 * `UnknownServerNotification`.
 *
 * @since 0.1.0
 */
export const ServerNotification = Schema.Union(
  ...KnownServerNotification.members,
  UnknownServerNotification
).annotations({ identifier: "ServerNotification" })

/**
 * @since 0.1.0
 */
export type ServerNotification = typeof ServerNotification.Type

/**
 * Whether a server notification has a typed shape (narrows `switch (n.method)` properly).
 *
 * @since 0.1.0
 */
export const isKnownServerNotification = (n: ServerNotification): n is KnownServerNotification =>
  notificationMethods.known.has(n.method)

const decodeNotification = decodeUnknown(ServerNotification)

/**
 * Decode a notification's method and params. Fails only when a known method has malformed
 * params; an unknown method yields an `UnknownServerNotification`.
 *
 * @since 0.1.0
 */
export const decodeServerNotification = (
  method: string,
  params: unknown
): Either.Either<ServerNotification, ParseResult.ParseError> =>
  decodeNotification(params === undefined ? { method } : { method, params })

// ---------------------------------------------------------------------------
// Revision 2026-07-28 (stateless): per-request `_meta`, server/discover, cache hints,
// the modern error codes. Kept apart from the stateful revisions above: a 2026-07-28
// connection has no initialize and no session.
// ---------------------------------------------------------------------------

/**
 * The stateless ("modern") revisions this library speaks as a client, newest first. They
 * carry the revision, the client's identity and capabilities on every request instead of an
 * initialize handshake.
 *
 * @since 0.1.0
 */
export const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"] as const

/**
 * A stateless revision.
 *
 * @since 0.1.0
 */
export type ModernProtocolVersion = typeof MODERN_PROTOCOL_VERSIONS[number]

/**
 * Any revision a connection may speak: a stateful one (initialize) or a stateless one.
 *
 * @since 0.1.0
 */
export type Revision = ProtocolVersion | ModernProtocolVersion

/**
 * Whether `version` is a stateless revision this library speaks.
 *
 * @since 0.1.0
 */
export const isModernVersion = (version: unknown): version is ModernProtocolVersion =>
  (MODERN_PROTOCOL_VERSIONS as ReadonlyArray<unknown>).includes(version)

/**
 * The `_meta` keys of a 2026-07-28 request and result, and the one that ties a 2025-11-25
 * message to its task (`RelatedTask`).
 *
 * @since 0.1.0
 */
export const MetaKey = {
  ProtocolVersion: "io.modelcontextprotocol/protocolVersion",
  ClientInfo: "io.modelcontextprotocol/clientInfo",
  ClientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  LogLevel: "io.modelcontextprotocol/logLevel",
  ServerInfo: "io.modelcontextprotocol/serverInfo",
  /** On what a `subscriptions/listen` stream carries: the id of the request that opened it. */
  SubscriptionId: "io.modelcontextprotocol/subscriptionId",
  /** On a 2025-11-25 message that serves a task: `{ taskId }`. */
  RelatedTask: "io.modelcontextprotocol/related-task"
} as const

/**
 * The method of the discovery request (2026-07-28).
 *
 * @since 0.1.0
 */
export const DISCOVER_METHOD = "server/discover"

/**
 * The JSON-RPC error codes the 2026-07-28 revision defines: a header that does not match the
 * body, a client capability the request needs, a revision the server does not support. An
 * error with one of them comes from a stateless server.
 *
 * @since 0.1.0
 */
export const ModernErrorCode = {
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022
} as const

/**
 * Whether a JSON-RPC error code is one the 2026-07-28 revision defines.
 *
 * @since 0.1.0
 */
export const isModernErrorCode = (code: unknown): boolean =>
  code === ModernErrorCode.HeaderMismatch || code === ModernErrorCode.MissingRequiredClientCapability ||
  code === ModernErrorCode.UnsupportedProtocolVersion

/**
 * The `data` of an UnsupportedProtocolVersion error (-32022).
 *
 * @since 0.1.0
 */
export const UnsupportedProtocolVersionData = struct(
  {
    supported: Schema.Array(Schema.String),
    requested: optionalString
  },
  { identifier: "UnsupportedProtocolVersionData" },
  JsonObject
)

/**
 * @since 0.1.0
 */
export interface UnsupportedProtocolVersionData extends Schema.Schema.Type<typeof UnsupportedProtocolVersionData> {}

const cacheHintFields = {
  ttlMs: optionalNumber,
  cacheScope: Schema.optional(Schema.Literal("public", "private"))
}

/**
 * The caching hints of a cacheable result (discover, the lists, resources/read): how long it
 * stays fresh, and who may share it. Absent in stateful revisions (then: stale at once).
 *
 * @since 0.1.0
 */
export const CacheHints = struct(cacheHintFields, { identifier: "CacheHints" })

/**
 * @since 0.1.0
 */
export interface CacheHints extends Schema.Schema.Type<typeof CacheHints> {}

/**
 * How long a result stays fresh, in milliseconds: its `ttlMs`, with a missing, negative or
 * malformed one read as 0 (stale at once), as the spec says.
 *
 * @since 0.1.0
 */
export const ttlOf = (result: unknown): number => {
  const ttl = (result as { readonly ttlMs?: unknown } | null | undefined)?.ttlMs
  return typeof ttl === "number" && Number.isFinite(ttl) && ttl > 0 ? ttl : 0
}

/**
 * The server's answer to `server/discover` (2026-07-28): the revisions it supports, its
 * capabilities, its identity (in `_meta`, or — as some servers send it — at the top level)
 * and its instructions.
 *
 * @since 0.1.0
 */
export const DiscoverResult = struct({
  ...metaFields,
  ...cacheHintFields,
  resultType: optionalString,
  supportedVersions: Schema.Array(Schema.String),
  capabilities: ServerCapabilities,
  serverInfo: Schema.optional(Implementation),
  instructions: optionalString
}, { identifier: "DiscoverResult" })

/**
 * @since 0.1.0
 */
export interface DiscoverResult extends Schema.Schema.Type<typeof DiscoverResult> {}

/**
 * The revision a server answers stateless requests in (the newest modern one).
 *
 * @since 0.1.0
 */
export const MODERN_PROTOCOL_VERSION: ModernProtocolVersion = MODERN_PROTOCOL_VERSIONS[0]

/**
 * The methods and notifications the modern revision adds.
 *
 * @since 0.1.0
 */
export const ModernMethod = {
  Discover: DISCOVER_METHOD,
  SubscriptionsListen: "subscriptions/listen",
  SubscriptionsAcknowledged: "notifications/subscriptions/acknowledged",
  /** The tasks extension's answers to a task's input requests. */
  TasksUpdate: "tasks/update"
} as const

/**
 * A server's caching hint for a modern list, read or discover result (SEP-2549): both fields
 * given — `ttlMs` how long it may be used (0: stale at once), `cacheScope` whether it may be
 * shared across authorization contexts.
 *
 * @since 0.1.0
 */
export type CacheHint = Required<CacheHints>

/**
 * What a client opts in to on a `subscriptions/listen` stream.
 *
 * @since 0.1.0
 */
export interface SubscriptionFilter {
  readonly toolsListChanged?: boolean | undefined
  readonly promptsListChanged?: boolean | undefined
  readonly resourcesListChanged?: boolean | undefined
  readonly resourceSubscriptions?: ReadonlyArray<string> | undefined
}
