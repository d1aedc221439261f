/**
 * Task-augmented requests (2025-11-25): the request is sent with `task`, the server answers
 * with the task it became, `tasks/get` is polled at the server's `pollInterval` until the
 * task needs no more waiting, and `tasks/result` gives the request's own result. Interrupting
 * the wait cancels the task (`tasks/cancel`).
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import { decode } from "./decode.js"

/** How long to wait between polls when the server names no `pollInterval`. */
const DEFAULT_POLL = Duration.seconds(1)

// `input_required`: the server waits for us; tasks/result is where it asks (and then answers).
const settled = (task: McpSchema.Task) => task.status !== "working"

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
    const created = yield* Effect.flatMap(
      peer.request(method, { ...params, task: {} }, options),
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
    return yield* Effect.onInterrupt(
      waitAndFetch,
      () => Effect.ignore(peer.request(McpSchema.Method.TasksCancel, { taskId }, { cancellable: false }))
    )
  })
