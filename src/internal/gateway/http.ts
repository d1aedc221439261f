/**
 * The gateway's Streamable HTTP server: one endpoint, sessions keyed by Mcp-Session-Id, each
 * a Peer over a transport whose answers go back on the POST that asked (as JSON, or as an SSE
 * stream when the request may produce notifications on the way) and whose other
 * notifications go on the session's standing GET stream. Origin and Host are checked
 * against DNS rebinding, and an optional bearer token guards everything.
 *
 * @internal
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import * as http from "node:http"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import * as Peer from "../../Peer.js"
import { Transport, type TransportService } from "../../Transport.js"
import { type Fleet, makeSession } from "./session.js"

/** The HTTP server's settings, resolved. */
export interface HttpOptions {
  readonly port: number
  readonly host: string
  readonly path: string
  readonly token: Redacted.Redacted<string> | undefined
  readonly allowedOrigins: ReadonlyArray<string>
  readonly maxMessageBytes: number
  readonly maxSessions: number
  /** How long a session may be idle (no request, no open stream) before it ends. */
  readonly sessionIdleTimeout: Duration.DurationInput
}

// Where a POST's answers go: an SSE stream written as they come, or one JSON body once all
// of its requests are answered.
interface Sink {
  readonly sse: boolean
  readonly waiting: Set<JsonRpc.RequestId>
  readonly push: (message: JsonRpc.Message) => void
}

// The events of one POST's SSE stream, kept so a client whose connection dropped can get
// the rest with a GET carrying Last-Event-ID (SEP-1699). Event ids are `<stream>:<index>`.
interface StreamLog {
  readonly id: string
  readonly events: Array<string>
  /** The size of `events`, in UTF-16 code units. */
  bytes: number
  done: boolean
  /** The connection reading the stream now, if any. */
  reader: Queue.Queue<string> | undefined
}

interface HttpSession {
  readonly id: string
  readonly scope: Scope.CloseableScope
  readonly inbox: Queue.Queue<JsonRpc.Message>
  readonly sinks: Map<JsonRpc.RequestId, Sink>
  /** The POST streams being read, and the last few nobody reads, by id, oldest first. */
  readonly logs: Map<string, StreamLog>
  /** The POST and resumed streams open now. */
  readonly readers: Set<Queue.Queue<string>>
  standing: Queue.Queue<string> | undefined
  /** When the client last sent something, or an open stream of it ended. */
  lastActive: number
}

const encoder = new TextEncoder()
const sseEvent = (message: JsonRpc.Message): string => `event: message\ndata: ${JSON.stringify(message)}\n\n`
/** Marks the end of a stream in its queue. */
const END = ""
/** How long a client waits before resuming a dropped stream (the SSE `retry` field). */
const RETRY_MS = 1000
/** How often an idle GET stream gets a comment. */
const KEEP_ALIVE = Duration.seconds(25)
/** How many streams nobody reads a session keeps for resumption, and how much of them. */
const MAX_LOGS = 16
const MAX_LOG_BYTES = 4 * 1024 * 1024

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

const hostnameOf = (value: string): string | undefined => {
  try {
    return new URL(value.includes("://") ? value : `http://${value}`).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

// Hashing both sides first gives equal lengths, so the comparison's time says nothing.
const sameSecret = (given: string, expected: string): boolean =>
  timingSafeEqual(createHash("sha256").update(given).digest(), createHash("sha256").update(expected).digest())

const jsonRpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson({ jsonrpc: "2.0", id: null, error: { code, message } }, { status, headers })

const isRequest = (message: JsonRpc.Message): message is JsonRpc.Request => JsonRpc.isRequest(message)

/**
 * Serves the gateway over HTTP until the Scope closes; returns the endpoint's URL.
 */
export const serve = (fleet: Fleet, options: HttpOptions): Effect.Effect<string, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const serverScope = yield* Effect.scope
    const clock = yield* Effect.clock
    const sessions = new Map<string, HttpSession>()
    const allowedOrigins = new Set(options.allowedOrigins.map((origin) => origin.toLowerCase().replace(/\/$/, "")))
    const allowedHosts = new Set(
      options.allowedOrigins.flatMap((origin) => {
        const host = hostnameOf(origin)
        return host === undefined ? [] : [host]
      })
    )
    // Bound to a loopback address, Host must name one too (or an allowed origin's host); bound
    // elsewhere, the operator chose to be reachable by other names.
    const checkHost = LOOPBACK.has(options.host.toLowerCase())

    const token = options.token === undefined ? undefined : Redacted.value(options.token)

    // --- one session -------------------------------------------------------------------

    const openSession = Effect.gen(function*() {
      const id = randomUUID()
      const scope = yield* Scope.fork(serverScope, { _tag: "Sequential" })
      const inbox = yield* Queue.unbounded<JsonRpc.Message>()
      const sinks = new Map<JsonRpc.RequestId, Sink>()

      const toStanding = (message: JsonRpc.Message) => {
        // With no stream open the message has nowhere to go: the client is not listening.
        entry.standing?.unsafeOffer(sseEvent(message))
      }
      const send = (message: JsonRpc.Message): Effect.Effect<void, McpError.McpError> =>
        Effect.sync(() => {
          if ("method" in message) return toStanding(message)
          const sink = message.id === null ? undefined : sinks.get(message.id)
          if (sink === undefined) return toStanding(message)
          sinks.delete(message.id!)
          sink.waiting.delete(message.id!)
          sink.push(message)
        })
      const transport: TransportService = {
        server: `http client ${id.slice(0, 8)}`,
        kind: "http",
        send,
        incoming: Stream.fromQueue(inbox),
        info: () => ({ sessionId: id })
      }
      const session = yield* makeSession(fleet, {
        notify: (method, params, related) =>
          Effect.sync(() => {
            const message: JsonRpc.Notification = { jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }
            const sink = related === undefined ? undefined : sinks.get(related)
            if (sink?.sse) sink.push(message)
            else toStanding(message)
          })
      }).pipe(Scope.extend(scope))
      const entry: HttpSession = {
        id,
        scope,
        inbox,
        sinks,
        logs: new Map(),
        readers: new Set(),
        standing: undefined,
        lastActive: clock.unsafeCurrentTimeMillis()
      }
      yield* Peer.make({ handlers: session.handlers }).pipe(
        Effect.provideService(Transport, transport),
        Scope.extend(scope)
      )
      // Requests still waiting get an error, and open streams end, with the session.
      yield* Scope.addFinalizer(
        scope,
        Effect.zipRight(
          Queue.shutdown(inbox),
          Effect.sync(() => {
            for (const [requestId, sink] of sinks) {
              sinks.delete(requestId)
              sink.waiting.delete(requestId)
              sink.push({
                jsonrpc: "2.0",
                id: requestId,
                error: { code: JsonRpc.ErrorCode.InternalError, message: "the session ended before the answer" }
              })
            }
            entry.standing?.unsafeOffer(END)
            for (const reader of entry.readers) reader.unsafeOffer(END)
          })
        )
      )
      sessions.set(id, entry)
      return entry
    })

    const closeSession = (entry: HttpSession) =>
      Effect.suspend(() => {
        if (!sessions.delete(entry.id)) return Effect.void
        return Scope.close(entry.scope, Exit.void)
      })

    // --- POST ----------------------------------------------------------------------------

    // Streams nobody reads are kept for a while, even those read to their end: a connection
    // may have dropped after the server wrote the last event but before the client got it.
    // The oldest go first once there are too many or they hold too much.
    const evict = (entry: HttpSession) => {
      let count = 0
      let bytes = 0
      for (const log of [...entry.logs.values()].reverse()) {
        if (log.reader !== undefined) continue
        count++
        bytes += log.bytes
        if (count > MAX_LOGS || bytes > MAX_LOG_BYTES) entry.logs.delete(log.id)
      }
    }

    // A stream of a POST's events from index `from` on, ending with the POST's last answer.
    // A GET with Last-Event-ID can take it over, while it is kept.
    const readLog = (entry: HttpSession, log: StreamLog, from: number) =>
      Effect.gen(function*() {
        const queue = yield* Queue.unbounded<string>()
        log.reader?.unsafeOffer(END)
        log.reader = queue
        entry.readers.add(queue)
        for (const event of log.events.slice(from)) queue.unsafeOffer(event)
        if (log.done) queue.unsafeOffer(END)
        return Stream.fromQueue(queue).pipe(
          Stream.takeWhile((text) => text !== END),
          Stream.map((text) => encoder.encode(text)),
          Stream.ensuring(Effect.sync(() => {
            entry.readers.delete(queue)
            entry.lastActive = clock.unsafeCurrentTimeMillis()
            if (log.reader === queue) log.reader = undefined
            evict(entry)
          }))
        )
      })

    // Answers a POST's requests: SSE when one of them may send notifications before its
    // answer (a tool call, or any request asking for progress), JSON otherwise.
    const answer = (
      entry: HttpSession,
      messages: ReadonlyArray<JsonRpc.Message>,
      batch: boolean,
      headers: Record<string, string>
    ) =>
      Effect.gen(function*() {
        const requests = messages.filter(isRequest)
        const wantsStream = requests.some((request) =>
          request.method === McpSchema.Method.ToolsCall ||
          (typeof request.params?._meta === "object" && request.params?._meta !== null &&
            "progressToken" in (request.params._meta as object))
        )
        const waiting = new Set(requests.map((request) => request.id))
        if (wantsStream) {
          const log: StreamLog = { id: randomUUID().slice(0, 8), events: [], bytes: 0, done: false, reader: undefined }
          entry.logs.set(log.id, log)
          const append = (text: string) => {
            const event = `id: ${log.id}:${log.events.length}\n${text}`
            log.events.push(event)
            log.bytes += event.length
            log.reader?.unsafeOffer(event)
          }
          // A priming event (id, no data) first, so the client can resume from the start.
          append(`retry: ${RETRY_MS}\ndata: \n\n`)
          const sink: Sink = {
            sse: true,
            waiting,
            push: (message) => {
              append(sseEvent(message))
              if (waiting.size === 0) {
                log.done = true
                log.reader?.unsafeOffer(END)
              }
            }
          }
          for (const id of waiting) entry.sinks.set(id, sink)
          const body = yield* readLog(entry, log, 0)
          for (const message of messages) entry.inbox.unsafeOffer(message)
          return HttpServerResponse.stream(body, {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache", connection: "keep-alive", ...headers }
          })
        }
        const answers: Array<JsonRpc.Message> = []
        const done = yield* Deferred.make<void>()
        const sink: Sink = {
          sse: false,
          waiting,
          push: (message) => {
            answers.push(message)
            if (waiting.size === 0) Deferred.unsafeDone(done, Exit.void)
          }
        }
        for (const id of waiting) entry.sinks.set(id, sink)
        for (const message of messages) entry.inbox.unsafeOffer(message)
        yield* Deferred.await(done)
        return HttpServerResponse.unsafeJson(batch ? answers : answers[0], {
          headers
        })
      })

    const parseBody = (
      text: string
    ): { readonly messages: Array<JsonRpc.Message>; readonly batch: boolean } | HttpServerResponse.HttpServerResponse => {
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

    const accepts = (request: HttpServerRequest.HttpServerRequest, type: string) => {
      const accept = request.headers["accept"]
      return accept === undefined || accept.includes(type) || accept.includes("*/*")
    }

    const post = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        if (!accepts(request, "application/json") && !accepts(request, "text/event-stream")) {
          return jsonRpcError(406, JsonRpc.ErrorCode.InvalidRequest, "Not Acceptable: accept application/json and text/event-stream")
        }
        const contentType = request.headers["content-type"]
        if (contentType !== undefined && !contentType.toLowerCase().includes("application/json")) {
          return jsonRpcError(415, JsonRpc.ErrorCode.InvalidRequest, "Unsupported Media Type: send application/json")
        }
        const length = Number(request.headers["content-length"] ?? 0)
        if (length > options.maxMessageBytes) {
          return jsonRpcError(413, JsonRpc.ErrorCode.InvalidRequest, `the body exceeds ${options.maxMessageBytes} bytes`)
        }
        const text = yield* Effect.orElseSucceed(request.text, () => undefined)
        if (text === undefined) return jsonRpcError(400, JsonRpc.ErrorCode.ParseError, "the body could not be read")
        if (Buffer.byteLength(text) > options.maxMessageBytes) {
          return jsonRpcError(413, JsonRpc.ErrorCode.InvalidRequest, `the body exceeds ${options.maxMessageBytes} bytes`)
        }
        const parsed = parseBody(text)
        if (HttpServerResponse.isServerResponse(parsed)) return parsed
        const { batch, messages } = parsed
        const initialize = messages.find((message) => isRequest(message) && message.method === McpSchema.Method.Initialize)
        const sessionId = request.headers["mcp-session-id"]

        if (initialize !== undefined) {
          if (messages.length > 1) {
            return jsonRpcError(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: initialize must be sent alone")
          }
          if (sessionId !== undefined && sessions.has(sessionId)) {
            return jsonRpcError(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: the session is already initialized")
          }
          if (sessions.size >= options.maxSessions) {
            return jsonRpcError(503, JsonRpc.ErrorCode.InternalError, "too many sessions; end one with DELETE first")
          }
          // The server runs handlers uninterruptibly and forked fibers inherit that: the
          // session's fibers must be interruptible, or closing it would wait for ever.
          const entry = yield* Effect.interruptible(openSession)
          return yield* answer(entry, messages, batch, { "mcp-session-id": entry.id })
        }

        const found = yield* sessionOf(request)
        if (HttpServerResponse.isServerResponse(found)) return found
        const entry = found
        if (messages.every((message) => !isRequest(message))) {
          for (const message of messages) entry.inbox.unsafeOffer(message)
          return HttpServerResponse.empty({ status: 202 })
        }
        return yield* answer(entry, messages, batch, {})
      })

    // The session a request names: 400 without one, 404 for one that ended or never was, and
    // 400 for a protocol revision header naming one the gateway does not speak.
    const sessionOf = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.sync((): HttpSession | HttpServerResponse.HttpServerResponse => {
        const sessionId = request.headers["mcp-session-id"]
        if (sessionId === undefined) {
          return jsonRpcError(400, JsonRpc.ErrorCode.InvalidRequest, "Bad Request: Mcp-Session-Id header is required")
        }
        const entry = sessions.get(sessionId)
        if (entry === undefined) return jsonRpcError(404, -32001, "Session not found")
        const version = request.headers["mcp-protocol-version"]
        if (version !== undefined && !(McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(version)) {
          return jsonRpcError(
            400,
            JsonRpc.ErrorCode.InvalidRequest,
            `Bad Request: unsupported protocol version ${version} (supported: ${McpSchema.SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`
          )
        }
        entry.lastActive = clock.unsafeCurrentTimeMillis()
        return entry
      })

    // --- GET and DELETE --------------------------------------------------------------------

    const get = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        if (!(request.headers["accept"] ?? "").includes("text/event-stream")) {
          return jsonRpcError(406, JsonRpc.ErrorCode.InvalidRequest, "Not Acceptable: the GET stream is text/event-stream")
        }
        const found = yield* sessionOf(request)
        if (HttpServerResponse.isServerResponse(found)) return found
        const entry = found
        const resume = /^([^:]+):(\d+)$/.exec(request.headers["last-event-id"] ?? "")
        const log = resume === null ? undefined : entry.logs.get(resume[1]!)
        if (log !== undefined) {
          return HttpServerResponse.stream(yield* readLog(entry, log, Number(resume![2]) + 1), {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache", connection: "keep-alive" }
          })
        }
        if (entry.standing !== undefined) {
          return jsonRpcError(409, JsonRpc.ErrorCode.InvalidRequest, "Conflict: this session already has a GET stream")
        }
        const queue = yield* Queue.unbounded<string>()
        entry.standing = queue
        const body = Stream.fromQueue(queue).pipe(
          Stream.takeWhile((text) => text !== END),
          // A comment first, so the client sees the stream open at once, and one now and
          // then, so idle connections are not dropped on the way.
          (events) => Stream.concat(Stream.make(": stream open\n\n"), events),
          Stream.merge(Stream.schedule(Stream.repeatValue(": keep-alive\n\n"), Schedule.spaced(KEEP_ALIVE)), {
            haltStrategy: "left"
          }),
          Stream.map((text) => encoder.encode(text)),
          Stream.ensuring(Effect.sync(() => {
            entry.lastActive = clock.unsafeCurrentTimeMillis()
            if (entry.standing === queue) entry.standing = undefined
          }))
        )
        return HttpServerResponse.stream(body, {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-cache", connection: "keep-alive" }
        })
      })

    const del = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const found = yield* sessionOf(request)
        if (HttpServerResponse.isServerResponse(found)) return found
        yield* closeSession(found)
        return HttpServerResponse.empty({ status: 200 })
      })

    // --- the endpoint ----------------------------------------------------------------------

    const guard = (
      request: HttpServerRequest.HttpServerRequest,
      preflight: boolean
    ): HttpServerResponse.HttpServerResponse | undefined => {
      const origin = request.headers["origin"]
      if (origin !== undefined) {
        const normalized = origin.toLowerCase().replace(/\/$/, "")
        const host = hostnameOf(origin)
        if (!allowedOrigins.has(normalized) && (host === undefined || !LOOPBACK.has(host))) {
          return jsonRpcError(403, JsonRpc.ErrorCode.InvalidRequest, `Forbidden: Origin ${origin} is not allowed`)
        }
      }
      if (checkHost) {
        const host = hostnameOf(request.headers["host"] ?? "")
        if (host === undefined || (!LOOPBACK.has(host) && !allowedHosts.has(host))) {
          return jsonRpcError(403, JsonRpc.ErrorCode.InvalidRequest, `Forbidden: Host ${request.headers["host"]} is not allowed`)
        }
      }
      if (token !== undefined && !preflight) {
        const authorization = request.headers["authorization"] ?? ""
        const match = /^Bearer\s+(.+)$/i.exec(authorization.trim())
        if (match === null || !sameSecret(match[1]!, token)) {
          return jsonRpcError(401, JsonRpc.ErrorCode.InvalidRequest, "Unauthorized: a valid bearer token is required", {
            "www-authenticate": match === null ? `Bearer realm="mcp-fleet"` : `Bearer realm="mcp-fleet", error="invalid_token"`
          })
        }
      }
      return undefined
    }

    const route = (request: HttpServerRequest.HttpServerRequest) => {
      switch (request.method) {
        case "POST":
          return post(request)
        case "GET":
          return get(request)
        case "DELETE":
          return del(request)
        default:
          return Effect.succeed(HttpServerResponse.text("Method Not Allowed", { status: 405, headers: { allow: "GET, POST, DELETE" } }))
      }
    }

    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      // A browser's preflight carries no credentials: only its Origin is checked.
      const preflight = request.method === "OPTIONS"
      const refused = guard(request, preflight)
      if (refused !== undefined) return refused
      const path = request.url.split("?")[0]
      if (path !== options.path) return HttpServerResponse.text("Not Found", { status: 404 })
      // An Origin that passed the guard may read the answers (CORS), the session id included.
      const origin = request.headers["origin"]
      const cors: Record<string, string> = origin === undefined ? {} : {
        "access-control-allow-origin": origin,
        "access-control-expose-headers": "mcp-session-id",
        vary: "Origin"
      }
      if (preflight) {
        return HttpServerResponse.empty({
          status: 204,
          headers: {
            ...cors,
            "access-control-allow-methods": "GET, POST, DELETE",
            "access-control-allow-headers": "authorization, content-type, accept, last-event-id, mcp-protocol-version, mcp-session-id",
            "access-control-max-age": "600"
          }
        })
      }
      const response = yield* route(request)
      return origin === undefined ? response : HttpServerResponse.setHeaders(response, cors)
    })

    // A session whose client went away without DELETE ends after it has been idle (no
    // request, no open stream) for the idle timeout.
    const idleMs = Duration.toMillis(options.sessionIdleTimeout)
    yield* Effect.suspend(() => {
      const now = clock.unsafeCurrentTimeMillis()
      const idle = [...sessions.values()].filter((entry) =>
        entry.standing === undefined && entry.readers.size === 0 && entry.sinks.size === 0 &&
        now - entry.lastActive >= idleMs
      )
      return Effect.forEach(idle, closeSession, { discard: true })
    }).pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(Math.min(Math.max(idleMs / 4, 10), 60_000)))),
      Effect.interruptible,
      Effect.forkScoped
    )

    const node = http.createServer()
    const server = yield* NodeHttpServer.make(() => node, { host: options.host, port: options.port }).pipe(
      Effect.mapError((error) =>
        McpError.make(
          undefined,
          new McpError.TransportReason({ message: `could not listen on ${options.host}:${options.port}: ${String(error.cause ?? error)}` }),
          error
        )
      )
    )
    // Open SSE streams would keep the server from closing: sessions end first, then sockets.
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        Effect.forEach([...sessions.values()], closeSession, { discard: true }),
        Effect.sync(() => node.closeAllConnections())
      )
    )
    yield* server.serve(app)
    const address = server.address as HttpServer.TcpAddress
    const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname
    return `http://${host}:${address.port}${options.path}`
  })
