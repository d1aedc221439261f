/**
 * Task-augmented requests (2025-11-25): the request is sent with `task`, the server answers
 * with the task it became, `tasks/get` is polled at the server's `pollInterval` until the
 * task needs no more waiting, and `tasks/result` gives the request's own result. Interrupting
 * the wait cancels the task (`tasks/cancel`). The request's progress token stays valid for the
 * task's life: progress the server sends with it reaches the caller's `onProgress` until the
 * result is in.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import { decode } from "./decode.js"

/** How long to wait between polls when the server names no `pollInterval`. */
const DEFAULT_POLL = Duration.seconds(1)

// `input_required`: the server waits for us; tasks/result is where it asks (and then answers).
const settled = (task: McpSchema.Task) => task.status !== "working"

let nextToken = 0

// Gives `onProgress` every progress notification with `token` as it comes; the Effect
// returned hands over what is left once the result is in (it came after all of them).
const forwardProgress = (peer: Peer.Peer, token: string, onProgress: NonNullable<Peer.RequestOptions["onProgress"]>) =>
  Effect.gen(function*() {
    const notifications = yield* peer.subscribe
    const handle = (notification: JsonRpc.Notification) => {
      const progress = notification.params as Partial<Peer.Progress> & { progressToken?: unknown } | undefined
      return notification.method === McpSchema.Method.Progress && progress?.progressToken === token &&
          typeof progress.progress === "number"
        ? onProgress({ progress: progress.progress, total: progress.total, message: progress.message })
        : Effect.void
    }
    // One notification at a time, never cut off halfway.
    const fiber = yield* Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(Queue.take(notifications)), handle)
    )
      .pipe(Effect.forever, Effect.forkScoped)
    return Effect.zipRight(
      Fiber.interrupt(fiber),
      Effect.flatMap(Queue.takeAll(notifications), (rest) => Effect.forEach(rest, handle, { discard: true }))
    )
  })

/**
 * Sends `method` with `params` as a task and returns the request's result once it is done.
 */
export const requestAsTask = (
  peer: Peer.Peer,
  method: string,
  params: Record<string, unknown>,
  options: Peer.RequestOptions
): Effect.Effect<Record<string, unknown>, McpError.McpError> =>
  Effect.gen(function*() {
    // Our own token, not the Peer's: the Peer forgets its token once the task is created.
    const { onProgress, resetTimeoutOnProgress: _, ...rest } = options
    let sent: Record<string, unknown> = { ...params, task: {} }
    let flush: Effect.Effect<void> = Effect.void
    if (onProgress !== undefined) {
      const token = `mcp-fleet-task-${nextToken++}`
      flush = yield* forwardProgress(peer, token, onProgress)
      sent = { ...sent, _meta: { ...(params._meta as object | undefined), progressToken: token } }
    }
    const created = yield* Effect.flatMap(
      peer.request(method, sent, rest),
      (answer) => decode(peer.server, method, McpSchema.CreateTaskResult, answer)
    )
    const taskId = created.task.taskId
    const poll = (task: McpSchema.Task): Effect.Effect<McpSchema.Task, McpError.McpError> =>
      settled(task) ? Effect.succeed(task) : Effect.sleep(
        task.pollInterval === undefined ? DEFAULT_POLL : Duration.millis(task.pollInterval)
      ).pipe(
        Effect.zipRight(peer.request(McpSchema.Method.TasksGet, { taskId })),
        Effect.flatMap((answer) => decode(peer.server, McpSchema.Method.TasksGet, McpSchema.Task, answer)),
        Effect.flatMap(poll)
      )
    const waitAndFetch = Effect.zipRight(
      poll(created.task),
      peer.request(McpSchema.Method.TasksResult, { taskId }, { timeout: options.timeout })
    )
    // Given up on: the server stops working on it too.
    const result = yield* Effect.onInterrupt(
      waitAndFetch,
      () => Effect.ignore(peer.request(McpSchema.Method.TasksCancel, { taskId }, { cancellable: false }))
    )
    yield* flush
    return result
  }).pipe(Effect.scoped)
