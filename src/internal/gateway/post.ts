/**
 * POST on the gateway's HTTP endpoint: the client's messages go to its session's Peer, and
 * the answers back on the same response, written from the callback that has them. A POST
 * whose requests may send notifications before their answer (a tool call, or any request
 * asking for progress) gets an SSE stream; others one JSON body (a batch for a batch);
 * one with only notifications and responses 202.
 *
 * @internal
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { checkPost, jsonRpcError, tooLarge } from "./guard.js"
import * as HttpSession from "./httpSession.js"
import * as Response from "./response.js"
import type { SessionTable } from "./sessionTable.js"
import { sseEvent } from "./streamLog.js"

/** A POST body's messages, and whether they came as a batch. */
export interface Body {
  readonly messages: ReadonlyArray<JsonRpc.Message>
  readonly batch: boolean
}

/** The messages of a POST body, or the 400 that refuses it (-32700 for no JSON, -32600 for no JSON-RPC). */
export const parseBody = (text: string): Body | HttpServerResponse.HttpServerResponse => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return jsonRpcError(400, JsonRpc.ErrorCode.ParseError, "Parse error: the body is not JSON")
  }
  const items = Array.isArray(json) ? json : [json]
  if (items.length === 0) return jsonRpcError(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: an empty batch")
  const messages: Array<JsonRpc.Message> = []
  for (const item of items) {
    const result = JsonRpc.validateMessage(item)
    if (result._tag === "Left") return jsonRpcError(400, JsonRpc.ErrorCode.InvalidRequest, `Invalid Request: ${result.left}`)
    messages.push(result.right)
  }
  return { messages, batch: Array.isArray(json) }
}

const isRequest = (message: JsonRpc.Message): message is JsonRpc.Request => JsonRpc.isRequest(message)

const asksForProgress = (request: JsonRpc.Request): boolean => {
  const meta = request.params?._meta
  return typeof meta === "object" && meta !== null && Object.hasOwn(meta, "progressToken")
}

/** Whether a POST's requests are answered on an SSE stream. */
export const wantsStream = (requests: ReadonlyArray<JsonRpc.Request>): boolean =>
  requests.some((request) => request.method === McpSchema.Method.ToolsCall || asksForProgress(request))

// Answers a POST's requests on an SSE stream: the stream's log takes each answer and
// notification as an event, and ends once every request is answered.
const answerStream = (
  request: HttpServerRequest.HttpServerRequest,
  session: HttpSession.HttpSession,
  body: Body,
  waiting: Set<JsonRpc.RequestId>,
  headers: Record<string, string>
) =>
  Response.eventStream(request, headers, (sink) => {
    const log = session.logs.open()
    const reader = session.logs.read(log, 0, sink)
    HttpSession.deliver(session, body.messages, {
      sse: true,
      waiting,
      push: (message) => {
        log.append(sseEvent(message))
        if (waiting.size === 0) log.finish()
      }
    })
    return reader
  })

// Answers a POST's requests with one JSON body, written when the last answer is sent.
const answerJson = (
  request: HttpServerRequest.HttpServerRequest,
  session: HttpSession.HttpSession,
  body: Body,
  waiting: Set<JsonRpc.RequestId>,
  headers: Record<string, string>
) =>
  Response.json(request, headers, (write) => {
    const answers: Array<JsonRpc.Message> = []
    HttpSession.deliver(session, body.messages, {
      sse: false,
      waiting,
      push: (message) => {
        answers.push(message)
        if (waiting.size === 0) write(body.batch ? answers : answers[0])
      }
    })
  })

/** Answers the messages of a POST in `session`. */
export const answer = (
  request: HttpServerRequest.HttpServerRequest,
  session: HttpSession.HttpSession,
  body: Body,
  headers: Record<string, string>
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const requests = body.messages.filter(isRequest)
  if (requests.length === 0) {
    HttpSession.deliver(session, body.messages, undefined)
    return Effect.succeed(HttpServerResponse.empty({ status: 202 }))
  }
  const waiting = new Set(requests.map((message) => message.id))
  const answered = wantsStream(requests)
    ? answerStream(request, session, body, waiting, headers)
    : answerJson(request, session, body, waiting, headers)
  // The answer is on the wire already; the server sees the response ended and writes nothing.
  return Effect.as(answered, HttpServerResponse.empty())
}

/**
 * Handles a POST: its headers and body are checked, an initialize (sent alone) opens a
 * session whose id the answer carries, and anything else goes to the session it names.
 */
export const handle = (
  request: HttpServerRequest.HttpServerRequest,
  table: SessionTable,
  maxMessageBytes: number,
  headers: Record<string, string>
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.gen(function*() {
    const refused = checkPost(request.headers, maxMessageBytes)
    if (refused !== undefined) return refused
    const text = yield* Effect.orElseSucceed(request.text, () => undefined)
    if (text === undefined) return jsonRpcError(400, JsonRpc.ErrorCode.ParseError, "the body could not be read")
    if (Buffer.byteLength(text) > maxMessageBytes) return tooLarge(maxMessageBytes)
    const body = parseBody(text)
    if (HttpServerResponse.isServerResponse(body)) return body
    const initialize = body.messages.some((message) => isRequest(message) && message.method === McpSchema.Method.Initialize)
    if (!initialize) {
      const session = table.lookup(request.headers)
      if (HttpServerResponse.isServerResponse(session)) return session
      return yield* answer(request, session, body, headers)
    }
    if (body.messages.length > 1) {
      return jsonRpcError(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: initialize must be sent alone")
    }
    if (table.has(request.headers["mcp-session-id"])) {
      return jsonRpcError(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: the session is already initialized")
    }
    const session = yield* table.open()
    if (HttpServerResponse.isServerResponse(session)) return session
    return yield* answer(request, session, body, { ...headers, "mcp-session-id": session.id })
  })
