/**
 * Task-augmented tool calls of one session (2025-11-25): a call that carries `task` runs in
 * a fiber of the session's Scope and is answered at once with the task it became;
 * `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` follow it, and
 * `notifications/tasks/status` tells each change when the server asks for it. Timestamps
 * come from the Clock.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { TaskOptions } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import { invalidParams } from "./errors.js"
import { page } from "./paging.js"

// A call running as a task: its latest status, its outcome, the fiber running it.
interface Running {
  task: McpSchema.Task
  readonly outcome: Deferred.Deferred<Record<string, unknown>, Peer.HandlerError>
  fiber: Fiber.RuntimeFiber<unknown> | undefined
}

/** What a request running as a task knows of it. */
export interface TaskLink {
  readonly taskId: string
  /** Sets the task's status message. */
  readonly status: (message: string) => Effect.Effect<void>
  /** (The tasks extension) Keeps a call that may still become a task inline while `effect` runs. */
  readonly keepInline?: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** (The tasks extension) Makes the call its task now. */
  readonly goAsync?: Effect.Effect<void>
}

/** The tasks of one session. */
export interface Tasks {
  /** Runs `call` as a task, and answers with the task it became. */
  readonly start: (
    call: (task: TaskLink) => Effect.Effect<Record<string, unknown>, Peer.HandlerError>
  ) => Effect.Effect<Record<string, unknown>>
  /** The handlers of tasks/get, tasks/result, tasks/list and tasks/cancel. */
  readonly handlers: Readonly<Record<string, Peer.Handler>>
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

/** The tasks of a new session; their fibers end with the Scope. */
export const make = (options: {
  readonly tasks: TaskOptions
  readonly pageSize: number
  readonly notify: (method: string, params: Record<string, unknown>) => Effect.Effect<void>
}): Effect.Effect<Tasks, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const tasks = new Map<string, Running>()
    const stamp = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())
    const update = (running: Running, patch: Partial<McpSchema.Task>) =>
      Effect.gen(function*() {
        running.task = { ...running.task, ...patch, lastUpdatedAt: yield* stamp }
        if (options.tasks.notifyStatus === true) {
          yield* options.notify(McpSchema.Method.TasksStatus, running.task)
        }
      })
    const find = (request: JsonRpc.Request) => {
      const running = tasks.get(String(request.params?.taskId))
      return running === undefined
        ? Effect.fail(invalidParams(`Unknown task: ${String(request.params?.taskId)}`))
        : Effect.succeed(running)
    }

    const start: Tasks["start"] = (call) =>
      Effect.gen(function*() {
        const now = yield* stamp
        const task: McpSchema.Task = {
          taskId: `task-${tasks.size + 1}`,
          status: "working",
          ttl: null,
          createdAt: now,
          lastUpdatedAt: now,
          pollInterval: options.tasks.pollInterval ?? 1000
        }
        const outcome = yield* Deferred.make<Record<string, unknown>, Peer.HandlerError>()
        const running: Running = { task, outcome, fiber: undefined }
        tasks.set(task.taskId, running)
        const link: TaskLink = {
          taskId: task.taskId,
          status: (statusMessage) => update(running, { statusMessage })
        }
        running.fiber = yield* call(link).pipe(
          Effect.exit,
          Effect.flatMap((exit) =>
            Effect.zipRight(update(running, outcomeOf(exit)), Deferred.done(running.outcome, exit))
          ),
          Effect.forkIn(scope)
        )
        return { task }
      })

    const cancel = (running: Running) =>
      running.task.status !== "working" && running.task.status !== "input_required"
        ? Effect.fail(invalidParams(`Task ${running.task.taskId} is already ${running.task.status}`))
        : Effect.gen(function*() {
          if (running.fiber !== undefined) yield* Fiber.interrupt(running.fiber)
          yield* update(running, { status: "cancelled" })
          yield* Deferred.fail(running.outcome, invalidParams("The task was cancelled"))
          return running.task
        })

    const handlers: Record<string, Peer.Handler> = {
      [McpSchema.Method.TasksGet]: (request) => Effect.map(find(request), (running) => running.task),
      // The call's own answer, tied to its task (the result has no taskId of its own).
      [McpSchema.Method.TasksResult]: (request) =>
        Effect.flatMap(find(request), (running) =>
          Effect.map(Deferred.await(running.outcome), (result) => ({
            ...result,
            _meta: {
              ...(result._meta as object | undefined),
              [McpSchema.MetaKey.RelatedTask]: { taskId: running.task.taskId }
            }
          }))),
      [McpSchema.Method.TasksList]: (request) =>
        page("tasks", "tasks", [...tasks.values()].map((running) => running.task), request, options.pageSize),
      [McpSchema.Method.TasksCancel]: (request) => Effect.flatMap(find(request), cancel)
    }
    return { start, handlers }
  })
