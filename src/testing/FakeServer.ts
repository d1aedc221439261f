/**
 * An in-memory MCP server for tests: tools, resources and prompts described as data and
 * Effects, served by an `McpServer` over a linked Memory transport. A tool whose `execution.taskSupport`
 * allows it runs as a task when the call asks for one (2025-11-25: `tasks/get`,
 * `tasks/result`, `tasks/cancel`, `tasks/list`, and `notifications/tasks/status` when
 * `notifyTaskStatus`). Everything it does runs on the Effect clock, so tests drive its
 * timing with the TestClock.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../JsonRpc.js"
import type * as McpSchema from "../McpSchema.js"
import * as McpServer from "../McpServer.js"
import * as Memory from "../Memory.js"
import type * as Peer from "../Peer.js"
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
  /** Sets the task's `statusMessage`, when the call runs as a task (told, with `notifyTaskStatus`). */
  readonly status: (message: string) => Effect.Effect<void>
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
  /**
   * Whether it answers 2026-07-28 requests too (McpServer's `modern`). Default: false — a
   * fake of a stateful server, whose tests drive what only a session has (requests to the
   * client mid-call, 2025-11-25 tasks, `resources/subscribe`).
   */
  readonly modern?: boolean | undefined
  /** Declared capabilities. Default: one for each kind of thing it serves. */
  readonly capabilities?: McpSchema.ServerCapabilities | undefined
  readonly instructions?: string | undefined
  readonly tools?: ReadonlyArray<FakeTool> | undefined
  readonly resources?: ReadonlyArray<FakeResource> | undefined
  readonly prompts?: ReadonlyArray<FakePrompt> | undefined
  /** Split lists into pages of this size. Default: no paging. */
  readonly pageSize?: number | undefined
  /** The `pollInterval` of its tasks, in milliseconds. Default: 1000. */
  readonly taskPollInterval?: number | undefined
  /** Sends `notifications/tasks/status` whenever a task's status changes. Default: false. */
  readonly notifyTaskStatus?: boolean | undefined
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

// FakeServer's own defaults: no paging, and a capability for each kind of thing it serves.
const capabilitiesOf = (options: Options): McpSchema.ServerCapabilities => {
  const tools = options.tools ?? []
  const taskTools = tools.some((entry) => {
    const support = entry.tool.execution?.taskSupport
    return support === "optional" || support === "required"
  })
  return {
    ...(tools.length > 0 ? { tools: { listChanged: true } } : {}),
    ...(taskTools ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
    ...((options.resources ?? []).length > 0 ? { resources: { listChanged: true, subscribe: true } } : {}),
    ...((options.prompts ?? []).length > 0 ? { prompts: { listChanged: true } } : {})
  }
}

// The server's end, noting every request it receives (ping only when a handler replaces it).
const recording = (
  transport: Transport,
  requests: Array<JsonRpc.Request>,
  pings: boolean
): Transport => ({
  ...transport,
  listen: (receiver) =>
    transport.listen({
      ...receiver,
      message: (message, related) => {
        if ("method" in message && JsonRpc.isRequest(message) && (pings || message.method !== "ping")) {
          requests.push(message)
        }
        receiver.message(message, related)
      }
    })
})

/**
 * Starts a fake server; it stops with the Scope.
 *
 * @since 0.1.0
 */
export const make = (options: Options = {}): Effect.Effect<FakeServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const name = options.name ?? "fake"
    const server = yield* McpServer.fromItems({
      serverInfo: { name, version: "1.0.0" },
      instructions: options.instructions,
      protocolVersion: options.protocolVersion,
      modern: options.modern === true,
      capabilities: options.capabilities ?? capabilitiesOf(options),
      pageSize: options.pageSize ?? Infinity,
      tasks: { pollInterval: options.taskPollInterval, notifyStatus: options.notifyTaskStatus },
      // A raw handler is told the request alone: a server's requests relate to none of ours.
      methods: options.handlers === undefined ? undefined : Object.fromEntries(
        Object.entries(options.handlers).map(([method, handler]) => [method, (request) => handler(request)])
      ),
      tools: (options.tools ?? []).map((entry) => ({ tool: entry.tool, handler: entry.call })),
      resources: (options.resources ?? []).map((entry) => ({
        resource: entry.resource,
        read: () => Effect.succeed({ contents: [{ uri: entry.resource.uri, text: entry.text }] })
      })),
      prompts: (options.prompts ?? []).map((entry) => ({
        prompt: entry.prompt,
        get: (args) => Effect.sync(() => entry.get(args))
      }))
    })
    const [client, end] = yield* Memory.makePair({ server: name, client: "client" })
    const requests: Array<JsonRpc.Request> = []
    const session = yield* server.connect().pipe(
      Effect.provideService(Transport, recording(end, requests, options.handlers?.ping !== undefined))
    )
    return { transport: client, peer: session.peer, requests, close: client.close }
  })

/**
 * What `spec` serves: the fake server's options, with the name the fleet knows it by.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpecOptions extends Options {
  readonly name: string
  /** The spec's connection key: change it and the fleet restarts the server. Default: the name. */
  readonly key?: string | undefined
}

/**
 * A fake server as a server of the fleet: a `ServerSpec` with a custom transport (written out
 * here, so the kit stays below the fleet's modules) that starts a fresh fake on every
 * connection, and what a test asks of those connections. Give it other `ServerSpec` fields by
 * spreading it: `{ ...FakeServer.spec({ name: "a" }), required: true }`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Spec {
  readonly name: string
  readonly transport: {
    readonly type: "custom"
    readonly key: string
    readonly connect: Effect.Effect<Transport, never, Scope.Scope>
  }
  /** The fake of the latest connection; throws before the first one. */
  readonly current: () => FakeServer
  /** How many connections the fleet made to it. */
  readonly connects: () => number
}

/**
 * A fake server as a `ServerSpec` for a ServerRegistry, a Gateway or a Policy's fleet: each
 * connection starts a fake from `options`, which stops with the connection.
 *
 * @since 0.1.0
 * @category constructors
 */
export const spec = (options: SpecOptions): Spec => {
  let latest: FakeServer | undefined
  let connects = 0
  const { key, ...fake } = options
  return {
    name: options.name,
    transport: {
      type: "custom",
      key: key ?? options.name,
      connect: Effect.map(make(fake), (server) => {
        connects++
        latest = server
        return server.transport
      })
    },
    current: () => {
      if (latest === undefined) throw new Error(`the fake server '${options.name}' was never connected`)
      return latest
    },
    connects: () => connects
  }
}

/**
 * A layer with a fake server's client-side Transport, for code that needs a Transport.
 *
 * @since 0.1.0
 */
export const layer = (options: Options = {}): Layer.Layer<Transport> =>
  Layer.scoped(Transport, Effect.map(make(options), (fake) => fake.transport))
