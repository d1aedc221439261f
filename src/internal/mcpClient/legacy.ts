/**
 * The legacy era: a connection of a stateful revision (2024-11-05 … 2025-11-25), made after
 * initialize. Requests go out as they are, over the Peer itself, one request each (no input
 * rounds: `exchange.ts`'s are modern); a server's requests for a
 * call come on its POST's stream (Streamable HTTP) or name its task, and go to the call's
 * `onInput`. Tool calls may run as 2025-11-25 tasks (`tasks.ts`): asked for with
 * `CallToolOptions.task`, or required by the tool, when the server declares task-augmented
 * tool calls; `followTask` is `tasks/get` and `tasks/result`. The host's notifications (a
 * roots change) are told to the server; notifications and subscriptions are the Peer's own,
 * and the operations are the plain requests of `operations.ts`. Log messages belong to no
 * call (`onLog` is not used).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpSchema from "../../McpSchema.js"
import type { Connection } from "./connection.js"
import type { Era, SendCall } from "./era.js"
import { type Exchange, requestOf } from "./exchange.js"
import type { Agreed } from "./handshake.js"
import { makeOperations } from "./operations.js"
import { requestAsTask, resumeTask } from "./tasks.js"

/**
 * The era of a connection that agreed on a legacy revision.
 */
export const makeLegacy = (connection: Connection, agreed: Agreed): Era => {
  const { peer, related, server } = connection
  const tasks = agreed.capabilities.tasks?.requests?.tools?.call !== undefined
  // A legacy server answers with no `resultType` (input rounds and the tasks extension are
  // modern), so a request is the Peer's own; its own requests may come on its stream.
  const exchange: Exchange = (method, params, requestOptions, _onTask, onInput) =>
    onInput === undefined
      ? peer.request(method, params, requestOptions)
      : related.sending(onInput, requestOptions, (sent) => peer.request(method, params, sent))
  return {
    wire: peer,
    notify: peer.notify,
    request: requestOf(server, exchange),
    accepted: Effect.succeed,
    sendCall: (requiresTask) => tasks ? sendAsTask(connection, exchange, requiresTask) : sendPlain(exchange),
    plainCall: tasks
      ? undefined
      : (params, requestOptions) => peer.request(McpSchema.Method.ToolsCall, params, requestOptions),
    followTask: (taskId, options) =>
      related.follow(options?.onInput, options?.onTask, (onTask) =>
        resumeTask(peer, taskId, {
          onTask,
          onProgress: options?.onProgress,
          progressToken: options?.progressToken
        })),
    subscribe: peer.subscribe,
    notifications: peer.notifications,
    operations: makeOperations
  }
}

// Tool calls to a server without tasks: each one request.
const sendPlain = (exchange: Exchange): SendCall => (_name, params, requestOptions, options) =>
  options === undefined
    ? exchange(McpSchema.Method.ToolsCall, params, requestOptions)
    : exchange(McpSchema.Method.ToolsCall, params, requestOptions, options.onTask, options.onInput)

// Tool calls to a server with task-augmented tool calls (2025-11-25): a task when asked for,
// or when the tool requires one (known once the tools are listed: decided per call).
const sendAsTask = (
  { peer, related }: Connection,
  exchange: Exchange,
  requiresTask: (name: string) => boolean
): SendCall =>
(name, params, requestOptions, options) =>
  Effect.suspend(() => {
    const onInput = options?.onInput
    const onTask = options?.onTask
    if (options?.task !== true && !requiresTask(name)) {
      return exchange(McpSchema.Method.ToolsCall, params, requestOptions, onTask, onInput)
    }
    return related.follow(onInput, onTask, (noted) =>
      related.sending(
        onInput,
        requestOptions,
        (sent) => requestAsTask(peer, McpSchema.Method.ToolsCall, params, { ...sent, onTask: noted })
      ))
  })
