/**
 * Task-augmented requests (2025-11-25): the request is sent with `task`, the server answers
 * with the task it became, `tasks/get` is polled at the server's `pollInterval` until the
 * task needs no more waiting, and `tasks/result` gives the request's own result. A
 * `notifications/tasks/status` saying the task is done ends the wait at once; polling is
 * the fallback for a server that sends none. Interrupting the wait cancels the task
 * (`tasks/cancel`). The request's progress token stays valid for the task's life: progress
 * the server sends with it, or tied to the task by its `related-task` `_meta`, reaches the
 * caller's `onProgress` until the result is in. A task is taken up again by its id with
 * `resumeTask` (polled, its result fetched, cancelled when given up), e.g. on the connection
 * that followed the one it was made on; its progress with it, when told the call's token.
 *
 * The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) is the server's choice:
 * a request answered with `resultType: "task"` is followed by polling `tasks/get`, whose
 * answer carries the result or error once the task ends; a task in `input_required` lists
 * input requests, answered (each key once) by the same host handlers as multi round-trip
 * requests and sent with `tasks/update`; their answers take no longer than a round's (the
 * request's timeout), else the task is cancelled and the wait fails with that Timeout, so a
 * client that never answers cannot hold the call. A poll lost on the way is sent again a few times
 * (the task lives on at the server). Interrupting the wait cancels the task here too;
 * a wait that ends with the connection does not, so the task can be followed again by its id
 * on the next one (`followTask`).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import { decode } from "./decode.js"
import { answerWithin } from "./mrtr.js"

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
  /** The progress token the request is sent with when it has `onProgress`. Default: one of our own. */
  readonly progressToken?: string | undefined
}

// Whether a progress notification is for the task being followed: sent with our token, or
// (a task taken up again without it) tied to the task by its related-task _meta.
const isOurs = (params: Record<string, unknown> | undefined, token: string | undefined, taskId: string | undefined) => {
  if (params === undefined || typeof params.progress !== "number") return false
  if (token !== undefined && params.progressToken === token) return true
  const related = (params._meta as Record<string, unknown> | undefined)?.[McpSchema.MetaKey.RelatedTask]
  return taskId !== undefined && (related as { taskId?: unknown } | undefined)?.taskId === taskId
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

const watch = (peer: Peer.Peer, token: string | undefined, options: TaskOptions, taskId?: string) =>
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
      if (onProgress === undefined || notification.method !== McpSchema.Method.Progress) return Effect.void
      const progress = notification.params as (Peer.Progress & Record<string, unknown>) | undefined
      return isOurs(progress, token, state.ours ?? taskId)
        ? onProgress({ progress: progress!.progress, total: progress!.total, message: progress!.message })
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

// Follows our task from `task` (its status when we took it up) to its request's result:
// polled until settled (sooner when notified), then `tasks/result`; cancelled when given up.
const followToResult = (
  peer: Peer.Peer,
  state: Watch,
  task: McpSchema.Task,
  options: TaskOptions
): Effect.Effect<Record<string, unknown>, McpError.McpError> => {
  const { onTask } = options
  const taskId = task.taskId
  state.ours = taskId
  const get = getTask(peer, taskId)
  // Until settled: the poll interval, or less when a status notification says it is done.
  const poll = (current: McpSchema.Task): Effect.Effect<McpSchema.Task, McpError.McpError> =>
    settled(current) ? Effect.succeed(current) : Effect.raceFirst(
      Effect.as(
        Effect.sleep(current.pollInterval === undefined ? DEFAULT_POLL : Duration.millis(current.pollInterval)),
        undefined
      ),
      Deferred.await(state.done)
    ).pipe(
      Effect.flatMap((notified) =>
        notified !== undefined ? Effect.succeed(notified) : Effect.tap(get, (polled) => seen(state, polled, onTask))
      ),
      Effect.flatMap(poll)
    )
  // What a notification said by now is newer than `task`.
  const latest = () => state.notified.get(taskId) ?? task
  const waitAndFetch = Effect.zipRight(
    Effect.zipRight(Effect.suspend(() => seen(state, latest(), onTask)), Effect.suspend(() => poll(latest()))),
    peer.request(McpSchema.Method.TasksResult, { taskId }, { timeout: options.timeout })
  )
  // Given up on: the server stops working on it too.
  return Effect.onInterrupt(
    waitAndFetch,
    () =>
      peer.request(McpSchema.Method.TasksCancel, { taskId }, { cancellable: false }).pipe(
        Effect.flatMap((answer) => decode(peer.server, McpSchema.Method.TasksCancel, McpSchema.Task, answer)),
        Effect.flatMap((cancelled) => onTask === undefined ? Effect.void : onTask(cancelled)),
        Effect.ignore
      )
  )
}

const getTask = (peer: Peer.Peer, taskId: string) =>
  Effect.flatMap(
    peer.request(McpSchema.Method.TasksGet, { taskId }),
    (answer) => decode(peer.server, McpSchema.Method.TasksGet, McpSchema.Task, answer)
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
    const { onProgress, onTask: _o, progressToken, resetTimeoutOnProgress: _, ...rest } = options
    const token = onProgress === undefined ? undefined : progressToken ?? `mcp-fleet-task-${nextToken++}`
    const sent: Record<string, unknown> = token === undefined
      ? { ...params, task: {} }
      : { ...params, task: {}, _meta: { ...(params._meta as object | undefined), progressToken: token } }
    const { flush, state } = yield* watch(peer, token, options)
    const created = yield* Effect.flatMap(
      peer.request(method, sent, rest),
      (answer) => decode(peer.server, method, McpSchema.CreateTaskResult, answer)
    )
    const result = yield* followToResult(peer, state, created.task, options)
    yield* flush
    return result
  }).pipe(Effect.scoped)

/**
 * Takes up a task (2025-11-25) by its id, on another connection than the one that made it
 * or on the same one: polled from its current status to the result of its request. Its
 * progress goes to `onProgress`: what the server sends with `progressToken` (the token the
 * request was sent with), or tied to the task by its related-task `_meta`.
 * A server that does not know the task fails the first `tasks/get`.
 */
export const resumeTask = (
  peer: Peer.Peer,
  taskId: string,
  options: Pick<TaskOptions, "onTask" | "onProgress" | "progressToken" | "timeout">
): Effect.Effect<Record<string, unknown>, McpError.McpError> =>
  Effect.gen(function*() {
    const { flush, state } = yield* watch(peer, options.progressToken, options, taskId)
    const current = yield* getTask(peer, taskId)
    const result = yield* followToResult(peer, state, current, options)
    yield* flush
    return result
  }).pipe(Effect.scoped)

/** How many times in a row a lost poll of an extension task is sent again. */
const POLL_RETRIES = 3

const transient = (error: McpError.McpError): boolean => {
  const reason = error.reason
  return reason._tag === "Transport" || reason._tag === "Timeout" || (reason._tag === "Http" && reason.status >= 500)
}

// The extension's task as the status the caller is told (the 2025-11-25 shape).
const statusOf = (task: McpSchema.DetailedTask): McpSchema.Task => {
  const { error: _e, inputRequests: _i, pollIntervalMs, result: _r, resultType: _t, ttlMs, ...rest } = task
  return {
    ...rest,
    ...(ttlMs === undefined ? {} : { ttl: ttlMs }),
    ...(pollIntervalMs === undefined ? {} : { pollInterval: pollIntervalMs })
  }
}

const taskError = (server: string, method: string, task: McpSchema.DetailedTask) =>
  McpError.protocol(
    server,
    task.status === "failed" && task.error !== undefined
      ? { method, ...task.error }
      : {
        method,
        code: JsonRpc.ErrorCode.InternalError,
        message: `its task ${task.taskId} ended ${task.status}${
          task.statusMessage === undefined ? "" : `: ${task.statusMessage}`
        }`
      }
  )

/**
 * Follows a task of the tasks extension to the result of the request it was made of:
 * `task` is the server's `resultType: "task"` answer, or just `{ taskId }` to take up a task
 * again on another connection. `within`: how long the answers to the task's input requests
 * may take (the request's timeout), as an input round's (`mrtr.ts`).
 */
export const followTask = (
  peer: Peer.Peer,
  handlers: Readonly<Record<string, Peer.Handler>>,
  method: string,
  task: Record<string, unknown>,
  options: Pick<TaskOptions, "onTask"> & { readonly within: Duration.DurationInput }
): Effect.Effect<Record<string, unknown>, McpError.McpError> => {
  const server = peer.server
  const { onTask, within } = options
  const answered = new Set<string>()
  // A poll lost on the way (the network, a busy server) is sent again: the task lives on at
  // the server, and a modern connection outlives a failed request.
  const get = (taskId: string) =>
    Effect.flatMap(
      peer.request(McpSchema.Method.TasksGet, { taskId }).pipe(
        Effect.retry({ times: POLL_RETRIES, while: transient, schedule: Schedule.spaced(DEFAULT_POLL) })
      ),
      (answer) => decode(server, McpSchema.Method.TasksGet, McpSchema.DetailedTask, answer)
    )
  // The server stops working on a task we give up on; the caller is told of the cancellation
  // asked for (the server's ack is empty).
  const cancel = (task: McpSchema.DetailedTask) =>
    peer.request(McpSchema.Method.TasksCancel, { taskId: task.taskId }, { cancellable: false }).pipe(
      Effect.zipRight(onTask === undefined ? Effect.void : onTask({ ...statusOf(task), status: "cancelled" })),
      Effect.ignore
    )
  // Each input request once: a task still listing one we answered waits for the server.
  const answer = (current: McpSchema.DetailedTask) => {
    const open = Object.entries(current.inputRequests ?? {}).filter(([key]) => !answered.has(key))
    if (open.length === 0) return Effect.void
    return answerWithin(server, handlers, method, Object.fromEntries(open), within).pipe(
      // Unanswered in time: given up on.
      Effect.tapError((error) => error.reason._tag === "Timeout" ? cancel(current) : Effect.void),
      Effect.flatMap((inputResponses) =>
        peer.request(McpSchema.Method.TasksUpdate, { taskId: current.taskId, inputResponses })
      ),
      Effect.tap(() => open.forEach(([key]) => answered.add(key)))
    )
  }
  const step = (current: McpSchema.DetailedTask): Effect.Effect<Record<string, unknown>, McpError.McpError> =>
    Effect.zipRight(
      onTask === undefined ? Effect.void : onTask(statusOf(current)),
      Effect.suspend(() => {
        switch (current.status) {
          case "completed":
            return current.result === undefined
              ? Effect.fail(taskError(server, method, current))
              : Effect.succeed(current.result)
          case "failed":
          case "cancelled":
            return Effect.fail(taskError(server, method, current))
          default: {
            const wait = Effect.sleep(
              current.pollIntervalMs === undefined ? DEFAULT_POLL : Duration.millis(current.pollIntervalMs)
            )
            const before = current.status === "input_required" ? answer(current) : Effect.void
            return before.pipe(Effect.zipRight(wait), Effect.zipRight(get(current.taskId)), Effect.flatMap(step))
          }
        }
      })
    )
  return Effect.gen(function*() {
    // A bare id (taken up again) is polled first; a created task starts from what it says.
    const first = typeof task.status === "string"
      ? yield* decode(server, method, McpSchema.DetailedTask, task)
      : yield* get(String(task.taskId))
    return yield* Effect.onInterrupt(step(first), () => cancel(first))
  })
}

/** Capabilities that declare the tasks extension too. */
export const withTasksExtension = (capabilities: McpSchema.ClientCapabilities): McpSchema.ClientCapabilities => ({
  ...capabilities,
  extensions: { [McpSchema.TASKS_EXTENSION]: {}, ...(capabilities.extensions as object | undefined) }
})
