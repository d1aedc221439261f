/**
 * An in-memory MCP server for tests: tools, resources and prompts described as data and
 * Effects, served over a linked Memory transport. Everything it does runs on the Effect
 * clock, so tests drive its timing with the TestClock.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../JsonRpc.js"
import type * as McpSchema from "../McpSchema.js"
import * as Memory from "../Memory.js"
import * as Peer from "../Peer.js"
import { Transport } from "../Transport.js"

/**
 * What a tool handler can do besides answering.
 *
 * @since 0.1.0
 */
export interface ToolContext {
  /** The request as received. */
  readonly request: JsonRpc.Request
  /** Sends a progress notification for this call (if the client asked for progress). */
  readonly progress: (progress: number, total?: number, message?: string) => Effect.Effect<void>
}

/**
 * A tool of the fake server.
 *
 * @since 0.1.0
 */
export interface FakeTool {
  readonly tool: McpSchema.Tool
  readonly call: (
    args: Record<string, unknown>,
    context: ToolContext
  ) => Effect.Effect<McpSchema.CallToolResult, Peer.HandlerError>
}

/**
 * A resource of the fake server.
 *
 * @since 0.1.0
 */
export interface FakeResource {
  readonly resource: McpSchema.Resource
  readonly text: string
}

/**
 * A prompt of the fake server.
 *
 * @since 0.1.0
 */
export interface FakePrompt {
  readonly prompt: McpSchema.Prompt
  readonly get: (args: Record<string, string>) => McpSchema.GetPromptResult
}

/**
 * What the fake server serves.
 *
 * @since 0.1.0
 */
export interface Options {
  /** The server's name, as the client-side transport reports it. Default: "fake". */
  readonly name?: string | undefined
  /** The revision it answers with, whatever the client asks. Default: the one the client asks for. */
  readonly protocolVersion?: string | undefined
  /** Declared capabilities. Default: one for each kind of thing it serves. */
  readonly capabilities?: McpSchema.ServerCapabilities | undefined
  readonly instructions?: string | undefined
  readonly tools?: ReadonlyArray<FakeTool> | undefined
  readonly resources?: ReadonlyArray<FakeResource> | undefined
  readonly prompts?: ReadonlyArray<FakePrompt> | undefined
  /** Split lists into pages of this size. Default: no paging. */
  readonly pageSize?: number | undefined
  /** Raw handlers; they replace the built-in ones of the same method. */
  readonly handlers?: Readonly<Record<string, Peer.Handler>> | undefined
}

/**
 * A running fake server.
 *
 * @since 0.1.0
 */
export interface FakeServer {
  /** The client's end of the connection. */
  readonly transport: Memory.MemoryTransport
  /** The server's own session: send notifications or requests to the client with it. */
  readonly peer: Peer.Peer
  /** Every request received, in order. */
  readonly requests: ReadonlyArray<JsonRpc.Request>
  /** Hangs up, as if the server died. */
  readonly close: Effect.Effect<void>
}

const fail = (code: number, message: string) => Effect.fail(new Peer.HandlerError({ code, message }))

const page = <A>(items: ReadonlyArray<A>, request: JsonRpc.Request, size: number | undefined) => {
  if (size === undefined) return { items, nextCursor: undefined }
  const start = Number(request.params?.cursor ?? 0)
  const end = start + size
  return { items: items.slice(start, end), nextCursor: end < items.length ? String(end) : undefined }
}

const listed = <K extends string, A>(
  key: K,
  items: ReadonlyArray<A>,
  request: JsonRpc.Request,
  size: number | undefined
) => {
  const { items: slice, nextCursor } = page(items, request, size)
  return Effect.succeed(nextCursor === undefined ? { [key]: slice } : { [key]: slice, nextCursor })
}

/**
 * Starts a fake server; it stops with the Scope.
 *
 * @since 0.1.0
 */
export const make = (options: Options = {}): Effect.Effect<FakeServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const tools = options.tools ?? []
    const resources = options.resources ?? []
    const prompts = options.prompts ?? []
    const [client, server] = yield* Memory.makePair({ server: options.name ?? "fake", client: "client" })
    const requests: Array<JsonRpc.Request> = []
    // eslint-disable-next-line prefer-const -- read by the handlers before it is assigned below
    let peer: Peer.Peer | undefined

    const capabilities: McpSchema.ServerCapabilities = options.capabilities ?? {
      ...(tools.length > 0 ? { tools: { listChanged: true } } : {}),
      ...(resources.length > 0 ? { resources: { listChanged: true, subscribe: true } } : {}),
      ...(prompts.length > 0 ? { prompts: { listChanged: true } } : {})
    }

    const builtIn: Record<string, Peer.Handler> = {
      initialize: (request) =>
        Effect.succeed({
          protocolVersion: options.protocolVersion ?? request.params?.protocolVersion,
          capabilities,
          serverInfo: { name: options.name ?? "fake", version: "1.0.0" },
          ...(options.instructions === undefined ? {} : { instructions: options.instructions })
        }),
      "tools/list": (request) => listed("tools", tools.map((entry) => entry.tool), request, options.pageSize),
      "tools/call": (request) => {
        const name = request.params?.name
        const entry = tools.find((candidate) => candidate.tool.name === name)
        if (!entry) return fail(JsonRpc.ErrorCode.InvalidParams, `Unknown tool: ${String(name)}`)
        const token = (request.params?._meta as { progressToken?: unknown } | undefined)?.progressToken
        const context: ToolContext = {
          request,
          progress: (progress, total, message) =>
            token === undefined || peer === undefined ?
              Effect.void :
              Effect.ignore(peer.notify("notifications/progress", {
                progressToken: token,
                progress,
                ...(total === undefined ? {} : { total }),
                ...(message === undefined ? {} : { message })
              }))
        }
        return entry.call((request.params?.arguments ?? {}) as Record<string, unknown>, context) as Effect.Effect<
          Record<string, unknown>,
          Peer.HandlerError
        >
      },
      "resources/list": (request) =>
        listed("resources", resources.map((entry) => entry.resource), request, options.pageSize),
      "resources/templates/list": (request) => listed("resourceTemplates", [], request, options.pageSize),
      "resources/read": (request) => {
        const entry = resources.find((candidate) => candidate.resource.uri === request.params?.uri)
        return entry
          ? Effect.succeed({ contents: [{ uri: entry.resource.uri, text: entry.text }] })
          : fail(JsonRpc.ErrorCode.ResourceNotFound, `Resource not found: ${String(request.params?.uri)}`)
      },
      "resources/subscribe": () => Effect.succeed({}),
      "resources/unsubscribe": () => Effect.succeed({}),
      "prompts/list": (request) => listed("prompts", prompts.map((entry) => entry.prompt), request, options.pageSize),
      "prompts/get": (request) => {
        const entry = prompts.find((candidate) => candidate.prompt.name === request.params?.name)
        return entry
          ? Effect.succeed(entry.get((request.params?.arguments ?? {}) as Record<string, string>))
          : fail(JsonRpc.ErrorCode.InvalidParams, `Unknown prompt: ${String(request.params?.name)}`)
      },
      "logging/setLevel": () => Effect.succeed({})
    }

    const handlers: Record<string, Peer.Handler> = {}
    for (const [method, handler] of Object.entries({ ...builtIn, ...options.handlers })) {
      handlers[method] = (request) => Effect.zipRight(Effect.sync(() => requests.push(request)), handler(request))
    }
    peer = yield* Peer.make({ handlers }).pipe(Effect.provideService(Transport, server))
    return { transport: client, peer, requests, close: client.close }
  })

/**
 * A layer with a fake server's client-side Transport, for code that needs a Transport.
 *
 * @since 0.1.0
 */
export const layer = (options: Options = {}): Layer.Layer<Transport> =>
  Layer.scoped(Transport, Effect.map(make(options), (fake) => fake.transport))
