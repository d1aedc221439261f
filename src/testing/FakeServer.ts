/**
 * An in-memory MCP server for tests: tools, resources and prompts described as data and
 * Effects, served over a linked Memory transport. A tool whose `execution.taskSupport`
 * allows it runs as a task when the call asks for one (2025-11-25: `tasks/get`,
 * `tasks/result`, `tasks/cancel`, `tasks/list`, and `notifications/tasks/status` when
 * `notifyTaskStatus`). Everything it does runs on the Effect clock, so tests drive its
 * timing with the TestClock.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
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

// A tool call running as a task: its latest status, its outcome, the fiber running it.
interface Running {
  task: McpSchema.Task
  readonly outcome: Deferred.Deferred<Record<string, unknown>, Peer.HandlerError>
  fiber: Fiber.RuntimeFiber<unknown> | undefined
}

// The task side: tool calls run in fibers of the server's scope, and the tasks/* handlers.
const makeTasks = (options: Options, peer: () => Peer.Peer | undefined) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const tasks = new Map<string, Running>()
    const stamp = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())
    const update = (running: Running, patch: Partial<McpSchema.Task>) =>
      Effect.gen(function*() {
        running.task = { ...running.task, ...patch, lastUpdatedAt: yield* stamp }
        const session = peer()
        if (options.notifyTaskStatus === true && session !== undefined) {
          yield* Effect.ignore(session.notify("notifications/tasks/status", running.task))
        }
      })
    const find = (request: JsonRpc.Request) => {
      const running = tasks.get(String(request.params?.taskId))
      return running === undefined
        ? fail(JsonRpc.ErrorCode.InvalidParams, `Unknown task: ${String(request.params?.taskId)}`)
        : Effect.succeed(running)
    }
    const start = (
      call: (status: ToolContext["status"]) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
    ) =>
      Effect.gen(function*() {
        const now = yield* stamp
        const task: McpSchema.Task = {
          taskId: `task-${tasks.size + 1}`,
          status: "working",
          ttl: null,
          createdAt: now,
          lastUpdatedAt: now,
          pollInterval: options.taskPollInterval ?? 1000
        }
        const outcome = yield* Deferred.make<Record<string, unknown>, Peer.HandlerError>()
        const running: Running = { task, outcome, fiber: undefined }
        tasks.set(task.taskId, running)
        running.fiber = yield* call((statusMessage) => update(running, { statusMessage })).pipe(
          Effect.exit,
          Effect.flatMap((exit) =>
            Effect.zipRight(
              update(running, { status: Exit.isSuccess(exit) ? "completed" : "failed" }),
              Deferred.done(running.outcome, exit)
            )
          ),
          Effect.forkIn(scope)
        )
        return { task }
      })
    const handlers: Record<string, Peer.Handler> = {
      "tasks/get": (request) => Effect.map(find(request), (running) => running.task),
      "tasks/result": (request) => Effect.flatMap(find(request), (running) => Deferred.await(running.outcome)),
      "tasks/list": (request) =>
        listed("tasks", [...tasks.values()].map((running) => running.task), request, options.pageSize),
      "tasks/cancel": (request) =>
        Effect.flatMap(find(request), (running) =>
          running.task.status !== "working" && running.task.status !== "input_required"
            ? fail(JsonRpc.ErrorCode.InvalidParams, `Task ${running.task.taskId} is already ${running.task.status}`)
            : Effect.gen(function*() {
              if (running.fiber !== undefined) {
                yield* Fiber.interrupt(running.fiber)
              }
              yield* update(running, { status: "cancelled" })
              yield* Deferred.fail(
                running.outcome,
                new Peer.HandlerError({ code: JsonRpc.ErrorCode.InvalidParams, message: "The task was cancelled" })
              )
              return running.task
            }))
    }
    return { start, handlers }
  })

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
    const tasks = yield* makeTasks(options, () => peer)

    const taskTools = tools.some((entry) => {
      const support = entry.tool.execution?.taskSupport
      return support === "optional" || support === "required"
    })
    const capabilities: McpSchema.ServerCapabilities = options.capabilities ?? {
      ...(tools.length > 0 ? { tools: { listChanged: true } } : {}),
      ...(taskTools ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
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
        const call = (status: ToolContext["status"]) =>
          entry.call((request.params?.arguments ?? {}) as Record<string, unknown>, {
            request,
            progress: (progress, total, message) =>
              token === undefined || peer === undefined ?
                Effect.void :
                Effect.ignore(peer.notify("notifications/progress", {
                  progressToken: token,
                  progress,
                  ...(total === undefined ? {} : { total }),
                  ...(message === undefined ? {} : { message })
                })),
            status
          }) as Effect.Effect<Record<string, unknown>, Peer.HandlerError>
        const support = entry.tool.execution?.taskSupport
        if (request.params?.task !== undefined && (support === "optional" || support === "required")) {
          return tasks.start(call)
        }
        return support === "required"
          ? fail(JsonRpc.ErrorCode.MethodNotFound, `Tool ${entry.tool.name} must be called as a task`)
          : call(() => Effect.void)
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
      "logging/setLevel": () => Effect.succeed({}),
      ...tasks.handlers
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
