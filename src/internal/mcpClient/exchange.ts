/**
 * One request's way to the server and back, as a modern connection sends it: input rounds
 * answered (`mrtr.ts`), a task the server made of it followed to its result (the tasks
 * extension, `tasks.ts`), the input requests of both answered by the call's `onInput` when it
 * has one (`callInput.ts`); and `McpClient.request` made of an exchange, its result decoded,
 * for both eras (a legacy server sends none of these, so its exchange is the Peer's request).
 *
 * @internal
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { CallToolOptions, McpClient } from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import type * as Peer from "../../Peer.js"
import { forCall } from "./callInput.js"
import { decode } from "./decode.js"
import { withInputRounds } from "./mrtr.js"
import { followTask } from "./tasks.js"

/**
 * Sends one request (see `makeExchange`); `onTask` is told the statuses of a task the server
 * makes of it, `onInput` answers its input requests.
 */
export type Exchange = (
  method: string,
  params: Record<string, unknown> | undefined,
  requestOptions: Peer.RequestOptions | undefined,
  onTask?: CallToolOptions["onTask"],
  onInput?: CallToolOptions["onInput"]
) => Effect.Effect<Record<string, unknown>, McpError.McpError>

/**
 * How a connection sends a request over `peer`: input rounds answered (2026-07-28), and a
 * task the server made of it followed to its result (the tasks extension), its statuses told
 * to `onTask`, the input requests of both answered by `onInput` when the call has one.
 * `complete` makes a final result what the caller gets (a modern connection's: without the
 * envelope). A round's answers, and its task's, wait no longer than the request's `timeout`,
 * else `requestTimeout` (the connection's default): the call's timeout covers the client's answers.
 */
export const makeExchange = (
  peer: Peer.Peer,
  handlers: Readonly<Record<string, Peer.Handler>>,
  complete: ((result: Record<string, unknown>) => Record<string, unknown>) | undefined,
  requestTimeout: Duration.DurationInput
): Exchange =>
(method, params, requestOptions, onTask, onInput) => {
  const own = forCall(handlers, onInput)
  const within = requestOptions?.timeout ?? requestTimeout
  return withInputRounds(
    peer.server,
    own,
    method,
    params,
    (sent) => peer.request(method, sent, requestOptions),
    (created) => {
      const followed = followTask(peer, own, method, created, { onTask, within })
      return complete === undefined ? followed : Effect.map(followed, complete)
    },
    complete,
    within
  )
}

/**
 * `McpClient.request` from an exchange: the call's `onInput` taken out of the Peer's
 * options, the result decoded with `schema`.
 */
export const requestOf = (server: string, exchange: Exchange): McpClient["request"] =>
(
  method,
  params,
  schema,
  requestOptions
) => {
  const { onInput, ...rest } = requestOptions ?? {}
  return Effect.flatMap(
    exchange(method, params, requestOptions === undefined ? undefined : rest, undefined, onInput),
    (result) => decode(server, method, schema, result)
  )
}
