/**
 * The Streamable HTTP transport (MCP 2025-03-26 and later): every message is a POST, and
 * the server answers a request with one JSON body or an event stream that may carry
 * progress, log messages and requests before the response. A standing GET stream carries
 * what the server sends unasked. Lost streams are resumed with `Last-Event-ID`; an expired
 * session is replaced by a new one without the caller noticing. Servers that only speak
 * the 2024-11-05 HTTP+SSE transport are detected and spoken to with {@link LegacySse}.
 *
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Http from "./internal/transport/http.js"
import { revealAll } from "./internal/reveal.js"
import { type Event as SseEvent, SseDecoder } from "./internal/transport/sseDecoder.js"
import * as JsonRpc from "./JsonRpc.js"
import * as McpError from "./McpError.js"
import { type Incoming, RequestFailed, Transport, type TransportService, Inbox } from "./Transport.js"
import * as LegacySse from "./LegacySse.js"

/**
 * How to reach an HTTP server.
 *
 * @since 0.1.0
 */
export interface Options {
  /** The server's name, used in errors and logs. */
  readonly name: string
  /** The MCP endpoint. */
  readonly url: string
  /** Headers sent with every request (authorization, API keys); secrets may be Redacted. */
  readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  /**
   * `streamable`: Streamable HTTP only. `sse`: the 2024-11-05 HTTP+SSE transport only.
   * `auto` (the default): Streamable HTTP, falling back to HTTP+SSE when the server refuses
   * initialize with 400, 404 or 405 (any 4xx but 401 and 403 when asking for 2024-11-05).
   */
  readonly mode?: "auto" | "streamable" | "sse" | undefined
  /** The largest body or event accepted. Default: 16 MiB. */
  readonly maxMessageBytes?: number | undefined
  /**
   * How long the server may take to accept a message that expects no answer, open a
   * stream, or end the session. A request's own answer is bounded by the request's
   * timeout instead. Default: 30 seconds.
   */
  readonly httpTimeout?: Duration.DurationInput | undefined
  /** Reconnecting a lost stream: delays double from `initialDelay` up to `maxDelay`, unless the server's `retry` says otherwise; `maxAttempts` in a row without an event, then give up. */
  readonly reconnect?: {
    readonly initialDelay?: Duration.DurationInput | undefined
    readonly maxDelay?: Duration.DurationInput | undefined
    readonly maxAttempts?: number | undefined
  } | undefined
  /** Which redirects to follow: `same-origin` (the default), `any` or `none`. */
  readonly redirects?: Http.Redirects | undefined
}

const ACCEPT = "application/json, text/event-stream"

const LIST_CHANGED = [
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed"
]

// What a response stream is read for: the answer to one request, or (the GET stream)
// whatever the server sends unasked.
interface Reading {
  readonly method: string
  readonly awaiting: JsonRpc.RequestId | undefined
}

/**
 * Connects to the server, owned by the current Scope. Nothing is sent until the first
 * message (initialize), except in `sse` mode, which opens its event stream at once.
 *
 * @since 0.1.0
 */
export const make = (
  options: Options
): Effect.Effect<TransportService, McpError.McpError, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const server = options.name
    const url = options.url
    const mode = options.mode ?? "auto"
    const ctx: Http.Context = {
      server,
      client: yield* HttpClient.HttpClient,
      headers: revealAll(options.headers),
      maxMessageBytes: options.maxMessageBytes ?? JsonRpc.DEFAULT_MAX_MESSAGE_BYTES,
      redirects: options.redirects ?? "same-origin"
    }
    const httpTimeout = options.httpTimeout ?? "30 seconds"
    const initialDelay = Duration.toMillis(options.reconnect?.initialDelay ?? "500 millis")
    const maxDelay = Duration.toMillis(options.reconnect?.maxDelay ?? "30 seconds")
    const maxAttempts = options.reconnect?.maxAttempts ?? 5

    const inbox = new Inbox(server)
    const deliverAll = (messages: ReadonlyArray<Incoming>) =>
      Effect.sync(() => {
        for (const message of messages) inbox.deliver(message)
      })
    const fibers = yield* FiberSet.make()
    const exchanges = new Map<JsonRpc.RequestId, Fiber.RuntimeFiber<void>>()
    const renewing = yield* Effect.makeSemaphore(1)
    let sessionId: string | undefined
    let protocolVersion: string | undefined
    let initialize: JsonRpc.Request | undefined
    let legacy: LegacySse.Session | undefined
    let renewal: { readonly id: string; readonly answer: Deferred.Deferred<JsonRpc.Message> } | undefined
    let renewals = 0
    let closing = false

    const closedError = (message: string) => McpError.make(server, new McpError.ClosedReason({ message }))
    const end = (error: McpError.McpError) => Effect.sync(() => inbox.end(error))

    // Everything the server sends passes here: the answer to a re-initialize is kept for
    // it, the negotiated revision is noted for the MCP-Protocol-Version header.
    const receive = (messages: ReadonlyArray<JsonRpc.Message>) =>
      Effect.suspend(() => {
        for (const message of messages) {
          if ("method" in message) continue
          if (renewal !== undefined && message.id === renewal.id) {
            Deferred.unsafeDone(renewal.answer, Exit.succeed(message))
            return deliverAll(messages.filter((other) => other !== message))
          }
          if (initialize !== undefined && message.id === initialize.id && "result" in message) {
            const version = message.result.protocolVersion
            if (typeof version === "string") protocolVersion = version
          }
        }
        return deliverAll(messages)
      })

    const headers = (extra: Record<string, string>): Record<string, string> => {
      const out = { ...ctx.headers, ...extra }
      if (sessionId !== undefined) out["mcp-session-id"] = sessionId
      if (protocolVersion !== undefined) out["mcp-protocol-version"] = protocolVersion
      return out
    }

    const post = (message: JsonRpc.Message, what: string) =>
      Http.execute(
        ctx,
        HttpClientRequest.post(url, { headers: headers({ accept: ACCEPT }) }).pipe(
          HttpClientRequest.bodyText(JSON.stringify(message), "application/json")
        ),
        what
      )

    const openGet = (what: string, lastEventId: string | undefined) =>
      Http.execute(
        ctx,
        HttpClientRequest.get(url, {
          headers: headers(lastEventId === undefined ? { accept: "text/event-stream" } : {
            accept: "text/event-stream",
            "last-event-id": lastEventId
          })
        }),
        what
      ).pipe(Effect.timeoutFail({ duration: httpTimeout, onTimeout: () => closedError(`${what} did not open within the timeout`) }))

    const delay = (attempt: number, retry: number | undefined) =>
      retry ?? Math.min(maxDelay, initialDelay * 2 ** (attempt - 1))

    // Reads one response stream to its end, and when it ends or breaks before what it was
    // read for, resumes it with GET and Last-Event-ID after the server's `retry` (else a
    // backoff), up to `maxAttempts` tries in a row that bring no event.
    const follow = (first: HttpClientResponse.HttpClientResponse, reading: Reading): Effect.Effect<void, McpError.McpError> =>
      Effect.gen(function*() {
        let response = first
        const decoder = new SseDecoder(ctx.maxMessageBytes)
        let answered = false
        let attempt = 0
        const onEvents = (events: ReadonlyArray<SseEvent>) =>
          Effect.forEach(events, (event) => {
            attempt = 0
            if (event.event !== "message" || event.data.trim() === "") return Effect.void
            return Effect.flatMap(Http.parseMessages(ctx, event.data, "an event"), (messages) => {
              if (reading.awaiting !== undefined && !answered) {
                answered = messages.some((message) => !("method" in message) && message.id === reading.awaiting)
              }
              return receive(messages)
            })
          }, { discard: true })
        while (true) {
          const ended = yield* Effect.either(Http.readEvents(ctx, response, reading.method, decoder, onEvents))
          const lastEventId = decoder.lastEventId
          if (answered || closing) return
          // Resuming would bring the same oversize event again.
          if (ended._tag === "Left" && ended.left.reason._tag === "Limit") return yield* Effect.fail(ended.left)
          const why = ended._tag === "Left" ? `: ${ended.left.message}` : ""
          if (reading.awaiting !== undefined && lastEventId === undefined) {
            return yield* Effect.fail(closedError(
              `the stream answering ${reading.method} ended before the answer, with no event id to resume from${why}`
            ))
          }
          attempt++
          if (attempt > maxAttempts) {
            return yield* Effect.fail(closedError(
              `lost the stream ${reading.awaiting === undefined ? "of server messages" : `answering ${reading.method}`} and could not resume it in ${maxAttempts} attempts${why}`
            ))
          }
          yield* Effect.logDebug(`server '${server}': resuming the stream of ${reading.method}${why}`)
          yield* Effect.sleep(delay(attempt, decoder.retry))
          const resumed = yield* Effect.either(openGet(`the resumed stream of ${reading.method}`, lastEventId))
          if (resumed._tag === "Left") {
            if (unreachable(resumed.left)) return yield* Effect.fail(resumed.left)
            continue
          }
          const status = resumed.right.status
          if (status === 404 && sessionId !== undefined && reading.awaiting === undefined) {
            yield* Http.discard(resumed.right)
            yield* renew(sessionId)
            continue
          }
          if (!Http.isOk(status) || Http.mediaType(resumed.right) !== "text/event-stream") {
            const error = yield* Http.statusError(ctx, resumed.right, `the resumed stream of ${reading.method}`)
            // The server cannot resume (405) or forgot the session (404): another try will not help.
            if (status >= 400 && status < 500) return yield* Effect.fail(error)
            continue
          }
          response = resumed.right
        }
      })

    // Reads the answer to a POST: a JSON body, an event stream, or nothing (202).
    const readAnswer = (response: HttpClientResponse.HttpClientResponse, reading: Reading): Effect.Effect<void, McpError.McpError> => {
      const type = Http.mediaType(response)
      if (type === "text/event-stream") return follow(response, reading)
      if (type === "application/json") {
        return Http.readText(ctx, response, `the answer to ${reading.method}`).pipe(
          Effect.flatMap((text) => text.trim() === "" ? Effect.succeed([]) : Http.parseMessages(ctx, text, "a body")),
          Effect.flatMap(receive)
        )
      }
      if (response.status === 202 || response.headers["content-length"] === "0" || type === "") return Http.discard(response)
      return Effect.zipRight(
        Http.discard(response),
        Effect.fail(McpError.make(server, new McpError.ValidationReason({
          message: `answered with content type '${type}', neither JSON nor an event stream`,
          method: reading.method
        })))
      )
    }

    // A new session after the old one expired (404): initialize again as first sent,
    // then initialized. Concurrent callers that saw the same expired session wait for
    // one renewal.
    const renew = (expired: string): Effect.Effect<void, McpError.McpError> =>
      renewing.withPermits(1)(Effect.gen(function*() {
        if (sessionId !== expired) return
        if (initialize === undefined) return yield* Effect.fail(closedError("the session expired before it was initialized"))
        yield* Effect.logInfo(`server '${server}': session expired (HTTP 404); starting a new one`).pipe(
          Effect.annotateLogs({ server })
        )
        sessionId = undefined
        const id = `mcp-fleet-reinitialize-${++renewals}`
        const answer = yield* Deferred.make<JsonRpc.Message>()
        renewal = { id, answer }
        const response = yield* post({ ...initialize, id }, "initialize")
        if (!Http.isOk(response.status)) return yield* Effect.fail(yield* Http.statusError(ctx, response, "initialize"))
        sessionId = response.headers["mcp-session-id"]
        yield* readAnswer(response, { method: "initialize", awaiting: id })
        const result = yield* Deferred.await(answer).pipe(
          Effect.timeoutFail({ duration: httpTimeout, onTimeout: () => closedError("the new session's initialize got no answer") })
        )
        if (!("result" in result)) {
          return yield* Effect.fail(McpError.make(
            server,
            new McpError.ProtocolReason({ method: "initialize", ...(result as JsonRpc.Failure).error })
          ))
        }
        const version = result.result.protocolVersion
        if (typeof version === "string") protocolVersion = version
        // Not through `deliver`, which waits for this renewal to finish.
        const initialized = yield* post({ jsonrpc: "2.0", method: "notifications/initialized" }, "notifications/initialized")
        if (!Http.isOk(initialized.status)) {
          return yield* Effect.fail(yield* Http.statusError(ctx, initialized, "notifications/initialized"))
        }
        yield* Http.discard(initialized)
        // A new session may be a restarted server with other tools: have the lists read again.
        yield* deliverAll(LIST_CHANGED.map((method) => ({ jsonrpc: "2.0" as const, method })))
      }).pipe(Effect.ensuring(Effect.sync(() => renewal = undefined))))

    // POSTs a message; after a 404 on an expired session, once more on a new session.
    const postInSession = (
      message: JsonRpc.Message,
      what: string
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, McpError.McpError> =>
      Effect.gen(function*() {
        // Messages wait while a new session is being made, rather than go out without one.
        if (renewal !== undefined) yield* renewing.withPermits(1)(Effect.void)
        const sentIn = sessionId
        const response = yield* post(message, what)
        if (response.status !== 404 || sentIn === undefined) return response
        yield* Http.discard(response)
        yield* renew(sentIn)
        return yield* post(message, what)
      })

    // Switches to the 2024-11-05 transport on the same URL.
    const fallBack = (status: number) =>
      Effect.gen(function*() {
        yield* Effect.logInfo(
          `server '${server}' refused Streamable HTTP (HTTP ${status}); trying the 2024-11-05 HTTP+SSE transport`
        ).pipe(Effect.annotateLogs({ server }))
        legacy = yield* openLegacy
      })
    // The legacy event stream belongs to this transport's Scope, whichever fiber opens it.
    const scope = yield* Effect.scope
    const openLegacy = LegacySse.open(ctx, url, { receive, onEnd: end, timeout: httpTimeout }).pipe(
      Effect.provideService(Scope.Scope, scope)
    )

    const canFallBack = (request: JsonRpc.Request, status: number) =>
      mode === "auto" && request.method === "initialize" &&
      (status === 400 || status === 404 || status === 405 ||
        (status >= 400 && status < 500 && status !== 401 && status !== 403 &&
          (request.params as { protocolVersion?: unknown } | undefined)?.protocolVersion === "2024-11-05"))

    // One request's whole exchange, run in its own fiber so that `send` returns at once
    // and the request's own timeout (in Peer) governs how long its answer may take.
    const exchange = (request: JsonRpc.Request) =>
      Effect.gen(function*() {
        if (legacy !== undefined) return yield* legacy.send(request)
        const response = yield* postInSession(request, request.method)
        if (canFallBack(request, response.status)) {
          yield* Http.discard(response)
          yield* fallBack(response.status)
          return yield* legacy!.send(request)
        }
        if (!Http.isOk(response.status)) return yield* Effect.fail(yield* Http.statusError(ctx, response, request.method))
        if (request.method === "initialize") sessionId = response.headers["mcp-session-id"]
        yield* readAnswer(response, { method: request.method, awaiting: request.id })
      })

    // A message that expects no answer: sent before `send` returns.
    const deliver = (message: JsonRpc.Message, what: string): Effect.Effect<void, McpError.McpError> =>
      Effect.gen(function*() {
        if (legacy !== undefined) return yield* legacy.send(message)
        const response = yield* postInSession(message, what).pipe(
          Effect.timeoutFail({ duration: httpTimeout, onTimeout: () => closedError(`the server did not accept ${what} within the timeout`) })
        )
        if (!Http.isOk(response.status)) return yield* Effect.fail(yield* Http.statusError(ctx, response, what))
        // Usually 202 and nothing to read; a body, if any, is read in the background.
        if (response.status === 202) return yield* Http.discard(response)
        yield* FiberSet.run(fibers, Effect.catchAll(readAnswer(response, { method: what, awaiting: undefined }), logLost(what)))
      })

    const logLost = (what: string) => (error: McpError.McpError) =>
      Effect.logWarning(`server '${server}': reading what came back for ${what} failed: ${error.message}`).pipe(
        Effect.annotateLogs({ server })
      )

    // The standing GET stream for what the server sends unasked. 405 means the server has
    // none; another 4xx (a server that only half implements the spec) is taken the same way,
    // with a warning, since its requests and notifications can still come on answers.
    // `opened` completes once the server has answered the GET, whatever it said.
    const listen = (opened: Deferred.Deferred<void>, renewed = false): Effect.Effect<void> => Effect.gen(function*() {
      const what = "the server message stream (GET)"
      const sentIn = sessionId
      const response = yield* openGet(what, undefined)
      if (response.status === 404 && sentIn !== undefined && !renewed) {
        yield* Http.discard(response)
        yield* renew(sentIn)
        return yield* listen(opened, true)
      }
      yield* Deferred.succeed(opened, undefined)
      if (response.status >= 400 && response.status < 500) {
        if (response.status !== 405) {
          yield* Effect.logWarning(
            `server '${server}' refused ${what} with HTTP ${response.status}; it can only send messages on answers`
          ).pipe(Effect.annotateLogs({ server }))
        }
        return yield* Http.discard(response)
      }
      if (!Http.isOk(response.status)) return yield* Effect.fail(yield* Http.statusError(ctx, response, what))
      yield* follow(response, { method: what, awaiting: undefined })
    }).pipe(
      Effect.catchAll((error) => closing ? Effect.void : end(error)),
      Effect.ensuring(Deferred.succeed(opened, undefined))
    )

    // The server could not be reached at all (refused, reset, DNS): it is gone, and this
    // connection with it, so that the fleet reconnects under its restart policy. An error
    // status or a lost stream fails only the request concerned.
    const unreachable = (error: McpError.McpError) => error.reason._tag === "Transport"
    const endIfUnreachable = (effect: Effect.Effect<void, McpError.McpError>) =>
      Effect.tapError(effect, (error) => unreachable(error) ? end(error) : Effect.void)

    const send = (message: JsonRpc.Message): Effect.Effect<void, McpError.McpError> =>
      Effect.suspend(() => {
        if (closing) return Effect.fail(closedError("the connection is closed"))
        if (!("method" in message)) return endIfUnreachable(deliver(message, "a response"))
        if (!JsonRpc.isRequest(message)) {
          return Effect.zipRight(endIfUnreachable(deliver(message, message.method)), afterNotification(message))
        }
        if (message.method === "initialize") initialize = message
        const id = message.id
        return FiberSet.run(
          fibers,
          exchange(message).pipe(
            Effect.catchAll((error) =>
              Effect.zipRight(deliverAll([new RequestFailed(id, error)]), unreachable(error) ? end(error) : Effect.void)
            ),
            Effect.ensuring(Effect.sync(() => exchanges.delete(id)))
          )
        ).pipe(Effect.map((fiber) => void exchanges.set(id, fiber)))
      })

    // After initialized, open the GET stream, and return once the server has answered it:
    // a server may send requests there as soon as the connection is ready (elicitation
    // during the first tool call), and drops them when no stream is open. After a
    // cancellation, stop reading the cancelled request's answer.
    const afterNotification = (message: JsonRpc.Notification) => {
      if (message.method === "notifications/initialized" && legacy === undefined) {
        return Effect.flatMap(Deferred.make<void>(), (opened) =>
          Effect.zipRight(FiberSet.run(fibers, listen(opened)), Deferred.await(opened)))
      }
      if (message.method === "notifications/cancelled") {
        const fiber = exchanges.get(message.params?.requestId as JsonRpc.RequestId)
        if (fiber !== undefined) return Fiber.interruptFork(fiber)
      }
      return Effect.void
    }

    if (mode === "sse") legacy = yield* openLegacy

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        closing = true
        yield* FiberSet.clear(fibers)
        if (sessionId !== undefined && legacy === undefined) {
          // Ends the session on the server; 405 means the server does not allow it.
          yield* Http.execute(ctx, HttpClientRequest.del(url, { headers: headers({}) }), "DELETE").pipe(
            Effect.flatMap(Http.discard),
            Effect.timeout(httpTimeout),
            Effect.ignore
          )
        }
        inbox.end(closedError("the connection was closed"))
      })
    )

    return {
      server,
      get kind() {
        return legacy === undefined ? "http" : "sse"
      },
      send,
      listen: inbox.listen,
      info: () => ({
        url: Http.safeUrl(url),
        ...(legacy === undefined ? {} : { endpoint: Http.safeUrl(legacy.endpoint) }),
        ...(sessionId === undefined ? {} : { sessionId })
      })
    } satisfies TransportService
  })

/**
 * A layer providing a Streamable HTTP Transport.
 *
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<Transport, McpError.McpError, HttpClient.HttpClient> =>
  Layer.scoped(Transport, make(options))
