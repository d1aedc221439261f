/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) for modern requests: the
 * server decides, per tool (`execution.taskSupport`), to run a call as a task when the
 * request declares the extension, and answers with a flat `CreateTaskResult`. The call's
 * handler starts inline, as an MRTR round, and becomes the task once it asks for input, waits
 * on anything else, or ends (see `McpServer.TaskOptions`); input it asks with `beforeTask`
 * before that goes by MRTR. Tasks are the server's (a modern client's requests may arrive
 * anywhere), kept for their `ttlMs`, each bound to its caller's authorization context when it
 * has one (with OAuth: another context's requests find no such task), its id a random UUID
 * otherwise its only guard; a task keeps the Scope of its request's handlers (when they were
 * made for it) open until it ends. The limits of `taskLimits.ts` hold, the requestor being
 * the caller's authorization context, or all callers without one (a modern request's client
 * is only its own claim): a call to become a task counts from its start, inline, so a burst
 * cannot pass them. `tasks/get` tells a task with its result or error inlined and, while it
 * waits for input, the requests it waits on; `tasks/update` answers them (the task's fiber
 * resumes: no replay here); `tasks/cancel` interrupts it.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Scope from "effect/Scope"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { Client, Outbound, RequestClientOptions, TaskOptions } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import { randomUUID } from "../crypto.js"
import { Context } from "./context.js"
import type { McpServerError } from "./error.js"
import { internalError, invalidParams, methodNotFound, missingClientCapability } from "./errors.js"
import { sameCaller } from "./http/guard.js"
import * as Mrtr from "./mrtr.js"
import type { Session } from "./session.js"
import * as Limits from "./taskLimits.js"
import { DEFAULT_TTL_MS, find, runsAsTask, type TaskLink } from "./tasks.js"

/** The extension's identifier. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

/** The methods of the extension. */
export const TASK_METHODS: ReadonlySet<string> = new Set([
  McpSchema.Method.TasksGet,
  McpSchema.Method.TasksCancel,
  McpSchema.ModernMethod.TasksUpdate
])

interface Pending {
  readonly request: { readonly method: string; readonly params: Record<string, unknown> }
  readonly answer: Deferred.Deferred<Record<string, unknown>>
}

// A call of a task tool: what tasks/get tells, the fiber that runs it, whose it is, and the
// timer that forgets it. `listed` once it became a task (before that it is an inline call,
// in no table but the table's `starting`).
interface Entry {
  task: Record<string, unknown> & { readonly taskId: string; status: string }
  readonly owner: Outbound["caller"]
  outcome: { readonly result: Record<string, unknown> } | { readonly error: Record<string, unknown> } | undefined
  readonly pending: Map<string, Pending>
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
  expiry: Fiber.RuntimeFiber<unknown> | undefined
  listed: boolean
}

/** The server's tasks. */
export interface Table {
  readonly entries: Map<string, Entry>
  /** The calls that may still become tasks, counted against the limits already. */
  readonly starting: Set<Entry>
  readonly scope: Scope.Scope
  readonly options: TaskOptions
  /** The key of the MRTR rounds a call asks in before it becomes a task. */
  readonly secret: Uint8Array
}

/** The task table of a new server; tasks end with its Scope. */
export const make = (options: TaskOptions, secret: Uint8Array): Effect.Effect<Table, never, Scope.Scope> =>
  Effect.map(Effect.scope, (scope) => ({ entries: new Map(), starting: new Set(), scope, options, secret }))

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

// A task's request to its client: it waits until tasks/update answers it.
const askInTask = (
  entry: Entry,
  method: string,
  params: Record<string, unknown> | undefined,
  options: RequestClientOptions | undefined
): Effect.Effect<Record<string, unknown>> =>
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

// A call's way to its client: by MRTR while inline and the request says `beforeTask`; else
// through the task, which its first such request creates (`goAsync`).
const inputOf = (entry: Entry, round: Mrtr.Round, goAsync: Effect.Effect<void>): Mrtr.Input => ({
  ask: (method, params, options): Effect.Effect<Record<string, unknown>, McpServerError> =>
    Effect.suspend(() =>
      !entry.listed && options?.beforeTask === true
        ? round.ask(method, params, options)
        : Effect.zipRight(goAsync, askInTask(entry, method, params, options))
    )
})

const fresh = (table: Table, owner: Outbound["caller"]): Effect.Effect<Entry> =>
  Effect.map(stamp, (now) => ({
    owner,
    task: {
      taskId: randomUUID(),
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: table.options.ttlMs ?? DEFAULT_TTL_MS,
      pollIntervalMs: table.options.pollInterval ?? 1000
    },
    outcome: undefined,
    pending: new Map(),
    fiber: undefined,
    expiry: undefined,
    listed: false
  }))

// The call's end, as tasks/get tells it: a result (a tool's own error included) completes
// the task, a protocol error fails it.
const settle = (entry: Entry, exit: Exit.Exit<Record<string, unknown>, Peer.HandlerError>) =>
  Effect.suspend(() => {
    if (Exit.isSuccess(exit)) {
      entry.outcome = { result: { ...exit.value, resultType: "complete" } }
      return update(entry, { status: "completed" })
    }
    const error = exit.cause._tag === "Fail" ? exit.cause.error : internalError
    entry.outcome = { error: { code: error.code, message: error.message, data: error.data } }
    return update(entry, { status: "failed" })
  })

// The call becomes a task: listed (so tasks/get finds it before the CreateTaskResult goes
// out), kept for its ttlMs from now, then forgotten, its work ended with it (nobody could
// reach a task past its ttlMs: it would hold its work, and what that holds, forever). The
// CreateTaskResult is its seed state,
// `working`: whatever it did since (asked, ended) shows on tasks/get, as a CreateTaskResult
// carries neither inputRequests nor an outcome, and a client polls a working task.
const list = (table: Table, entry: Entry): Effect.Effect<Record<string, unknown>> =>
  Effect.suspend(() => {
    const created = { ...entry.task, status: "working", resultType: "task" }
    if (entry.listed) return Effect.succeed(created)
    entry.listed = true
    table.starting.delete(entry)
    table.entries.set(entry.task.taskId, entry)
    return Effect.sleep(Number(entry.task.ttlMs)).pipe(
      Effect.zipRight(Effect.suspend(() => cancel(entry))),
      Effect.zipRight(Effect.sync(() => table.entries.delete(entry.task.taskId))),
      Effect.forkIn(table.scope),
      Effect.map((expiry) => {
        entry.expiry = expiry
        return created
      })
    )
  })

// How many times the scheduler turns before an inline call that neither ended nor asked is
// judged to be waiting on real work (as Mrtr's rounds gather requests asked at once).
const QUIET = 16

const quiet = (round: Mrtr.Round, holds: Holds): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.forEach(Array.from({ length: QUIET }), () => Effect.yieldNow(), { discard: true }),
    // A round that stopped for input ends as an InputRequiredResult, not as a task; a call
    // kept inline waits as long as it is held, then is judged again.
    () =>
      Effect.flatMap(
        Deferred.isDone(round.stopped),
        (stopped) =>
          stopped ? Effect.never : holds.held() ? Effect.zipRight(holds.none, quiet(round, holds)) : Effect.void
      )
  )

// What keeps a call inline while it waits (`RequestContext.keepInline`), and who waits for
// nothing to.
class Holds {
  private count = 0
  private free: Deferred.Deferred<void> | undefined

  held(): boolean {
    return this.count > 0
  }

  keep<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.acquireUseRelease(Effect.sync(() => this.count++), () => effect, () =>
      Effect.suspend(() => {
        const free = this.free
        if (--this.count > 0 || free === undefined) return Effect.void
        this.free = undefined
        return Deferred.succeed(free, undefined)
      }))
  }

  get none(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.count === 0) return Effect.void
      const free = this.free ?? Deferred.unsafeMake<void>(FiberId.none)
      this.free = free
      return Deferred.await(free)
    })
  }
}

// The limits' view of the table for `caller`: its requestor is its authorization context,
// or, without one, every caller without one.
const census = (caller: Outbound["caller"]): Limits.Census<Entry> => ({
  working: (entry) => !TERMINAL.has(entry.task.status),
  mine: (entry) =>
    caller === undefined ? entry.owner === undefined : entry.owner !== undefined && sameCaller(entry.owner, caller)
})

/**
 * Runs a call of a task tool: its handler (`call`) forked in the server's Scope, inline until
 * it goes async; answers with the task it became, or the round's InputRequiredResult (the
 * handler's run interrupted). `handlers` is the Scope of the request's handlers, which the
 * task keeps open until it ends (none: the server's shared handlers, which outlive it). Refused (-32603) past the limits, before anything runs.
 */
const escalate = (
  table: Table,
  ctx: Context<Session>,
  round: Mrtr.Round,
  handlers: Scope.CloseableScope | undefined,
  call: (ctx: Context<Session>) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> =>
  Effect.gen(function*() {
    const caller = ctx.session.outbound.caller
    yield* Limits.admit(table.options, table.entries, table.starting, census(caller))
    const entry = yield* fresh(table, caller)
    // Counted from now until it is listed or its run ends, whichever comes first.
    return yield* Effect.ensuring(
      Effect.suspend(() => {
        table.starting.add(entry)
        return inline(table, entry, ctx, round, handlers, call)
      }),
      Effect.sync(() => table.starting.delete(entry))
    )
  })

// The call of `escalate`, as `entry`, until it goes async.
const inline = (
  table: Table,
  entry: Entry,
  ctx: Context<Session>,
  round: Mrtr.Round,
  handlers: Scope.CloseableScope | undefined,
  call: (ctx: Context<Session>) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> =>
  Effect.gen(function*() {
    const async = yield* Deferred.make<void>()
    const goAsync = Effect.asVoid(Deferred.succeed(async, undefined))
    const holds = new Holds()
    const link: TaskLink = {
      taskId: entry.task.taskId,
      status: (statusMessage: string) => update(entry, { statusMessage }),
      keepInline: (effect) => holds.keep(effect),
      goAsync
    }
    const task = new Context(ctx.session, ctx.request, link, inputOf(entry, round, goAsync))
    const fiber = yield* call(task).pipe(
      Effect.onExit((exit) => Exit.isInterrupted(exit) ? Effect.void : settle(entry, exit)),
      Effect.ensuring(handlers === undefined ? Effect.void : Scope.close(handlers, Exit.void)),
      Effect.forkIn(table.scope)
    )
    entry.fiber = fiber
    const goesAsync = Effect.raceAll([Deferred.await(async), Effect.asVoid(Fiber.await(fiber)), quiet(round, holds)])
    return yield* Mrtr.run(table.secret, ctx.request, round, Effect.zipRight(goesAsync, list(table, entry))).pipe(
      // Not a task (input asked by MRTR, a refused answer): the run ends. The request given
      // up (its client cancelled it) before its answer went out: so does the task it became,
      // whose id the client may never have seen.
      Effect.onExit((exit) =>
        !entry.listed ? Fiber.interrupt(fiber) : Exit.isSuccess(exit) ? Effect.void : cancel(entry)
      )
    )
  })

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
    // Every answer is checked before any is given: one bad answer refuses the whole update.
    const answered = Object.entries(responses as Record<string, unknown>).flatMap(([key, value]) => {
      const pending = entry.pending.get(key)
      return pending === undefined ? [] : [{ key, value, pending }]
    })
    const check = Effect.forEach(answered, ({ key, pending, value }) =>
      Effect.flatMap(
        Mrtr.checkAnswer(pending.request.method, value, pending.request.params),
        (problem) =>
          problem === undefined ? Effect.void : Effect.fail(invalidParams(`inputResponses.${key} ${problem}`))
      ), { discard: true })
    return Effect.flatMap(check, () => {
      // Answered keys leave the table at once, so the next tasks/get shows only what is left.
      for (const key of Object.keys(responses as Record<string, unknown>)) entry.pending.delete(key)
      const answers = answered.map(({ pending, value }) =>
        Deferred.succeed(pending.answer, value as Record<string, unknown>)
      )
      return Effect.as(Effect.all(answers, { discard: true }), {})
    })
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
 * that runs as a task; anything else is `plain`, the request answered as usual. `input` is
 * the request's way to its client (a tools/call's MRTR round); `handlers` the Scope of the
 * request's handlers, which a task keeps open until it ends (none for shared handlers);
 * `tool` the tool a tools/call names (looked up once by the caller, modern.ts).
 */
export const route = (
  table: Table | undefined,
  ctx: Context<Session>,
  input: Mrtr.Input,
  handlers: Scope.CloseableScope | undefined,
  plain: Effect.Effect<Record<string, unknown>, Peer.HandlerError>,
  run: (ctx: Context<Session>) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>,
  tool: McpSchema.Tool | undefined
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> => {
  const request = ctx.request
  if (TASK_METHODS.has(request.method)) {
    if (table === undefined) return Effect.fail(methodNotFound(request.method))
    if (!declared(ctx.client)) return Effect.fail(missingExtension())
    return Effect.flatMap(
      find(table.entries, request, ctx.session.outbound.caller),
      (entry) =>
        request.method === McpSchema.Method.TasksGet
          ? Effect.succeed(detailed(entry))
          : request.method === McpSchema.Method.TasksCancel
          ? cancel(entry)
          : answer(entry, request)
    )
  }
  if (table === undefined || !(input instanceof Mrtr.Round) || request.method !== McpSchema.Method.ToolsCall) {
    return plain
  }
  if (!runsAsTask(tool)) return plain
  if (!declared(ctx.client)) {
    return tool?.execution?.taskSupport === "required"
      ? Effect.fail(missingExtension())
      : plain
  }
  return escalate(table, ctx, input, handlers, run)
}
