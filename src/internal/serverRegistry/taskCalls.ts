/**
 * Routed tool calls that run as tasks, across connections (internal to the registry). The
 * call notes the id of the task it became (from its `onTask`); when its connection is lost
 * after that (an HTTP server restarted, the network, a 2026-07-28 server reached anew), it
 * is not sent again, which would run the tool twice: the same task is followed on the next
 * connection (`McpClient.followTask`), within the call's ready wait (`deadline.ts`), as often as
 * connections end. A server that no longer knows the task fails the call with an error
 * naming it. A stdio server's task dies with its process, so a loss there fails at once.
 * Interrupting the call cancels the task: on the connection that follows it, or, when none
 * does (its connection ended), on the next one (within the ready wait), in the background.
 * A call with `onProgress` is sent with a progress token of the call's own (unless it names
 * one), which stays valid for the task's life: each follow listens for it again, so the
 * server's progress keeps reaching `onProgress` across connections (2025-11-25; the tasks
 * extension sends none for a task).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type { CallToolOptions } from "../../ServerRegistry.js"
import { randomUUID } from "../crypto.js"
import type * as Deadline from "./deadline.js"

/**
 * How a task's call reaches its server again.
 */
export interface Route {
  readonly server: string
  /** Whether the server is a child process, whose tasks end with it. */
  readonly stdio: boolean
  /** The server's state now, for an error. */
  readonly state: () => string
  /** The server's ready connection, if any: a connection that ended is never it again. */
  readonly client: () => McpClient.McpClient | undefined
  /** Runs an effect in the registry's Scope, past the call that started it. */
  readonly background: (effect: Effect.Effect<void>) => Effect.Effect<void>
  /** The registry's `withClient` for that server: a ready connection, waited for within the call's limits. */
  readonly withClient: <A>(
    f: (client: McpClient.McpClient) => Effect.Effect<A, McpError.McpError>,
    deadline: Deadline.CallDeadline
  ) => Effect.Effect<A, McpError.McpError>
}

/** Whether a connection's server may make a task of a tool call (2025-11-25 or the extension). */
export const mayRunTasks = (client: McpClient.McpClient): boolean =>
  client.capabilities.tasks?.requests?.tools?.call !== undefined ||
  (McpSchema.isModernVersion(client.protocolVersion) &&
    (client.capabilities.extensions as Record<string, unknown> | undefined)?.[McpSchema.TASKS_EXTENSION] !==
      undefined)

// The connection ended under the request: it may be sent on the next one only if unsent.
const connectionLost = (error: McpError.McpError): boolean =>
  error.reason._tag === "Closed" || error.reason._tag === "Transport"

const which = (taskId: string, tool: string | undefined) =>
  tool === undefined ? `task '${taskId}'` : `task '${taskId}' (tool '${tool}')`

// Why following the task failed, in words that name it; `lost`: after a lost connection.
const explain = (route: Route, taskId: string, tool: string | undefined, lost: boolean) =>
(
  error: McpError.McpError
) => {
  const reason = error.reason
  if (reason._tag === "Protocol" && reason.method === McpSchema.Method.TasksGet) {
    return McpError.protocol(route.server, {
      method: reason.method,
      code: reason.code,
      data: reason.data,
      message: `${which(taskId, tool)} is unknown${lost ? " after the connection was lost" : ""} (${reason.message})${
        tool === undefined ? "" : "; the tool is not called again"
      }`
    }, error)
  }
  if (reason._tag === "Unavailable") {
    return McpError.unavailable(route.server, {
      state: reason.state,
      message: `${reason.message}; ${which(taskId, tool)} may still run there`
    }, error)
  }
  return error
}

const lostWithProcess = (route: Route, taskId: string, tool: string | undefined, error: McpError.McpError) =>
  McpError.unavailable(route.server, {
    state: route.state(),
    message: `${which(taskId, tool)} ended with the process (${error.message}); a new process does not ` +
      "know it, so the tool is not called again"
  }, error)

// The cancellation of a task whose call was given up while no live connection followed it:
// sent on the next connection, in the background (a new process does not know the task),
// within the call's ready wait even when the call ran out of its total limit.
const cancelLater = (route: Route, taskId: string, deadline: Deadline.CallDeadline) =>
  route.stdio ? Effect.void : route.background(Effect.ignore(route.withClient(
    (client) => client.request(McpSchema.Method.TasksCancel, { taskId }, Schema.Unknown, { cancellable: false }),
    { ...deadline, totalMs: Infinity, endsAt: Infinity }
  )))

/**
 * Follows `taskId` at the route's server to the result of its tool call, on the next
 * ready connection; again on the one after whenever a connection is lost (`lost`: the
 * loss that brought us here, if any). Interrupted while no connection follows it, it
 * cancels the task on the next one, in the background.
 */
export const resume = (
  route: Route,
  taskId: string,
  tool: string | undefined,
  options: CallToolOptions | undefined,
  deadline: Deadline.CallDeadline,
  lost?: McpError.McpError | undefined
): Effect.Effect<McpSchema.CallToolResult, McpError.McpError> =>
  Effect.suspend(() => {
    // Whether a connection follows the task: from the first status it tells, its follow
    // cancels the task when interrupted.
    let following = false
    const told = (task: McpSchema.Task) => {
      following = true
      return options?.onTask === undefined ? Effect.void : options.onTask(task)
    }
    const followOn = (client: McpClient.McpClient) =>
      Effect.ensuring(
        client.followTask(taskId, {
          onTask: told,
          onInput: options?.onInput,
          onProgress: options?.onProgress,
          progressToken: options?.progressToken,
          tool
        }),
        Effect.sync(() => {
          following = false
        })
      )
    const follow = (loss: McpError.McpError | undefined): Effect.Effect<McpSchema.CallToolResult, McpError.McpError> =>
      loss !== undefined && route.stdio
        ? Effect.fail(lostWithProcess(route, taskId, tool, loss))
        : route.withClient(followOn, deadline).pipe(
          Effect.mapError(explain(route, taskId, tool, loss !== undefined)),
          Effect.catchIf(connectionLost, (again) => follow(again))
        )
    return Effect.onInterrupt(follow(lost), () => following ? Effect.void : cancelLater(route, taskId, deadline))
  })

/**
 * Calls `tool` on `client`, telling `onTask` of any task it becomes; once there is one, a
 * lost connection takes the call to `resume` instead of failing it (or, refused `unsent`,
 * sending it again).
 */
export const call = (
  route: Route,
  client: McpClient.McpClient,
  tool: string,
  args: Record<string, unknown> | undefined,
  options: CallToolOptions | undefined,
  deadline: Deadline.CallDeadline,
  onTask: (task: McpSchema.Task) => Effect.Effect<void>
): Effect.Effect<McpSchema.CallToolResult, McpError.McpError> =>
  Effect.suspend(() => {
    let taskId: string | undefined
    let resumed = false
    const noted = (task: McpSchema.Task) => {
      taskId = task.taskId
      return onTask(task)
    }
    // Known to us, so a follow on the next connection listens for the same token.
    const progressToken = options?.onProgress === undefined
      ? undefined
      : options.progressToken ?? `mcp-fleet-task-${randomUUID()}`
    const sent: CallToolOptions = { ...options, progressToken }
    return client.callTool(tool, args, { ...sent, onTask: noted }).pipe(
      Effect.catchIf(
        (error) => taskId !== undefined && connectionLost(error),
        (error) => {
          resumed = true
          return resume(route, taskId!, tool, { ...sent, onTask }, deadline, error)
        }
      ),
      // Given up on after its connection ended, before the call noticed: the cancellation
      // the call sent there was refused.
      Effect.onInterrupt(() =>
        taskId === undefined || resumed || route.client() === client
          ? Effect.void
          : cancelLater(route, taskId, deadline)
      )
    )
  })
