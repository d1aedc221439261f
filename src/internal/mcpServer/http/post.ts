/**
 * POST on the Streamable HTTP endpoint: the client's messages go to its session's Peer, and
 * the answers back on the same exchange, written from the callback that has them. A POST
 * whose requests may send notifications before their answer (a tool call, `tasks/result`,
 * which carries what its task sends, or any request asking for progress) gets an SSE stream
 * once one of them does or an answer is slow, else one JSON body; others one JSON body (a
 * batch for a batch); one with only notifications and responses 202.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import * as Headers from "../headers.js"
import type { Exchange, Io } from "./exchange.js"
import { type Caller, checkPost, jsonRpcError, type RequestHeaders } from "./guard.js"
import * as HttpSession from "./httpSession.js"
import * as Modern from "./modern.js"
import * as Response from "./response.js"
import type { SessionTable } from "./sessionTable.js"
import { sseEvent, type StreamLog } from "./streamLog.js"

/** A POST body's messages, and whether they came as a batch. */
export interface Body {
  readonly messages: ReadonlyArray<JsonRpc.Message>
  readonly batch: boolean
}

/** The messages of a POST body, or the 400 that refuses it (-32700 for no JSON, -32600 for no JSON-RPC). */
export const parseBody = (text: string): Body | Response.Answer => {
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
    if (result._tag === "Left") {
      return jsonRpcError(400, JsonRpc.ErrorCode.InvalidRequest, `Invalid Request: ${result.left}`)
    }
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
  requests.some((request) =>
    request.method === McpSchema.Method.ToolsCall ||
    request.method === McpSchema.Method.TasksResult ||
    request.method === McpSchema.ModernMethod.SubscriptionsListen ||
    asksForProgress(request)
  )

/**
 * How long the answers of a POST that could be streamed may take to come as one JSON body.
 * Past it, an SSE stream opens with its priming event, so a long call can be resumed.
 */
export const JSON_WINDOW_MS = 20

// A stream for a POST's messages; the stream's log takes each message as an event and keeps
// it for a resumption.
const openStream = <X>(
  io: Exchange<X>,
  exchange: X,
  session: HttpSession.HttpSession,
  headers: Record<string, string>
): StreamLog => {
  const log = session.logs.open()
  Response.eventStream(io, exchange, headers, (sink) => session.logs.read(log, 0, sink))
  return log
}

// Answers a POST's requests with one JSON body, written when the last answer comes. When
// `streamable` (a tool call, a request asking for progress: notifications may come before
// the answers) that holds only while every answer comes within JSON_WINDOW_MS and nothing
// before them, as most tool calls do: one write, where a stream is a head, events and an
// end, plus a log kept for resumption. A notification first, or a slow answer, opens an SSE
// stream with what came so far.
const answerRequests = <X>(
  io: Exchange<X>,
  exchange: X,
  session: HttpSession.HttpSession,
  body: Body,
  waiting: Set<JsonRpc.RequestId>,
  headers: Record<string, string>,
  streamable: boolean,
  refused: ReadonlyArray<JsonRpc.Failure>
): void => {
  const early: Array<JsonRpc.Message> = [...refused]
  let log: StreamLog | undefined
  const toStream = () => {
    clearTimeout(timer)
    // A client gone before anything was written has nothing to resume from.
    if (io.isGone(exchange)) return
    log = openStream(io, exchange, session, headers)
    for (const message of early) log.append(sseEvent(message))
  }
  const timer = streamable ? setTimeout(toStream, JSON_WINDOW_MS) : undefined
  HttpSession.deliver(session, body.messages, {
    sse: streamable,
    waiting,
    push: (message) => {
      if (log === undefined && "method" in message) toStream()
      if (log !== undefined) {
        log.append(sseEvent(message))
        if (waiting.size === 0) log.finish()
        return
      }
      early.push(message)
      if (waiting.size > 0) return
      clearTimeout(timer)
      io.send(exchange, Response.json(200, body.batch ? early : early[0]), headers)
    }
  })
}

const ACCEPTED = new Response.Answer(202)

/** Answers the messages of a POST in `session`. */
export const answer = <X>(
  io: Exchange<X>,
  exchange: X,
  session: HttpSession.HttpSession,
  body: Body,
  headers: Record<string, string>
): void => {
  const requests = body.messages.filter(isRequest)
  if (requests.length === 0) {
    HttpSession.deliver(session, body.messages, undefined)
    return io.send(exchange, ACCEPTED, headers)
  }
  const { messages, refused } = apart(session, body.messages)
  const waiting = new Set(messages.filter(isRequest).map((message) => message.id))
  if (waiting.size === 0) {
    HttpSession.deliver(session, messages, undefined)
    return io.send(exchange, Response.json(200, body.batch ? refused : refused[0]), headers)
  }
  answerRequests(io, exchange, session, { ...body, messages }, waiting, headers, wantsStream(requests), refused)
}

// A request whose id an earlier one of the POST, or one of the session still unanswered,
// already uses: its answer could not be told from the other's, and only one would reach
// the client. It is answered -32600 at once, not run; the first keeps the id.
const apart = (session: HttpSession.HttpSession, messages: ReadonlyArray<JsonRpc.Message>) => {
  const used = new Set<JsonRpc.RequestId>()
  const kept: Array<JsonRpc.Message> = []
  const refused: Array<JsonRpc.Failure> = []
  for (const message of messages) {
    if (!isRequest(message)) {
      kept.push(message)
    } else if (used.has(message.id) || session.sinks.has(message.id)) {
      refused.push({
        jsonrpc: "2.0",
        id: message.id,
        error: {
          code: JsonRpc.ErrorCode.InvalidRequest,
          message: `Invalid Request: id ${
            JSON.stringify(message.id)
          } is already used by another request (${message.method} not run)`
        }
      })
    } else {
      used.add(message.id)
      kept.push(message)
    }
  }
  return { messages: kept, refused }
}

// The first request of a POST whose headers disagree with it (a modern one wants them all),
// as the 400 -32020 answer; the session never sees it.
const headerMismatch = (headers: RequestHeaders, body: Body): Response.Answer | undefined => {
  for (const message of body.messages) {
    if (!isRequest(message)) continue
    const refused = Headers.check(headers, message) ?? Headers.checkSent(headers, message)
    if (refused !== undefined) return Response.json(refused.status, refused.body)
  }
  return undefined
}

const NOT_ALONE = jsonRpcError(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: initialize must be sent alone")
const INITIALIZED = jsonRpcError(
  400,
  JsonRpc.ErrorCode.InvalidRequest,
  "Invalid Request: the session is already initialized"
)

// A POST's messages: a modern request outside any session answered on its own, an
// initialize opening a session, anything else to the session the request names.
const route = <X>(
  io: Io<X>,
  exchange: X,
  table: SessionTable,
  requestHeaders: RequestHeaders,
  body: Body,
  headers: Record<string, string>,
  caller: Caller | undefined
): void => {
  const modern = Modern.modernRequest(table.server, requestHeaders, body)
  if (modern !== undefined) {
    return Modern.handle(io, exchange, modern, requestHeaders, headers, wantsStream([modern.request]), caller)
  }
  const mismatched = headerMismatch(requestHeaders, body)
  if (mismatched !== undefined) return io.send(exchange, mismatched, headers)
  const initialize = body.messages.some((message) =>
    isRequest(message) && message.method === McpSchema.Method.Initialize
  )
  if (!initialize) {
    const session = table.lookup(requestHeaders, caller)
    if (session instanceof Response.Answer) return io.send(exchange, session, headers)
    return answer(io, exchange, session, body, headers)
  }
  if (body.messages.length > 1) return io.send(exchange, NOT_ALONE, headers)
  if (table.has(requestHeaders["mcp-session-id"])) return io.send(exchange, INITIALIZED, headers)
  io.fork(
    exchange,
    Effect.map(table.open(caller, io.address(exchange)), (session) =>
      session instanceof Response.Answer
        ? io.send(exchange, session, headers)
        : answer(io, exchange, session, body, { ...headers, "mcp-session-id": session.id }))
  )
}

/**
 * Handles a POST: its headers are checked, its body read (within the size and time limits)
 * and parsed, and its messages
 * answered (`route`): a modern request outside any session on its own (`modern.ts`), an
 * initialize (sent alone) opening a session whose id the answer carries (the `caller`'s,
 * with OAuth), anything else in the session it names.
 */
export const handle = <X>(
  io: Io<X>,
  exchange: X,
  table: SessionTable,
  options: { readonly maxMessageBytes: number; readonly bodyTimeout: Duration.DurationInput },
  headers: Record<string, string>,
  caller: Caller | undefined
): void => {
  const requestHeaders = io.headers(exchange)
  const refused = checkPost(requestHeaders, options.maxMessageBytes)
  if (refused !== undefined) return io.send(exchange, refused, headers)
  const limits = { maxBytes: options.maxMessageBytes, timeoutMs: Duration.toMillis(options.bodyTimeout) }
  io.readBody(exchange, limits, (text) => {
    try {
      const body = text instanceof Response.Answer ? text : parseBody(text)
      if (body instanceof Response.Answer) return io.send(exchange, body, headers)
      route(io, exchange, table, requestHeaders, body, headers, caller)
    } catch (defect) {
      io.failed(exchange, defect)
    }
  })
}
