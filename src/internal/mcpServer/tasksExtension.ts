/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) for modern requests: the
 * server decides, per tool (`execution.taskSupport`), to run a call as a task when the
 * request declares the extension, and answers with a flat `CreateTaskResult`. Tasks are
 * the server's (a modern client's requests may arrive anywhere), kept for their `ttlMs`.
 * `tasks/get` tells a task with its result or error inlined and, while it waits for input,
 * the requests it waits on; `tasks/update` answers them (the task's fiber resumes: no
 * replay here); `tasks/cancel` interrupts it.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import { randomUUID } from "node:crypto"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { Client, RequestClientOptions, TaskOptions } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import { Context } from "./context.js"
import type { McpServerError } from "./error.js"
import { internalError, invalidParams, methodNotFound, missingClientCapability } from "./errors.js"
import { checkAnswer } from "./mrtr.js"
import type { Session } from "./session.js"

/** The extension's identifier. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

/** The methods of the extension. */
export const TASK_METHODS: ReadonlySet<string> = new Set([
  McpSchema.Method.TasksGet,
  McpSchema.Method.TasksCancel,
  McpSchema.ModernMethod.TasksUpdate
])

// How long a task is kept, unless `TaskOptions.ttlMs` says otherwise: an hour.
const DEFAULT_TTL_MS = 3_600_000

interface Pending {
  readonly request: { readonly method: string; readonly params: Record<string, unknown> }
  readonly answer: Deferred.Deferred<Record<string, unknown>>
}

// A task: what tasks/get tells, and the fiber that runs it.
interface Entry {
  task: Record<string, unknown> & { readonly taskId: string; status: string }
  outcome: { readonly result: Record<string, unknown> } | { readonly error: Record<string, unknown> } | undefined
  readonly pending: Map<string, Pending>
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
}

/** The server's tasks. */
export interface Table {
  readonly entries: Map<string, Entry>
  readonly scope: Scope.Scope
  readonly options: TaskOptions
}

/** The task table of a new server; tasks end with its Scope. */
export const make = (options: TaskOptions): Effect.Effect<Table, never, Scope.Scope> =>
  Effect.map(Effect.scope, (scope) => ({ entries: new Map(), scope, options }))

const declared = (client: Client): boolean => {
  const extensions = (client.capabilities as { readonly extensions?: unknown }).extensions
  return typeof extensions === "object" && extensions !== null && TASKS_EXTENSION in extensions
}

const missingExtension = () => missingClientCapability({ extensions: { [TASKS_EXTENSION]: {} } })

const TERMINAL = new Set(["completed", "failed", "cancelled"])

const stamp = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

const update = (entry: Entry, patch: Record<string, unknown>) =>
  Effect.map(stamp, (now) => {
    entry.task = { ...entry.task, ...patch, lastUpdatedAt: now }
  })

// A task's way to its client: each request waits until tasks/update answers it.
const input = (entry: Entry) => ({
  ask: (
    method: string,
    params: Record<string, unknown> | undefined,
    options: RequestClientOptions | undefined
  ): Effect.Effect<Record<string, unknown>, McpServerError> =>
    Effect.gen(function*() {
      const key = options?.key ?? randomUUID()
      const answer = yield* Deferred.make<Record<string, unknown>>()
      entry.pending.set(key, { request: { method, params: params ?? {} }, answer })
      yield* update(entry, { status: "input_required" })
      const answered = yield* Deferred.await(answer)
      entry.pending.delete(key)
      if (entry.pending.size === 0) yield* update(entry, { status: "working" })
      return answered
    })
})

// Runs `call` as a task in the server's Scope; answers with the task as created.
const start = (
  table: Table,
  call: (entry: Entry) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
): Effect.Effect<Record<string, unknown>> =>
  Effect.gen(function*() {
    const now = yield* stamp
    const ttlMs = table.options.ttlMs ?? DEFAULT_TTL_MS
    const entry: Entry = {
      task: {
        taskId: randomUUID(),
        status: "working",
        createdAt: now,
        lastUpdatedAt: now,
        ttlMs,
        pollIntervalMs: table.options.pollInterval ?? 1000
      },
      outcome: undefined,
      pending: new Map(),
      fiber: undefined
    }
    table.entries.set(entry.task.taskId, entry)
    const settle = (exit: Exit.Exit<Record<string, unknown>, Peer.HandlerError>) =>
      Effect.suspend(() => {
        if (Exit.isSuccess(exit)) {
          entry.outcome = { result: { ...exit.value, resultType: "complete" } }
          return update(entry, { status: "completed" })
        }
        const error = exit.cause._tag === "Fail" ? exit.cause.error : internalError
        entry.outcome = { error: { code: error.code, message: error.message, data: error.data } }
        return update(entry, { status: "failed" })
      })
    entry.fiber = yield* call(entry).pipe(
      Effect.onExit((exit) => Exit.isInterrupted(exit) ? Effect.void : settle(exit)),
      Effect.forkIn(table.scope)
    )
    // Kept for its ttlMs from its creation, then forgotten.
    yield* Effect.sleep(ttlMs).pipe(
      Effect.zipRight(Effect.sync(() => table.entries.delete(entry.task.taskId))),
      Effect.forkIn(table.scope)
    )
    return { ...entry.task, resultType: "task" }
  })

const find = (table: Table, request: JsonRpc.Request) => {
  const entry = table.entries.get(String(request.params?.taskId))
  return entry === undefined
    ? Effect.fail(invalidParams(`Unknown task: ${String(request.params?.taskId)}`))
    : Effect.succeed(entry)
}

const detailed = (entry: Entry): Record<string, unknown> => {
  const inputRequests: Record<string, unknown> = {}
  for (const [key, pending] of entry.pending) inputRequests[key] = pending.request
  return {
    ...entry.task,
    ...(entry.task.status === "input_required" ? { inputRequests } : {}),
    ...entry.outcome
  }
}

// tasks/update: answers to what the task waits on; other keys are ignored.
const answer = (entry: Entry, request: JsonRpc.Request) =>
  Effect.suspend(() => {
    const responses = request.params?.inputResponses
    if (typeof responses !== "object" || responses === null || Array.isArray(responses)) {
      return Effect.fail(invalidParams("tasks/update needs 'inputResponses'"))
    }
    const answers: Array<Effect.Effect<boolean>> = []
    for (const [key, value] of Object.entries(responses as Record<string, unknown>)) {
      const pending = entry.pending.get(key)
      if (pending === undefined) continue
      const problem = checkAnswer(pending.request.method, value, pending.request.params)
      if (problem !== undefined) return Effect.fail(invalidParams(`inputResponses.${key} ${problem}`))
      answers.push(Deferred.succeed(pending.answer, value as Record<string, unknown>))
    }
    // Answered keys leave the table at once, so the next tasks/get shows only what is left.
    for (const key of Object.keys(responses as Record<string, unknown>)) entry.pending.delete(key)
    return Effect.as(Effect.all(answers, { discard: true }), {})
  })

const cancel = (entry: Entry) =>
  TERMINAL.has(entry.task.status)
    ? Effect.succeed({})
    : Effect.gen(function*() {
      if (entry.fiber !== undefined) yield* Fiber.interrupt(entry.fiber)
      entry.pending.clear()
      yield* update(entry, { status: "cancelled" })
      return {}
    })

/**
 * A modern request on the tasks surface: the extension's methods, and tools/call of a tool
 * that runs as a task; anything else is `plain`, the request answered as usual.
 */
export const route = (
  table: Table | undefined,
  ctx: Context<Session>,
  plain: Effect.Effect<Record<string, unknown>, Peer.HandlerError>,
  run: (ctx: Context<Session>) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> => {
  const request = ctx.request
  if (TASK_METHODS.has(request.method)) {
    if (table === undefined) return Effect.fail(methodNotFound(request.method))
    if (!declared(ctx.client)) return Effect.fail(missingExtension())
    return Effect.flatMap(find(table, request), (entry) =>
      request.method === McpSchema.Method.TasksGet
        ? Effect.succeed(detailed(entry))
        : request.method === McpSchema.Method.TasksCancel
        ? cancel(entry)
        : answer(entry, request))
  }
  const tools = ctx.session.handlers?.tools
  if (table === undefined || request.method !== McpSchema.Method.ToolsCall || tools === undefined) return plain
  return Effect.flatMap(tools.list(ctx), (all) => {
    const support = all.find((tool) => tool.name === request.params?.name)?.execution?.taskSupport
    if (support !== "optional" && support !== "required") return plain
    if (!declared(ctx.client)) return support === "required" ? Effect.fail(missingExtension()) : plain
    return start(table, (entry) =>
      run(
        new Context(
          ctx.session,
          request,
          { taskId: entry.task.taskId, status: (statusMessage) => update(entry, { statusMessage }) },
          input(entry)
        )
      ))
  })
}
