/**
 * Modern (2026-07-28) requests on the Streamable HTTP endpoint. A POST without
 * Mcp-Session-Id whose one message is a modern request (`_meta` naming its revision, or a
 * method only that revision has) is answered on its own, with no session at all
 * (`alone.ts`); closing the response cancels the request, as the revision says. Its headers are checked against its body
 * first (`headers.ts`; a tool call's `Mcp-Param-*` headers in the call's path, where the
 * tool is found: `modern.ts`); an error
 * answered as JSON gets the status the revision gives it. Stateful clients on the endpoint are
 * unaffected: they name their session.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import type * as McpServer from "../../../McpServer.js"
import { answerer, type AnswerModern } from "../alone.js"
import { isModern } from "../era.js"
import * as Headers from "../headers.js"
import type { Io } from "./exchange.js"
import type { Caller, RequestHeaders } from "./guard.js"
import type { Body } from "./post.js"
import * as Response from "./response.js"
import { primed, sseEvent, type StreamLog } from "./streamLog.js"

/** A modern request a POST carries alone and outside any session, and how its server answers it. */
export interface Alone {
  readonly request: JsonRpc.Request
  readonly answer: AnswerModern
}

/**
 * The modern request a POST carries alone and outside any session, if `server` answers one:
 * by its `answerModern`, else (a server made otherwise) in a session made for the request.
 */
export const modernRequest = (
  server: McpServer.McpServer,
  headers: RequestHeaders,
  body: Body
): Alone | undefined => {
  const message = body.messages[0]
  const answer = headers["mcp-session-id"] !== undefined || body.batch || body.messages.length !== 1
    ? undefined
    : answerer(server)
  return answer !== undefined && message !== undefined && JsonRpc.isRequest(message) && isModern(message)
    ? { request: message, answer }
    : undefined
}

// The JSON-RPC errors whose HTTP status the modern revision fixes: -32601 is 404, so a client
// tells an unknown method from a legacy server's 404; bad params, header mismatches, a missing
// client capability and an unsupported revision are 400.
const STATUS: Readonly<Record<number, number>> = {
  [JsonRpc.ErrorCode.MethodNotFound]: 404,
  [JsonRpc.ErrorCode.InvalidParams]: 400,
  [McpSchema.ModernErrorCode.HeaderMismatch]: 400,
  [McpSchema.ModernErrorCode.MissingRequiredClientCapability]: 400,
  [McpSchema.ModernErrorCode.UnsupportedProtocolVersion]: 400
}

/** The HTTP status of a modern answer sent as JSON. */
export const statusOf = (message: JsonRpc.Message): number =>
  "error" in message ? STATUS[message.error.code] ?? 200 : 200

const mismatch = (refused: Headers.HeaderMismatch) => Response.json(refused.status, refused.body)

/**
 * Answers a modern request with its server's `answerModern` (no session): its headers checked first. Its
 * answer is JSON with `statusOf`, unless it may notify first (`streamable`) and does: then
 * an SSE stream from its first notification (not resumable: nothing keeps it). Closing
 * the response interrupts the request.
 */
export const handle = <X>(
  io: Io<X>,
  exchange: X,
  alone: Alone,
  requestHeaders: RequestHeaders,
  headers: Record<string, string>,
  streamable: boolean,
  caller: Caller | undefined
): void => {
  const request = alone.request
  const refused = Headers.check(requestHeaders, request)
  if (refused !== undefined) return io.send(exchange, mismatch(refused), headers)
  if (io.isGone(exchange)) return
  let log: StreamLog | undefined
  let answered = false
  const toStream = () => {
    // A client gone before anything was written gets nothing more.
    if (io.isGone(exchange)) return
    // Its events are written as they come, and not kept: nothing resumes this stream.
    Response.eventStream(io, exchange, headers, (sink) => {
      log = primed(sink)
      return sink
    })
  }
  // Notifications of the request go on its stream while it runs; others have nowhere to go.
  const notify = (
    method: string,
    params: Record<string, unknown> | undefined,
    related: JsonRpc.RequestId | undefined
  ) =>
    Effect.sync(() => {
      if (answered || !streamable || related !== request.id) return
      if (log === undefined) toStream()
      log?.append(sseEvent({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }))
    })
  const reply = (message: JsonRpc.Success | JsonRpc.Failure) =>
    Effect.sync(() => {
      answered = true
      if (log === undefined) return io.send(exchange, Response.json(statusOf(message), message), headers)
      log.append(sseEvent(message))
      log.finish()
    })
  // The tool call's Mcp-Param-* headers are checked where the call finds its tool.
  const fiber = io.fork(
    exchange,
    Effect.flatMap(alone.answer(request, { notify, caller, headers: requestHeaders }), reply)
  )
  // (A request answered has ended: nothing to interrupt.)
  io.onClose(exchange, () => {
    if (!answered) fiber.unsafeInterruptAsFork(FiberId.none)
  })
}
