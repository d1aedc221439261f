/**
 * Task-augmented tool calls (2025-11-25), kept by the server rather than by the session that
 * started them, so a client whose session ended (a dropped HTTP session, a new connection)
 * takes its task up again from another one. A call that carries `task` runs in a fiber of the
 * server's Scope and is answered at once with the task it became; `tasks/get`,
 * `tasks/result`, `tasks/list` and `tasks/cancel` follow it, and
 * `notifications/tasks/status` tells each change when the server asks for it.
 *
 * Access, as the spec's "Task Isolation and Access Control" asks: a task started by a caller
 * with an authorization context (`Outbound.caller`: the access token's principal, with
 * OAuth) is bound to it, and get/result/cancel from another context are answered as for an
 * unknown task (-32602), so nobody learns that it exists; without one, it is reachable by
 * its id from any session, and its id is a random UUID (122 random bits: unguessable).
 * `tasks/list` shows the caller's context's tasks, or, without a context, the tasks its own
 * session started: a session is the one requestor the server can tell apart then, and it
 * lists only ids it was given already (so `tasks.list` stays declared without exposing
 * anyone else's tasks).
 *
 * What a task sends (progress with its request's token, log messages, status notifications,
 * requests to the client) goes to the session that last asked about it (`tasks/get`,
 * `tasks/result`), on the stream of its `tasks/result` while one waits: the session that
 * took it up again, once its first one is gone. A task is kept for its `ttl` from its
 * creation (what the request asks, at most `TaskOptions.ttlMs`), then forgotten, its work
 * ended if it still runs; the limits of `taskLimits.ts` hold (the requestor: the caller's
 * authorization context, or without one the session). A task whose session has gone and that
 * asks its client for input goes `input_required` and waits (within its ttl) for a session
 * to follow it with `tasks/result`, then asks on that stream. Timestamps come from the Clock.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { Client, Outbound, TaskOptions } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import { randomUUID } from "../crypto.js"
import { Context, type SessionLink } from "./context.js"
import { McpServerError } from "./error.js"
import { invalidParams } from "./errors.js"
import { sameCaller } from "./http/guard.js"
import { page } from "./paging.js"
import * as Limits from "./taskLimits.js"

/** How long a task is kept from its creation unless `TaskOptions.ttlMs` says otherwise: an hour. */
export const DEFAULT_TTL_MS = 3_600_000

/** What the tasks need of a session: its link, who its client is, and whether it has ended. */
export interface Requestor extends SessionLink {
  readonly outbound: Outbound
  readonly ended: boolean
}

// A call running as a task: its latest status, its outcome, the fiber running it, whom it
// belongs to (`owner`; `origin`: its session's key), the client that called, and where what
// it sends goes (`follower`; `related`: the request there whose stream carries it, if any),
// the timer that forgets it (`expiry`), and what it waits on while its session has gone
// (`arrived`: a session following it with tasks/result). Once it ended, it holds no session
// nor fiber: it is kept for its ttl, sessions come and go.
interface Running {
  task: McpSchema.Task
  readonly outcome: Deferred.Deferred<Record<string, unknown>, Peer.HandlerError>
  fiber: Fiber.RuntimeFiber<unknown> | undefined
  readonly owner: Outbound["caller"]
  readonly origin: object
  readonly client: Client | undefined
  follower: Requestor | undefined
  related: JsonRpc.RequestId | undefined
  expiry: Fiber.RuntimeFiber<unknown> | undefined
  arrived: Deferred.Deferred<void> | undefined
}

// Each session's key: what a task keeps of the session that started it.
const keys = new WeakMap<Requestor, object>()

const keyOf = (session: Requestor): object => {
  let key = keys.get(session)
  if (key === undefined) keys.set(session, key = {})
  return key
}

/** What a request running as a task knows of it. */
export interface TaskLink {
  readonly taskId: string
  /** The `_meta` what goes out about the request carries (2025-11-25: the task's id; the tasks extension has none). */
  readonly related?: Record<string, unknown> | undefined
  /** Sets the task's status message. */
  readonly status: (message: string) => Effect.Effect<void>
  /** (The tasks extension) Keeps a call that may still become a task inline while `effect` runs. */
  readonly keepInline?: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** (The tasks extension) Makes the call its task now. */
  readonly goAsync?: Effect.Effect<void>
}

/** A tasks method's answer to a request of `session`. */
export type Handler = (
  request: JsonRpc.Request,
  session: Requestor
) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>

/** The server's tasks. */
export interface Tasks {
  /** Runs `call` (given the context it runs in) as a task of `session`, and answers with the task it became. */
  readonly start: (
    session: Requestor,
    request: JsonRpc.Request,
    call: (ctx: Context) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
  ) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
  /** The handlers of tasks/get, tasks/result, tasks/list and tasks/cancel. */
  readonly handlers: Readonly<Record<string, Handler>>
}

/** Whether a tool may run as a task. */
export const runsAsTask = (tool: McpSchema.Tool | undefined): boolean => {
  const support = tool?.execution?.taskSupport
  return support === "optional" || support === "required"
}

// A task's status once its call ended: a tool result with `isError` counts as failed.
const outcomeOf = (exit: Exit.Exit<Record<string, unknown>, Peer.HandlerError>): Partial<McpSchema.Task> => {
  if (Exit.isSuccess(exit)) return { status: exit.value.isError === true ? "failed" : "completed" }
  const failure = Cause.failureOption(exit.cause)
  return failure._tag === "Some" ? { status: "failed", statusMessage: failure.value.message } : { status: "failed" }
}

const isWorking = (running: Running): boolean =>
  running.task.status === "working" || running.task.status === "input_required"

type Update = (running: Running, patch: Partial<McpSchema.Task>) => Effect.Effect<void>

// The session a task's context speaks through: the one following the task now, on the
// stream of its request there; its client is the one asked (what it declared decides what
// may be asked of it). None once the task ended: its handler sends nothing more. While that
// session has gone, a request to the client waits, `input_required`, for a session to
// follow the task with tasks/result (the task's ttl ends the wait), and goes there.
class Following implements SessionLink {
  constructor(private readonly running: Running, private readonly update: Update) {}

  get reachable(): Effect.Effect<void> | undefined {
    return this.running.follower?.ended === true ? this.awaitFollower() : undefined
  }

  private awaitFollower(): Effect.Effect<void> {
    const running = this.running
    return Effect.suspend(() => {
      const arrived = running.arrived ??= Deferred.unsafeMake<void>(FiberId.none)
      return Effect.zipRight(this.update(running, { status: "input_required" }), Deferred.await(arrived))
    })
  }

  // Input received (or refused): the task works on.
  private resumed(exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> {
    return Exit.isInterrupted(exit) || this.running.task.status !== "input_required"
      ? Effect.void
      : this.update(this.running, { status: "working" })
  }

  get client() {
    return this.running.follower?.client ?? this.running.client
  }

  admits(level: McpSchema.LoggingLevel): boolean {
    return this.running.follower?.admits(level) ?? false
  }

  notify(method: string, params: Record<string, unknown> | undefined) {
    const follower = this.running.follower
    return follower === undefined ? Effect.void : follower.notify(method, params, this.running.related)
  }

  request(
    related: JsonRpc.RequestId | undefined,
    method: string,
    params: Record<string, unknown> | undefined,
    options: Peer.RequestOptions | undefined
  ): Effect.Effect<Record<string, unknown>, McpServerError> {
    // Who follows the task is known when the request runs, not when it is made.
    return Effect.suspend(() => {
      const follower = this.running.follower
      if (follower === undefined) {
        return Effect.fail(new McpServerError({ reason: "Client", method, message: `${method}: the task has ended` }))
      }
      const again = this.request(related, method, params, options)
      if (follower.ended) return Effect.zipRight(this.awaitFollower(), again)
      return follower.request(this.running.related, method, params, options).pipe(
        // Its session gone while it asked: the next one following the task is asked.
        Effect.catchAll((error) => follower.ended ? again : Effect.fail(error)),
        Effect.onExit((exit) => this.resumed(exit))
      )
    })
  }
}

// The ttl a request asks for (`task.ttl`), within the server's most.
const ttlOf = (request: JsonRpc.Request, most: number): number => {
  const asked = (request.params?.task as { ttl?: unknown } | undefined)?.ttl
  return typeof asked === "number" && asked >= 0 ? Math.min(asked, most) : most
}

/**
 * The task a request names (`params.taskId`), of either era: another authorization context's
 * is as unknown as one that never was (-32602).
 */
export const find = <T extends { readonly owner: Outbound["caller"] }>(
  tasks: ReadonlyMap<string, T>,
  request: JsonRpc.Request,
  caller: Outbound["caller"]
): Effect.Effect<T, Peer.HandlerError> => {
  const task = tasks.get(String(request.params?.taskId))
  return task === undefined || !sameCaller(task.owner, caller)
    ? Effect.fail(invalidParams(`Unknown task: ${String(request.params?.taskId)}`))
    : Effect.succeed(task)
}

// A session asking about a task that still runs gets what it sends from now on.
const follow = (running: Running, session: Requestor) => {
  if (running.follower === undefined || running.follower === session) return
  running.follower = session
  running.related = undefined
}

// A live session's tasks/result: what waits for a session to ask goes on its stream now.
const arrive = (running: Running, session: Requestor) => {
  const arrived = running.arrived
  if (arrived === undefined || session.ended) return
  running.arrived = undefined
  Deferred.unsafeDone(arrived, Exit.void)
}

// What tasks/list shows `session`: its authorization context's tasks, or without one, its own.
const visibleTo = (session: Requestor) => (running: Running): boolean => {
  const caller = session.outbound.caller
  return caller === undefined
    ? running.origin === keyOf(session)
    : running.owner !== undefined && sameCaller(running.owner, caller)
}

// The handlers of tasks/get, tasks/result, tasks/list and tasks/cancel over the server's `tasks`.
const handlersOf = (
  tasks: ReadonlyMap<string, Running>,
  cancel: (running: Running) => Effect.Effect<McpSchema.Task, Peer.HandlerError>,
  pageSize: number
): Record<string, Handler> => ({
  [McpSchema.Method.TasksGet]: (request, session) =>
    Effect.map(find(tasks, request, session.outbound.caller), (running) => {
      follow(running, session)
      return running.task
    }),
  // The call's own answer, tied to its task (the result has no taskId of its own); what
  // the task sends meanwhile goes on this request's stream.
  [McpSchema.Method.TasksResult]: (request, session) =>
    Effect.flatMap(find(tasks, request, session.outbound.caller), (running) => {
      follow(running, session)
      running.related = request.id
      arrive(running, session)
      return Effect.map(Deferred.await(running.outcome), (result) => ({
        ...result,
        _meta: {
          ...(result._meta as object | undefined),
          [McpSchema.MetaKey.RelatedTask]: { taskId: running.task.taskId }
        }
      }))
    }),
  [McpSchema.Method.TasksList]: (request, session) =>
    page(
      "tasks",
      "tasks",
      [...tasks.values()].filter(visibleTo(session)).map((running) => running.task),
      request,
      pageSize
    ),
  [McpSchema.Method.TasksCancel]: (request, session) =>
    Effect.flatMap(find(tasks, request, session.outbound.caller), cancel)
})

/** The tasks of a new server; their fibers end with its Scope. */
export const make = (options: {
  readonly tasks: TaskOptions
  readonly pageSize: number
}): Effect.Effect<Tasks, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const tasks = new Map<string, Running>()
    const most = options.tasks.ttlMs ?? DEFAULT_TTL_MS
    const stamp = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())
    const update: Update = (running, patch) =>
      Effect.gen(function*() {
        running.task = { ...running.task, ...patch, lastUpdatedAt: yield* stamp }
        if (options.tasks.notifyStatus === true && running.follower !== undefined) {
          yield* running.follower.notify(McpSchema.Method.TasksStatus, running.task, running.related)
        }
      })
    // The task's end, told: from now on it holds no session, no fiber.
    const end = (
      running: Running,
      patch: Partial<McpSchema.Task>,
      exit: Exit.Exit<Record<string, unknown>, Peer.HandlerError>
    ) =>
      Effect.zipRight(
        update(running, patch),
        Effect.suspend(() => {
          running.follower = undefined
          running.fiber = undefined
          return Deferred.done(running.outcome, exit)
        })
      )
    const cancel = (running: Running) =>
      !isWorking(running)
        ? Effect.fail(invalidParams(`Task ${running.task.taskId} is already ${running.task.status}`))
        : Effect.gen(function*() {
          if (running.fiber !== undefined) yield* Fiber.interrupt(running.fiber)
          yield* end(running, { status: "cancelled" }, Exit.fail(invalidParams("The task was cancelled")))
          return running.task
        })

    // Past its ttl, a task is forgotten, and its work (whoever could still reach it) ends.
    const expire = (running: Running, ttl: number) =>
      Effect.sleep(ttl).pipe(
        Effect.zipRight(Effect.ignore(cancel(running))),
        Effect.zipRight(Effect.sync(() => tasks.delete(running.task.taskId))),
        Effect.forkIn(scope)
      )
    const none: ReadonlySet<Running> = new Set()
    const census = (session: Requestor): Limits.Census<Running> => ({
      working: isWorking,
      mine: visibleTo(session)
    })

    const start: Tasks["start"] = (session, request, call) =>
      Effect.gen(function*() {
        yield* Limits.admit(options.tasks, tasks, none, census(session))
        const now = yield* stamp
        const ttl = ttlOf(request, most)
        const task: McpSchema.Task = {
          taskId: randomUUID(),
          status: "working",
          ttl,
          createdAt: now,
          lastUpdatedAt: now,
          pollInterval: options.tasks.pollInterval ?? 1000
        }
        const running: Running = {
          task,
          outcome: yield* Deferred.make<Record<string, unknown>, Peer.HandlerError>(),
          fiber: undefined,
          owner: session.outbound.caller,
          origin: keyOf(session),
          client: session.client,
          follower: session,
          related: request.id,
          expiry: undefined,
          arrived: undefined
        }
        tasks.set(task.taskId, running)
        const link: TaskLink = {
          taskId: task.taskId,
          related: { [McpSchema.MetaKey.RelatedTask]: { taskId: task.taskId } },
          status: (statusMessage) => update(running, { statusMessage })
        }
        running.fiber = yield* call(new Context(new Following(running, update), request, link)).pipe(
          Effect.exit,
          Effect.flatMap((exit) => end(running, outcomeOf(exit), exit)),
          Effect.forkIn(scope)
        )
        running.expiry = yield* expire(running, ttl)
        return { task }
      })

    return { start, handlers: handlersOf(tasks, cancel, options.pageSize) }
  })
