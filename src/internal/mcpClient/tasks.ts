/**
 * Task-augmented requests (2025-11-25): the request is sent with `task`, the server answers
 * with the task it became, `tasks/get` is polled at the server's `pollInterval` until the
 * task needs no more waiting, and `tasks/result` gives the request's own result. A
 * `notifications/tasks/status` saying the task is done ends the wait at once; polling is
 * the fallback for a server that sends none. Interrupting the wait cancels the task
 * (`tasks/cancel`). The request's progress token stays valid for the task's life: progress
 * the server sends with it reaches the caller's `onProgress` until the result is in.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import { decode } from "./decode.js"

/** How long to wait between polls when the server names no `pollInterval`. */
const DEFAULT_POLL = Duration.seconds(1)

// `input_required`: the server waits for us; tasks/result is where it asks (and then answers).
const settled = (task: McpSchema.Task) => task.status !== "working"

const decodeTask = Schema.decodeUnknownEither(McpSchema.Task)

let nextToken = 0

/**
 * Options of a task-augmented request besides the Peer's.
 */
export interface TaskOptions extends Peer.RequestOptions {
  /** Told every status of the task seen: created, polled, notified, cancelled. */
  readonly onTask?: ((task: McpSchema.Task) => Effect.Effect<void>) | undefined
}

// What the server says about the task while it runs: progress with our token goes to
// `onProgress`; a status notification to `notified`, which holds the latest of each task
// (the first may come before we know which task is ours).
interface Watch {
  readonly notified: Map<string, McpSchema.Task>
  /** Completed with the task once a notification says ours is settled. */
  readonly done: Deferred.Deferred<McpSchema.Task>
  ours: string | undefined
}

const watch = (peer: Peer.Peer, token: string | undefined, options: TaskOptions) =>
  Effect.gen(function*() {
    const notifications = yield* peer.subscribe
    const state: Watch = { notified: new Map(), done: yield* Deferred.make<McpSchema.Task>(), ours: undefined }
    const { onProgress, onTask } = options
    const handle = (notification: JsonRpc.Notification): Effect.Effect<void> => {
      if (notification.method === McpSchema.Method.TasksStatus) {
        const task = decodeTask(notification.params)
        if (Either.isLeft(task)) return Effect.void
        state.notified.set(task.right.taskId, task.right)
        return task.right.taskId === state.ours ? seen(state, task.right, onTask) : Effect.void
      }
      const progress = notification.params as Partial<Peer.Progress> & { progressToken?: unknown } | undefined
      return onProgress !== undefined && token !== undefined && notification.method === McpSchema.Method.Progress &&
          progress?.progressToken === token && typeof progress.progress === "number"
        ? onProgress({ progress: progress.progress, total: progress.total, message: progress.message })
        : Effect.void
    }
    // One notification at a time, never cut off halfway.
    const fiber = yield* Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(Queue.take(notifications)), handle)
    )
      .pipe(Effect.forever, Effect.forkScoped)
    // Hands over what is left once the result is in (it came after all of them).
    const flush = Effect.zipRight(
      Fiber.interrupt(fiber),
      Effect.flatMap(Queue.takeAll(notifications), (rest) => Effect.forEach(rest, handle, { discard: true }))
    )
    return { state, flush }
  })

// A status of our task: told to the caller, and the end of the wait when it is settled.
const seen = (state: Watch, task: McpSchema.Task, onTask: TaskOptions["onTask"]) =>
  Effect.zipRight(
    onTask === undefined ? Effect.void : onTask(task),
    settled(task) ? Deferred.succeed(state.done, task) : Effect.void
  )

/**
 * Sends `method` with `params` as a task and returns the request's result once it is done.
 */
export const requestAsTask = (
  peer: Peer.Peer,
  method: string,
  params: Record<string, unknown>,
  options: TaskOptions
): Effect.Effect<Record<string, unknown>, McpError.McpError> =>
  Effect.gen(function*() {
    // Our own token, not the Peer's: the Peer forgets its token once the task is created.
    const { onProgress, onTask, resetTimeoutOnProgress: _, ...rest } = options
    const token = onProgress === undefined ? undefined : `mcp-fleet-task-${nextToken++}`
    const sent: Record<string, unknown> = token === undefined
      ? { ...params, task: {} }
      : { ...params, task: {}, _meta: { ...(params._meta as object | undefined), progressToken: token } }
    const { flush, state } = yield* watch(peer, token, options)
    const created = yield* Effect.flatMap(
      peer.request(method, sent, rest),
      (answer) => decode(peer.server, method, McpSchema.CreateTaskResult, answer)
    )
    const taskId = created.task.taskId
    state.ours = taskId
    yield* seen(state, state.notified.get(taskId) ?? created.task, onTask)
    const get = Effect.flatMap(
      peer.request(McpSchema.Method.TasksGet, { taskId }),
      (answer) => decode(peer.server, McpSchema.Method.TasksGet, McpSchema.Task, answer)
    )
    // Until settled: the poll interval, or less when a status notification says it is done.
    const poll = (task: McpSchema.Task): Effect.Effect<McpSchema.Task, McpError.McpError> =>
      settled(task) ? Effect.succeed(task) : Effect.raceFirst(
        Effect.as(
          Effect.sleep(task.pollInterval === undefined ? DEFAULT_POLL : Duration.millis(task.pollInterval)),
          undefined
        ),
        Deferred.await(state.done)
      ).pipe(
        Effect.flatMap((notified) =>
          notified !== undefined ? Effect.succeed(notified) : Effect.tap(get, (polled) => seen(state, polled, onTask))
        ),
        Effect.flatMap(poll)
      )
    const waitAndFetch = Effect.zipRight(
      poll(state.notified.get(taskId) ?? created.task),
      peer.request(McpSchema.Method.TasksResult, { taskId }, { timeout: options.timeout })
    )
    // Given up on: the server stops working on it too.
    const result = yield* Effect.onInterrupt(
      waitAndFetch,
      () =>
        peer.request(McpSchema.Method.TasksCancel, { taskId }, { cancellable: false }).pipe(
          Effect.flatMap((answer) => decode(peer.server, McpSchema.Method.TasksCancel, McpSchema.Task, answer)),
          Effect.flatMap((task) => onTask === undefined ? Effect.void : onTask(task)),
          Effect.ignore
        )
    )
    yield* flush
    return result
  }).pipe(Effect.scoped)
