/**
 * One JSON-RPC session over a Transport: a map from request id to the requests in flight,
 * timeouts that progress can reset, cancellation, handlers for the requests the other side
 * sends, and a stream of its notifications.
 *
 * The per-call path is synchronous where it can be: the transport hands each message to
 * the Peer from its I/O callback, and an answer resumes its waiting caller right there. No
 * fiber, Scope, timer or Queue is made per request; one timer fiber serves every deadline
 * (started again, not woken by a race, when an earlier deadline comes), and only what must
 * run effects (handlers for the other side's requests, progress callbacks, warnings,
 * cancellations sent) becomes a fiber, in a FiberSet of the session's Scope. On a transport
 * with `sendNow` (stdio) a request is one `Effect.async` that opens, sends and waits, under
 * one frame that catches its interruption (cheaper than an async canceller's onExit); measure
 * it with `npm run bench:micro`.
 *
 * It knows no MCP method but `ping` and the cancellation and progress notifications. It tells
 * its owner synchronously when it ends (`onClosed`), before any waiting request resumes, and
 * hands each notification to its owner (`onNotification`) before a later answer resumes its
 * request, so a call's log messages all arrive before its result; a request's answer waits for
 * its progress callbacks still running. A request refused because the
 * session had already ended, or that the transport refused, fails with a Closed error marked
 * `unsent`: only such a request may be sent again elsewhere.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type Inbound, makeInbound } from "./internal/peer/inbound.js"
import { Entry, makeTimer, notSent, Pending, resumeWith, withMethod } from "./internal/peer/pending.js"
import { requestTelemetry, spanned, targetOf } from "./internal/peer/telemetry.js"
import { builtIn } from "./internal/traced.js"
import * as JsonRpc from "./JsonRpc.js"
import * as McpError from "./McpError.js"
import { BrokenAnswer, type Incoming, RequestFailed, Transport } from "./Transport.js"

/**
 * A progress notification for a request in flight.
 *
 * @since 0.1.0
 */
export interface Progress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/**
 * Options of one request.
 *
 * @since 0.1.0
 */
export interface RequestOptions {
  /** Fail when no answer (or, with `resetTimeoutOnProgress`, no progress) came for this long. Default: 60 s. */
  readonly timeout?: Duration.DurationInput | undefined
  /** Fail when the request took this long in all, progress or not. Default: no maximum. */
  readonly maxTotalTimeout?: Duration.DurationInput | undefined
  /** Let each progress notification restart the `timeout`. Asks the server for progress. Default: false. */
  readonly resetTimeoutOnProgress?: boolean | undefined
  /**
   * Called with each progress notification. Asks the server for progress. The request's
   * answer is delivered only once the callbacks for progress sent before it have ended.
   */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
  /** Whether interrupting (or timing out) sends notifications/cancelled. Default: true. */
  readonly cancellable?: boolean | undefined
  /**
   * Told the request's id as it is sent: notifications about a long-lived request name it
   * (`subscriptions/listen`, 2026-07-28).
   */
  readonly onId?: ((id: JsonRpc.RequestId) => void) | undefined
  /**
   * What the result becomes before the caller resumes (a check or decode of it), applied as
   * the answer is read: cheaper than a step after the request (`Effect.flatMap`) on a path
   * taken per call. Not applied to failures; a mapping that throws fails the request with a
   * defect.
   */
  readonly onAnswer?:
    | ((result: Record<string, unknown>) => Effect.Effect<Record<string, unknown>, McpError.McpError>)
    | undefined
}

/**
 * The JSON-RPC error a request handler answers with.
 *
 * @since 0.1.0
 */
export class HandlerError extends Schema.TaggedError<HandlerError>()("HandlerError", {
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
}) {}

/**
 * Answers one kind of request from the other side. `related` is the id of our request the
 * other side sent it for, when the transport knows it (`Transport.Receiver`: a Streamable
 * HTTP server's request on the stream of the POST that carried ours); undefined otherwise.
 *
 * @since 0.1.0
 */
export type Handler = (
  request: JsonRpc.Request,
  related?: JsonRpc.RequestId
) => Effect.Effect<Record<string, unknown>, HandlerError>

/**
 * Options of a Peer.
 *
 * @since 0.1.0
 */
export interface Options {
  /** Handlers by method. `ping` is answered unless overridden; other methods get -32601. */
  readonly handlers?: Readonly<Record<string, Handler>> | undefined
  /** The default `timeout` of requests. Default: 60 s. */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /**
   * Called once, synchronously, when the session ends, before any request waiting on it
   * resumes: for an owner that must stop handing it work at that very moment.
   */
  readonly onClosed?: ((error: McpError.McpError) => void) | undefined
  /**
   * Called synchronously with each notification as it arrives, before the subscribers get
   * it and before an answer read after it resumes its request: for an owner that must tell
   * a request what came for it first.
   */
  readonly onNotification?: ((notification: JsonRpc.Notification) => void) | undefined
  /**
   * More attributes for the spans of the requests it sends (`mcp.protocol.version`,
   * `mcp.session.id`), read as each span starts. A session made under a tracer other than
   * Effect's built-in one makes a CLIENT span per request it sends (when that tracer is
   * still the one in context), and puts its trace context in `params._meta`.
   */
  readonly spanAttributes?: (() => Record<string, unknown>) | undefined
}

/**
 * A JSON-RPC session.
 *
 * @since 0.1.0
 */
export interface Peer {
  /** The name of the other side, as its transport reports it. */
  readonly server: string
  /**
   * Sends a request and waits for its result. A request refused because the session had
   * already ended fails with a Closed error marked `unsent`: the other side never saw it.
   */
  readonly request: (
    method: string,
    params?: Record<string, unknown> | undefined,
    options?: RequestOptions | undefined
  ) => Effect.Effect<Record<string, unknown>, McpError.McpError>
  /** Sends a notification. */
  readonly notify: (
    method: string,
    params?: Record<string, unknown> | undefined
  ) => Effect.Effect<void, McpError.McpError>
  /** Subscribes to the notifications the other side sends; nothing is missed after this returns. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<JsonRpc.Notification>, never, Scope.Scope>
  /** The notifications the other side sends, from when the stream starts. */
  readonly notifications: Stream.Stream<JsonRpc.Notification>
  /** Waits until the session ends and returns why. */
  readonly closed: Effect.Effect<McpError.McpError>
  /** How many requests are waiting for an answer. */
  readonly inFlight: () => number
}

const DEFAULT_TIMEOUT = Duration.seconds(60)
const CANCELLED = "The request was cancelled by the client"

const toMillis = (input: Duration.DurationInput | undefined, fallback: number): number =>
  input === undefined ? fallback : Duration.toMillis(Duration.decode(input))

/**
 * Starts a session on the Transport in context. It ends with the Scope.
 *
 * @since 0.1.0
 */
export const make = (options: Options = {}): Effect.Effect<Peer, never, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const transport = yield* Transport
    const server = transport.server
    const clock = yield* Effect.clock
    const defaultTimeout = toMillis(options.requestTimeout, Duration.toMillis(DEFAULT_TIMEOUT))
    // Runs what the I/O callbacks cannot do synchronously, as fibers ended with the Scope.
    const run = yield* FiberSet.makeRuntime<never, unknown, unknown>()
    const telemetry = requestTelemetry(server, () => clock.unsafeCurrentTimeMillis())
    const pending = new Pending(telemetry.settled)
    const inbound = makeInbound({ handlers: options.handlers, run, send: transport.send })
    const notifications = yield* PubSub.unbounded<JsonRpc.Notification>()
    const closedWith = yield* Deferred.make<McpError.McpError>()
    let closeError: McpError.McpError | undefined

    const close = (error: McpError.McpError): void => {
      if (closeError) return
      closeError = error
      options.onClosed?.(error)
      pending.failAll(error)
      Deferred.unsafeDone(closedWith, Exit.succeed(error))
    }
    // Sent in a fiber of its own: a transport may take long to deliver it (an HTTP server
    // that accepts nothing), and neither a caller giving up nor the timer waits for that.
    const cancel = (id: JsonRpc.RequestId, reason: string): void => {
      pending.abandon(id)
      run(Effect.ignore(
        transport.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } })
      ))
    }

    const onMessage = makeDispatch({
      server,
      pending,
      inbound,
      notifications,
      now: () => clock.unsafeCurrentTimeMillis(),
      told: options.onNotification
    })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => close(McpError.closed(server, { message: "the connection was closed" })))
    )
    transport.listen({
      message: (message, related) => {
        const effect = onMessage(message, related)
        if (effect !== undefined) run(effect)
      },
      closed: close
    })

    const timer = makeTimer({
      server,
      pending,
      now: () => clock.unsafeCurrentTimeMillis(),
      idleSleep: defaultTimeout,
      cancel,
      run
    })
    timer.start()

    let nextId = 0
    // A request in flight from now: its entry kept, its deadline told to the timer.
    const open = (method: string, target: string | undefined, requestOptions: RequestOptions): Entry => {
      const id = nextId++
      const now = clock.unsafeCurrentTimeMillis()
      const entry = new Entry(
        id,
        method,
        target,
        now,
        toMillis(requestOptions.timeout, defaultTimeout),
        toMillis(requestOptions.maxTotalTimeout, Infinity),
        requestOptions.resetTimeoutOnProgress === true,
        requestOptions.cancellable ?? method !== "initialize",
        requestOptions.onProgress,
        requestOptions.onAnswer
      )
      pending.entries.set(id, entry)
      telemetry.opened()
      timer.schedule(entry)
      requestOptions.onId?.(id)
      return entry
    }
    const abandoned = telemetry.abandoned
    const sent = makeRequest({ transport, pending, cancel, open, closed: () => closeError, abandoned })
    // Spans (and the trace context in `_meta`) for a session made under a tracer of the app's:
    // decided once, as a check per request costs a tenth of the per-call path.
    const request = (yield* Effect.tracer) === builtIn ? sent : spanned(sent, { transport, clock, ...options })

    const notify: Peer["notify"] = (method, params) =>
      Effect.suspend(() =>
        closeError
          ? Effect.fail(closeError)
          : transport.send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) })
      )

    return {
      server,
      request,
      notify,
      subscribe: PubSub.subscribe(notifications),
      notifications: Stream.fromPubSub(notifications),
      closed: Deferred.await(closedWith),
      inFlight: () => pending.entries.size
    } satisfies Peer
  })

// The request's message, asking for progress (with its id as the token) when it wants it.
const messageOf = (entry: Entry, params: Record<string, unknown> | undefined): JsonRpc.Request => {
  const { id, method } = entry
  if (entry.reset || entry.onProgress !== undefined) {
    const meta = JsonRpc.withField(params?._meta, "progressToken", id)
    return { jsonrpc: "2.0", id, method, params: JsonRpc.withField(params, "_meta", meta) }
  }
  return params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }
}

// Sends requests and waits for their answers.
const makeRequest = (options: {
  readonly transport: Transport
  readonly pending: Pending
  readonly cancel: (id: JsonRpc.RequestId, reason: string) => void
  readonly open: (method: string, target: string | undefined, requestOptions: RequestOptions) => Entry
  readonly closed: () => McpError.McpError | undefined
  readonly abandoned: (entry: Entry, errorType: string) => void
}): Peer["request"] => {
  const { abandoned, cancel, closed, open, pending, transport } = options
  // A request given up on before its answer is forgotten, and cancelled unless it may not be.
  const forget = (entry: Entry) =>
    Effect.sync(() => {
      if (!pending.entries.delete(entry.id)) return
      abandoned(entry, "cancelled")
      if (entry.cancellable) cancel(entry.id, CANCELLED)
    })
  const sendNow = transport.sendNow
  if (sendNow !== undefined) {
    // Where the transport can send at once, one Effect.async is the whole request: it opens,
    // sends and waits as the wait begins, and only an interruption runs more (the frame
    // that catches it costs less than a canceller, which wraps the wait in an onExit).
    return (method, params, requestOptions = {}) =>
      Effect.uninterruptibleMask((restore) => {
        const error = closed()
        if (error !== undefined) return Effect.fail(notSent(error, method))
        let entry: Entry | undefined
        const wait = Effect.async<Record<string, unknown>, McpError.McpError>((resume) => {
          entry = open(method, targetOf(method, params), requestOptions)
          const refused = sendNow(messageOf(entry, params))
          if (refused === undefined) return resumeWith(entry, resume)
          pending.entries.delete(entry.id)
          abandoned(entry, "closed")
          entry = undefined
          resume(Effect.fail(notSent(refused, method)))
        })
        return Effect.catchAllCause(restore(wait), (cause) =>
          entry !== undefined && Cause.isInterruptedOnly(cause)
            ? Effect.zipRight(forget(entry), Effect.failCause(cause))
            : Effect.failCause(cause))
      })
  }
  // One exit handler for the send and the wait (what onExit does, minus its work on
  // success): a request that did not get its answer is forgotten, and cancelled when the
  // caller gave up on it (the timer cancels what timed out). A failure that finds the entry
  // still pending is the send's own (every answer takes the entry out first); a Closed one
  // means the connection was gone, so the message never left.
  return (method, params, requestOptions = {}) =>
    Effect.uninterruptibleMask((restore) => {
      const error = closed()
      if (error !== undefined) return Effect.fail(notSent(error, method))
      const entry = open(method, targetOf(method, params), requestOptions)
      const wait = Effect.async<Record<string, unknown>, McpError.McpError>((resume) => resumeWith(entry, resume))
      return Effect.matchCauseEffect(restore(Effect.zipRight(transport.send(messageOf(entry, params)), wait)), {
        onSuccess: Effect.succeed,
        onFailure: (cause) => {
          if (Cause.isInterrupted(cause)) return Effect.zipRight(forget(entry), Effect.failCause(cause))
          if (!pending.entries.delete(entry.id)) return Effect.failCause(cause)
          abandoned(entry, cause._tag === "Fail" ? cause.error.reason._tag.toLowerCase() : "_OTHER")
          return cause._tag === "Fail" && cause.error.reason._tag === "Closed"
            ? Effect.fail(notSent(cause.error, entry.method))
            : Effect.failCause(cause)
        }
      })
    })
}

const brokenAnswerError = (server: string, method: string, problem: JsonRpc.BadLine) =>
  McpError.protocol(server, {
    method,
    code: JsonRpc.ErrorCode.InternalError,
    message: `its answer is ${problem.reason}: ${problem.excerpt}`
  })

// Handles one message from the transport: responses and progress synchronously; what
// must run effects is returned.
const makeDispatch = (options: {
  readonly server: string
  readonly pending: Pending
  readonly inbound: Inbound
  readonly notifications: PubSub.PubSub<JsonRpc.Notification>
  readonly now: () => number
  readonly told: ((notification: JsonRpc.Notification) => void) | undefined
}) => {
  const { inbound, notifications, pending, server } = options

  // One function for every answer, its message passed along: no closure per answer.
  const answerOf = (entry: Entry, message: JsonRpc.Success | JsonRpc.Failure) =>
    "result" in message
      ? Exit.succeed(message.result)
      : Exit.fail(McpError.protocol(server, { method: entry.method, ...message.error }))

  const onResponse = (message: JsonRpc.Success | JsonRpc.Failure): Effect.Effect<void> | undefined => {
    const id = message.id
    const settled = id !== null && pending.settle(id, answerOf, message)
    if (settled || (id !== null && pending.wasAbandoned(id))) return undefined
    const what = "error" in message ? `an error (${message.error.code}: ${message.error.message})` : "a response"
    return Effect.logWarning(`server '${server}' sent ${what} for unknown request id ${JSON.stringify(id)}`).pipe(
      Effect.annotateLogs({ server })
    )
  }

  const onProgress = (params: Record<string, unknown> | undefined): Effect.Effect<void> | undefined => {
    const token = params?.progressToken
    const entry = typeof token === "number" || typeof token === "string" ? pending.entries.get(token) : undefined
    if (entry === undefined) return undefined
    entry.lastActivity = options.now()
    if (entry.onProgress === undefined || typeof params!.progress !== "number") return undefined
    const progress = params as unknown as Progress
    return pending.callback(
      entry,
      entry.onProgress({ progress: progress.progress, total: progress.total, message: progress.message }).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("progress callback failed", cause))
      )
    )
  }

  const onNotification = (message: JsonRpc.Notification): Effect.Effect<void> | undefined => {
    let effect: Effect.Effect<void> | undefined
    if (message.method === "notifications/progress") effect = onProgress(message.params)
    else if (message.method === "notifications/cancelled") inbound.cancelled(message.params?.requestId)
    options.told?.(message)
    notifications.unsafeOffer(message)
    return effect
  }

  return (message: Incoming, related: JsonRpc.RequestId | undefined): Effect.Effect<void> | undefined => {
    if ("method" in message) {
      return JsonRpc.isRequest(message) ? inbound.request(message, related) : onNotification(message)
    }
    if (message instanceof RequestFailed) {
      pending.settle(message.id, (entry) => Exit.fail(withMethod(message.error, entry.method)), undefined)
      return undefined
    }
    // Already reported by the transport; it only remains to fail its request, if one waits.
    if (message instanceof BrokenAnswer) {
      pending.settle(
        message.id,
        (entry) => Exit.fail(brokenAnswerError(server, entry.method, message.problem)),
        undefined
      )
      return undefined
    }
    return onResponse(message)
  }
}
