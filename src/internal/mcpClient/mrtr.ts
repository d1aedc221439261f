/**
 * Multi round-trip requests (2026-07-28): a server that needs something from the client
 * while serving `tools/call`, `resources/read` or `prompts/get` answers with an
 * `InputRequiredResult` instead of asking on its own. Its input requests are answered at once
 * (each told its key) by the connection's own host handlers — the very ones that answer the
 * legacy revisions' server requests, so an MRTR answer is decoded and checked exactly like
 * one — or by the call's `onInput` (`callInput.ts`), and the request is sent again (a new JSON-RPC id, from the Peer) with
 * `inputResponses` and the server's `requestState` echoed untouched. Only the answers of the
 * latest round go with a retry: whatever the server needs of earlier rounds it keeps in its
 * `requestState`. Each request carries its own rounds, so parallel calls never see each
 * other's state.
 *
 * The wait for a round's answers counts as the request's own: it ends after the request's
 * `timeout` (`within`), as a legacy server's request to the client does by leaving the
 * call unanswered, so a client that never answers cannot hold the call past its timeout.
 * A task's own input requests (`tasks.ts`) are bounded the same way (`answerWithin`).
 *
 * A result with no `resultType`, or `"complete"`, is final (older servers send none). `"task"`
 * (the tasks extension) is handed to the caller's `onTask`; any other value is a Protocol
 * error. A server that keeps asking is stopped after `MAX_ROUNDS` rounds.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Host from "../../Host.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import { inputMethods } from "./callInput.js"
import { decode } from "./decode.js"

/** The most input rounds one request may take before the client gives up on the server. */
export const MAX_ROUNDS = 10

type Result = Record<string, unknown>

/** Sends the request once with these params. */
export type Send = (params: Record<string, unknown> | undefined) => Effect.Effect<Result, McpError.McpError>

/** Follows a `resultType: "task"` answer to the request's own result. */
export type OnTask = (created: Result) => Effect.Effect<Result, McpError.McpError>

const protocolError = (server: string, method: string, code: number, message: string, data?: unknown) =>
  McpError.protocol(server, { method, code, message, ...(data === undefined ? {} : { data }) })

/**
 * Answers a server's input requests, all at once as the server asked them (a legacy
 * server's requests may come at once too), each with the handler of its method, which is
 * told the key it was asked under. A kind the client did not declare has no handler: the
 * server broke the rule not to ask for it, and the request fails naming what it asked.
 */
export const answerInputs = (
  server: string,
  handlers: Readonly<Record<string, Peer.Handler>>,
  method: string,
  inputs: McpSchema.InputRequests
): Effect.Effect<McpSchema.InputResponses, McpError.McpError> =>
  Effect.map(
    Effect.forEach(Object.entries(inputs), ([key, input]) => {
      const handler = inputMethods.has(input.method) ? handlers[input.method] : undefined
      if (handler === undefined) {
        return Effect.fail(protocolError(
          server,
          method,
          JsonRpc.ErrorCode.MethodNotFound,
          `it asked for ${input.method} (input "${key}"), which this client did not declare`
        ))
      }
      return handler(Host.inputRequest(key, input.method, input.params)).pipe(
        Effect.mapError((error) =>
          protocolError(
            server,
            input.method,
            error.code,
            `input "${key}" was not answered: ${error.message}`,
            error.data
          )
        ),
        Effect.map((answer) => [key, answer] as const)
      )
    }, { concurrency: "unbounded" }),
    (answers): Record<string, Result> => Object.fromEntries(answers)
  )

/**
 * `answerInputs` within `within` (the request's timeout, in the same units): a client that
 * never answers fails the request with a Timeout of kind `idle` after it.
 */
export const answerWithin = (
  server: string,
  handlers: Readonly<Record<string, Peer.Handler>>,
  method: string,
  inputs: McpSchema.InputRequests,
  within: Duration.DurationInput
): Effect.Effect<McpSchema.InputResponses, McpError.McpError> => {
  const afterMs = Duration.toMillis(Duration.decode(within))
  return Effect.timeoutFail(answerInputs(server, handlers, method, inputs), {
    duration: afterMs,
    onTimeout: () => McpError.timeout(server, { method, afterMs, kind: "idle" })
  })
}

/**
 * Sends `params` with `send` and answers input rounds until the result is final. `onTask`
 * takes a task the server made of the request (absent: `"task"` is an unknown type).
 * `complete` makes the final result what the caller gets (a modern connection drops the
 * envelope there, in the step that reads `resultType`, not in one more after it). `within`:
 * how long each round's answers may take, in ms (a Timeout of kind `idle` after it).
 */
export const withInputRounds = (
  server: string,
  handlers: Readonly<Record<string, Peer.Handler>>,
  method: string,
  params: Record<string, unknown> | undefined,
  send: Send,
  onTask: OnTask | undefined,
  complete: ((result: Result) => Result) | undefined,
  within: Duration.DurationInput
): Effect.Effect<Result, McpError.McpError> => {
  const round = (sent: Record<string, unknown> | undefined, rounds: number): Effect.Effect<Result, McpError.McpError> =>
    Effect.flatMap(send(sent), (result) => {
      const type = result.resultType
      if (type === undefined || type === "complete") {
        return Effect.succeed(complete === undefined ? result : complete(result))
      }
      if (type === "task" && onTask !== undefined) return onTask(result)
      if (type !== "input_required") {
        return Effect.fail(protocolError(
          server,
          method,
          JsonRpc.ErrorCode.InternalError,
          `its answer has an unknown resultType ${JSON.stringify(type)}`
        ))
      }
      if (rounds >= MAX_ROUNDS) {
        return Effect.fail(McpError.limit(server, { what: `the input rounds of one ${method}`, limit: MAX_ROUNDS }))
      }
      return decode(server, method, McpSchema.InputRequiredResult, result).pipe(
        Effect.flatMap((asked) =>
          Effect.map(
            asked.inputRequests === undefined
              ? Effect.succeed(undefined)
              : answerWithin(server, handlers, method, asked.inputRequests, within),
            (responses) => retryParams(params, responses, asked.requestState)
          )
        ),
        Effect.flatMap((next) => round(next, rounds + 1))
      )
    })
  return round(params, 1)
}

// The original params with this round's answers and state, and nothing of earlier rounds.
const retryParams = (
  params: Record<string, unknown> | undefined,
  responses: McpSchema.InputResponses | undefined,
  requestState: string | undefined
): Record<string, unknown> => {
  const next: Record<string, unknown> = { ...params }
  if (responses !== undefined) next.inputResponses = responses
  if (requestState !== undefined) next.requestState = requestState
  return next
}
