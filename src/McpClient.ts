/**
 * One connection to one MCP server: the initialize handshake and revision negotiation,
 * calls gated on the capabilities the server declared, complete (bounded) pagination, and
 * tool results checked against the tool's outputSchema.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Queue from "effect/Queue"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ValidatorCache } from "./internal/jsonSchema.js"
import { isPlainCallToolResult } from "./internal/mcpClient/toolResult.js"
import { traced } from "./internal/traced.js"
import type * as JsonRpc from "./JsonRpc.js"
import * as McpError from "./McpError.js"
import * as McpSchema from "./McpSchema.js"
import * as Peer from "./Peer.js"
import type { Transport } from "./Transport.js"

/**
 * Options of a connection.
 *
 * @since 0.1.0
 */
export interface Options {
  /** Who we are, sent in initialize. Default: mcp-fleet. */
  readonly clientInfo?: McpSchema.Implementation | undefined
  /** The revision to ask for. Default: the latest, 2025-11-25. */
  readonly protocolVersion?: McpSchema.ProtocolVersion | undefined
  /** Capabilities to declare; their handlers go in `handlers`. Default: none. */
  readonly capabilities?: McpSchema.ClientCapabilities | undefined
  /** Handlers for requests the server sends (ping is answered by default). */
  readonly handlers?: Peer.Options["handlers"]
  /** The default timeout of a request. Default: 60 s. */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** How long the server may take to answer initialize. Default: 30 s. */
  readonly initializeTimeout?: Duration.DurationInput | undefined
  /** The most pages one list may have. Default: 100. */
  readonly maxPages?: number | undefined
  /** The most items one list may have. Default: 100,000. */
  readonly maxItems?: number | undefined
}

/**
 * Options of one tool call.
 *
 * @since 0.1.0
 */
export interface CallToolOptions extends Peer.RequestOptions {
  /** `_meta` to send with the call. */
  readonly meta?: Record<string, unknown> | undefined
}

/**
 * A reference to complete an argument of: a prompt, or a resource template.
 *
 * @since 0.1.0
 */
export type CompletionRef = McpSchema.PromptReference | McpSchema.ResourceTemplateReference

/**
 * An open, initialized connection to one server.
 *
 * @since 0.1.0
 */
export interface McpClient {
  /** The server's name (from the transport). */
  readonly server: string
  /** The revision both sides agreed on. */
  readonly protocolVersion: McpSchema.ProtocolVersion
  readonly serverInfo: McpSchema.Implementation
  readonly capabilities: McpSchema.ServerCapabilities
  readonly instructions: string | undefined
  /** All tools, every page. */
  readonly listTools: () => Effect.Effect<ReadonlyArray<McpSchema.Tool>, McpError.McpError>
  /**
   * Calls a tool. A result with `isError: true` is a value, not a failure. Structured
   * content is checked against the tool's outputSchema. Progress resets the timeout
   * unless `resetTimeoutOnProgress: false`.
   */
  readonly callTool: (
    name: string,
    args?: Record<string, unknown> | undefined,
    options?: CallToolOptions | undefined
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
  readonly listResources: () => Effect.Effect<ReadonlyArray<McpSchema.Resource>, McpError.McpError>
  readonly listResourceTemplates: () => Effect.Effect<ReadonlyArray<McpSchema.ResourceTemplate>, McpError.McpError>
  readonly readResource: (uri: string) => Effect.Effect<McpSchema.ReadResourceResult, McpError.McpError>
  readonly subscribeResource: (uri: string) => Effect.Effect<void, McpError.McpError>
  readonly unsubscribeResource: (uri: string) => Effect.Effect<void, McpError.McpError>
  readonly listPrompts: () => Effect.Effect<ReadonlyArray<McpSchema.Prompt>, McpError.McpError>
  readonly getPrompt: (
    name: string,
    args?: Readonly<Record<string, string>> | undefined
  ) => Effect.Effect<McpSchema.GetPromptResult, McpError.McpError>
  readonly complete: (
    ref: CompletionRef,
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: Readonly<Record<string, string>> } | undefined
  ) => Effect.Effect<McpSchema.CompleteResult, McpError.McpError>
  readonly setLoggingLevel: (level: McpSchema.LoggingLevel) => Effect.Effect<void, McpError.McpError>
  readonly ping: () => Effect.Effect<void, McpError.McpError>
  /** The server's notifications (list_changed, resources/updated, log messages, progress, ...). */
  readonly notifications: Stream.Stream<McpSchema.ServerNotification>
  /**
   * Subscribes at once, so nothing sent after this returns is missed, and gives the
   * notifications as received. The subscription ends with the Scope.
   */
  readonly subscribe: Effect.Effect<Queue.Dequeue<JsonRpc.Notification>, never, Scope.Scope>
  /** Sends any request; the result is checked against `schema`. */
  readonly request: <A, I>(
    method: string,
    params: Record<string, unknown> | undefined,
    schema: Schema.Schema<A, I>,
    options?: Peer.RequestOptions | undefined
  ) => Effect.Effect<A, McpError.McpError>
  /** Waits until the connection ends and returns why. */
  readonly closed: Effect.Effect<McpError.McpError>
}

/**
 * The McpClient service tag, for programs that work with one server.
 *
 * @since 0.1.0
 */
export const McpClient = Context.GenericTag<McpClient>("mcp-fleet/McpClient")

const defaultClientInfo: McpSchema.Implementation = { name: "mcp-fleet", version: "0.1.0" }

// Decoders are built once per schema, not per message.
const decoders = new WeakMap<Schema.Schema<any, any>, (value: unknown) => Either.Either<any, ParseResult.ParseError>>()
const decoderOf = <A, I>(schema: Schema.Schema<A, I>): (value: unknown) => Either.Either<A, ParseResult.ParseError> => {
  let decoder = decoders.get(schema)
  if (decoder === undefined) {
    decoder = McpSchema.decodeUnknown(schema)
    decoders.set(schema, decoder)
  }
  return decoder
}

const isSupported = (version: string): version is McpSchema.ProtocolVersion =>
  (McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(version)

type Feature = "tools" | "resources" | "resources.subscribe" | "prompts" | "completions" | "logging"

/**
 * Connects over the Transport in context: sends initialize, checks the revision the server
 * chose, sends notifications/initialized. The connection ends with the Scope.
 *
 * @since 0.1.0
 */
export const make = (options: Options = {}): Effect.Effect<McpClient, McpError.McpError, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const peer = yield* Peer.make({ handlers: options.handlers, requestTimeout: options.requestTimeout })
    const scope = yield* Effect.scope
    const server = peer.server
    const maxPages = options.maxPages ?? 100
    const maxItems = options.maxItems ?? 100_000
    // Subscribed before initialize, so nothing the server says is missed.
    const own = yield* peer.subscribe

    const decode = <A, I>(method: string, schema: Schema.Schema<A, I>, value: unknown) => {
      const result = decoderOf(schema)(value)
      return Either.isRight(result)
        ? Effect.succeed(result.right)
        : Effect.fail(McpError.make(
          server,
          new McpError.ValidationReason({
            method,
            message: `the answer does not match the protocol: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`
          })
        ))
    }

    const request: McpClient["request"] = (method, params, schema, requestOptions) =>
      Effect.flatMap(peer.request(method, params, requestOptions), (result) => decode(method, schema, result))

    const initialized = yield* request(
      McpSchema.Method.Initialize,
      {
        protocolVersion: options.protocolVersion ?? McpSchema.LATEST_PROTOCOL_VERSION,
        capabilities: options.capabilities ?? {},
        clientInfo: options.clientInfo ?? defaultClientInfo
      },
      McpSchema.InitializeResult,
      { timeout: options.initializeTimeout ?? "30 seconds" }
    )
    const protocolVersion = initialized.protocolVersion
    if (!isSupported(protocolVersion)) {
      return yield* Effect.fail(McpError.make(
        server,
        new McpError.UnsupportedReason({
          message: `the server chose protocol revision ${protocolVersion}; mcp-fleet speaks ${
            McpSchema.SUPPORTED_PROTOCOL_VERSIONS.join(", ")
          }`
        })
      ))
    }
    yield* peer.notify(McpSchema.Method.Initialized)
    const capabilities = initialized.capabilities

    const supports = (feature: Feature): boolean => {
      switch (feature) {
        case "resources.subscribe":
          return capabilities.resources?.subscribe === true
        case "completions":
          // 2024-11-05 had no completions capability: completion came with prompts or resources.
          return capabilities.completions !== undefined ||
            (protocolVersion === "2024-11-05" && (capabilities.prompts !== undefined || capabilities.resources !== undefined))
        default:
          return capabilities[feature] !== undefined
      }
    }
    const unsupported = (feature: Feature, action: string) =>
      Effect.fail(McpError.make(
        server,
        new McpError.UnsupportedReason({
          message: `cannot ${action}: the server did not declare the '${feature}' capability`
        })
      ))
    const gate = <A>(feature: Feature, action: string, effect: Effect.Effect<A, McpError.McpError>) =>
      supports(feature) ? effect : unsupported(feature, action)

    const listAll = <R extends { readonly nextCursor?: string | undefined }, A>(
      method: string,
      schema: Schema.Schema<R, any>,
      itemsOf: (result: R) => ReadonlyArray<A>
    ): Effect.Effect<ReadonlyArray<A>, McpError.McpError> =>
      Effect.gen(function*() {
        const items: Array<A> = []
        const seen = new Set<string>()
        let cursor: string | undefined
        for (let page = 1;; page++) {
          if (page > maxPages) {
            return yield* Effect.fail(McpError.make(
              server,
              new McpError.LimitReason({ what: `${method}: the number of pages`, size: page, limit: maxPages })
            ))
          }
          const result = yield* request(method, cursor === undefined ? undefined : { cursor }, schema)
          for (const item of itemsOf(result)) items.push(item)
          if (items.length > maxItems) {
            return yield* Effect.fail(McpError.make(
              server,
              new McpError.LimitReason({ what: `${method}: the number of items`, size: items.length, limit: maxItems })
            ))
          }
          cursor = result.nextCursor
          if (cursor === undefined) return items
          if (seen.has(cursor)) {
            return yield* Effect.fail(McpError.make(
              server,
              new McpError.ValidationReason({ method, message: `the server repeated the cursor ${JSON.stringify(cursor)}` })
            ))
          }
          seen.add(cursor)
        }
      })

    // The outputSchema of each tool from the latest listing; none until tools are listed.
    const validators = new ValidatorCache()
    let outputSchemas: Map<string, Record<string, unknown>> | undefined
    yield* Queue.take(own).pipe(
      Effect.tap((notification) => {
        if (notification.method === McpSchema.Method.ToolsListChanged) outputSchemas = undefined
      }),
      Effect.forever,
      Effect.forkScoped
    )

    const listTools = traced("McpClient.listTools")(() =>
      gate(
        "tools",
        "list tools",
        listAll(McpSchema.Method.ToolsList, McpSchema.ListToolsResult, (result) => result.tools)
      ).pipe(Effect.tap((tools) => {
        const schemas = new Map<string, Record<string, unknown>>()
        for (const tool of tools) if (tool.outputSchema) schemas.set(tool.name, tool.outputSchema)
        outputSchemas = schemas
      }))
    )

    const checkStructured = (name: string, result: McpSchema.CallToolResult) => {
      const schema = outputSchemas?.get(name)
      if (schema === undefined || result.isError === true) return Effect.succeed(result)
      const invalid = (message: string) =>
        Effect.fail(McpError.make(
          server,
          new McpError.ValidationReason({ method: McpSchema.Method.ToolsCall, message: `tool '${name}' ${message}` })
        ))
      if (result.structuredContent === undefined) return invalid("has an outputSchema but returned no structuredContent")
      const validator = validators.get(schema)
      if (Either.isLeft(validator)) return invalid(`has an outputSchema that cannot be used: ${validator.left}`)
      const problem = validator.right(result.structuredContent)
      return problem === undefined
        ? Effect.succeed(result)
        : invalid(`returned structuredContent that does not match its outputSchema: ${problem}`)
    }

    // Structured content can only be checked against a known outputSchema: list the tools
    // first, once, however many calls are waiting for it.
    let listing: Deferred.Deferred<void, McpError.McpError> | undefined
    const ensureListed = Effect.suspend(() => {
      if (outputSchemas !== undefined) return Effect.void
      if (listing !== undefined) return Deferred.await(listing)
      const done = Deferred.unsafeMake<void, McpError.McpError>(FiberId.none)
      listing = done
      const list = Effect.asVoid(listTools()).pipe(
        Effect.intoDeferred(done),
        Effect.ensuring(Effect.sync(() => listing = undefined))
      )
      return Effect.zipRight(Effect.forkIn(list, scope), Deferred.await(done))
    })

    // Tool calls are the hot path: what can be decided once is decided here, not per call.
    const toolsSupported = supports("tools")
    const resetOnProgress: Peer.RequestOptions = { resetTimeoutOnProgress: true }
    const toolResult = (name: string, result: Record<string, unknown>) =>
      outputSchemas?.has(name) !== true && isPlainCallToolResult(result)
        ? Effect.succeed(result as McpSchema.CallToolResult)
        : Effect.flatMap(
          decode(McpSchema.Method.ToolsCall, McpSchema.CallToolResult, result),
          (decoded) => checkStructured(name, decoded)
        )

    const callTool = traced("McpClient.callTool")((
      name: string,
      args?: Record<string, unknown>,
      callOptions?: CallToolOptions
    ) => {
      if (!toolsSupported) return unsupported("tools", "call tools")
      let params: Record<string, unknown> = { name, arguments: args ?? {} }
      let requestOptions = resetOnProgress
      if (callOptions !== undefined) {
        const { meta, ...rest } = callOptions
        if (meta !== undefined) params = { name, arguments: args ?? {}, _meta: meta }
        requestOptions = { resetTimeoutOnProgress: true, ...rest }
      }
      const call = Effect.flatMap(
        peer.request(McpSchema.Method.ToolsCall, params, requestOptions),
        (result) => toolResult(name, result)
      )
      return outputSchemas === undefined ? Effect.zipRight(ensureListed, call) : call
    })

    const emptyRequest = (feature: Feature, action: string, method: string, params?: Record<string, unknown>) =>
      gate(feature, action, Effect.asVoid(request(method, params, McpSchema.EmptyResult)))

    const client: McpClient = {
      server,
      protocolVersion,
      serverInfo: initialized.serverInfo,
      capabilities,
      instructions: initialized.instructions,
      listTools,
      callTool,
      listResources: traced("McpClient.listResources")(() =>
        gate(
          "resources",
          "list resources",
          listAll(McpSchema.Method.ResourcesList, McpSchema.ListResourcesResult, (result) => result.resources)
        )
      ),
      listResourceTemplates: traced("McpClient.listResourceTemplates")(() =>
        gate(
          "resources",
          "list resource templates",
          listAll(
            McpSchema.Method.ResourcesTemplatesList,
            McpSchema.ListResourceTemplatesResult,
            (result) => result.resourceTemplates
          )
        )
      ),
      readResource: traced("McpClient.readResource")((uri: string) =>
        gate("resources", "read resources", request(McpSchema.Method.ResourcesRead, { uri }, McpSchema.ReadResourceResult))
      ),
      subscribeResource: traced("McpClient.subscribeResource")((uri: string) =>
        emptyRequest("resources.subscribe", "subscribe to resources", McpSchema.Method.ResourcesSubscribe, { uri })
      ),
      unsubscribeResource: traced("McpClient.unsubscribeResource")((uri: string) =>
        emptyRequest("resources.subscribe", "unsubscribe from resources", McpSchema.Method.ResourcesUnsubscribe, { uri })
      ),
      listPrompts: traced("McpClient.listPrompts")(() =>
        gate("prompts", "list prompts", listAll(McpSchema.Method.PromptsList, McpSchema.ListPromptsResult, (result) => result.prompts))
      ),
      getPrompt: traced("McpClient.getPrompt")((name: string, args?: Readonly<Record<string, string>>) =>
        gate(
          "prompts",
          "get prompts",
          request(
            McpSchema.Method.PromptsGet,
            args === undefined ? { name } : { name, arguments: args },
            McpSchema.GetPromptResult
          )
        )
      ),
      complete: traced("McpClient.complete")((ref, argument, context) =>
        gate(
          "completions",
          "complete arguments",
          request(
            McpSchema.Method.CompletionComplete,
            context === undefined ? { ref, argument } : { ref, argument, context },
            McpSchema.CompleteResult
          )
        )
      ),
      setLoggingLevel: traced("McpClient.setLoggingLevel")((level: McpSchema.LoggingLevel) =>
        emptyRequest("logging", "set the logging level", McpSchema.Method.LoggingSetLevel, { level })
      ),
      ping: traced("McpClient.ping")(() =>
        Effect.asVoid(request(McpSchema.Method.Ping, undefined, McpSchema.EmptyResult))
      ),
      notifications: peer.notifications.pipe(
        Stream.filterMap((notification) => Either.getRight(McpSchema.decodeServerNotification(notification.method, notification.params)))
      ),
      subscribe: peer.subscribe,
      request,
      closed: peer.closed
    }
    return client
  })

/**
 * A layer providing an McpClient over the Transport it is given.
 *
 * @since 0.1.0
 */
export const layer = (options: Options = {}): Layer.Layer<McpClient, McpError.McpError, Transport> =>
  Layer.scoped(McpClient, make(options))
