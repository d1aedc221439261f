/**
 * One JSON-RPC session over a Transport: a map from request id to the requests in flight,
 * timeouts that progress can reset, cancellation, handlers for the requests the other side
 * sends, and a stream of its notifications.
 *
 * The per-call path is synchronous where it can be: the transport hands each message to
 * the Peer from its I/O callback, and an answer resumes its waiting caller right there. No
 * fiber, Scope, timer or Queue is made per request; one timer fiber serves every deadline,
 * and only what must run effects (handlers for the other side's requests, progress
 * callbacks, warnings) becomes a fiber, in a FiberSet of the session's Scope.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "./JsonRpc.js"
import * as McpError from "./McpError.js"
import { type Incoming, RequestFailed, Transport } from "./Transport.js"

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
  /** Called with each progress notification. Asks the server for progress. */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
  /** Whether interrupting (or timing out) sends notifications/cancelled. Default: true. */
  readonly cancellable?: boolean | undefined
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
 * Answers one kind of request from the other side.
 *
 * @since 0.1.0
 */
export type Handler = (request: JsonRpc.Request) => Effect.Effect<Record<string, unknown>, HandlerError>

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
}

/**
 * A JSON-RPC session.
 *
 * @since 0.1.0
 */
export interface Peer {
  /** The name of the other side, as its transport reports it. */
  readonly server: string
  /** Sends a request and waits for its result. */
  readonly request: (
    method: string,
    params?: Record<string, unknown> | undefined,
    options?: RequestOptions | undefined
  ) => Effect.Effect<Record<string, unknown>, McpError.McpError>
  /** Sends a notification. */
  readonly notify: (method: string, params?: Record<string, unknown> | undefined) => Effect.Effect<void, McpError.McpError>
  /** Subscribes to the notifications the other side sends; nothing is missed after this returns. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<JsonRpc.Notification>, never, Scope.Scope>
  /** The notifications the other side sends, from when the stream starts. */
  readonly notifications: Stream.Stream<JsonRpc.Notification>
  /** Waits until the session ends and returns why. */
  readonly closed: Effect.Effect<McpError.McpError>
  /** How many requests are waiting for an answer. */
  readonly inFlight: () => number
}

type Answer = Exit.Exit<Record<string, unknown>, McpError.McpError>

// A request in flight, with its answer in place of a Deferred: only one fiber ever waits for
// it, and Effect 3 makes each Deferred by copying the whole Commit prototype.
interface Entry {
  readonly method: string
  /** The answer, when it came before anyone waited for it. */
  answer: Answer | undefined
  /** Resumes the fiber waiting for the answer. */
  resume: ((answer: Answer) => void) | undefined
  readonly start: number
  lastActivity: number
  readonly idleMs: number
  readonly totalMs: number
  readonly reset: boolean
  /** Whether giving up on it (interruption, timeout) sends notifications/cancelled. */
  readonly cancellable: boolean
  readonly onProgress: ((progress: Progress) => Effect.Effect<void>) | undefined
}

// When an entry times out: `idle` since its start (or last progress), or its `total`.
const deadlineOf = (entry: Entry): number =>
  Math.min(entry.start + entry.totalMs, (entry.reset ? entry.lastActivity : entry.start) + entry.idleMs)

const DEFAULT_TIMEOUT = Duration.seconds(60)
// Late answers to requests we gave up on are expected; remember a few ids to ignore quietly.
const RECENTLY_ABANDONED = 1024

const toMillis = (input: Duration.DurationInput | undefined, fallback: number): number =>
  input === undefined ? fallback : Duration.toMillis(Duration.decode(input))

// Every path that answers an entry takes it out of `pending` first, so it is answered once.
const answer = (entry: Entry, exit: Answer): void => {
  if (entry.resume === undefined) entry.answer = exit
  else entry.resume(exit)
}

// Waits for the entry's answer, or takes the one already there.
const resumeWith = (entry: Entry, resume: (answer: Answer) => void): void => {
  if (entry.answer === undefined) entry.resume = resume
  else resume(entry.answer)
}

// Waits for the entry's answer. No canceller: the request's own exit handler forgets it.
const awaitAnswer = (entry: Entry) =>
  Effect.async<Record<string, unknown>, McpError.McpError>((resume) => resumeWith(entry, resume))

const CANCELLED = "The request was cancelled by the client"

const withMethod = (error: McpError.McpError, method: string): McpError.McpError =>
  error.reason._tag === "Closed" && error.reason.method === undefined
    ? McpError.make(error.server, new McpError.ClosedReason({ ...error.reason, method }), error.cause)
    : error

/**
 * Starts a session on the Transport in context. It ends with the Scope.
 *
 * @since 0.1.0
 */
export const make = (options: Options = {}): Effect.Effect<Peer, never, Transport | Scope.Scope> =>
  Effect.gen(function*() {
    const transport = yield* Transport
    const server = transport.server
    const scope = yield* Effect.scope
    const clock = yield* Effect.clock
    const defaultTimeout = toMillis(options.requestTimeout, Duration.toMillis(DEFAULT_TIMEOUT))
    // A Map, not an object: a method named after an Object.prototype member must not find one.
    const handlers = new Map<string, Handler>([["ping", () => Effect.succeed({})], ...Object.entries(options.handlers ?? {})])
    // Runs what the I/O callbacks cannot do synchronously, as fibers ended with the Scope.
    const run = yield* FiberSet.makeRuntime<never, unknown, unknown>()

    const pending = new Map<JsonRpc.RequestId, Entry>()
    const abandoned = new Set<JsonRpc.RequestId>()
    const running = new Map<JsonRpc.RequestId, Fiber.RuntimeFiber<unknown, unknown>>()
    const notifications = yield* PubSub.unbounded<JsonRpc.Notification>()
    const closedWith = yield* Deferred.make<McpError.McpError>()
    let closeError: McpError.McpError | undefined
    let nextId = 0

    const abandon = (id: JsonRpc.RequestId) => {
      abandoned.add(id)
      if (abandoned.size > RECENTLY_ABANDONED) abandoned.delete(abandoned.values().next().value!)
    }

    const close = (error: McpError.McpError): void => {
      if (closeError) return
      closeError = error
      for (const [id, entry] of pending) {
        pending.delete(id)
        answer(entry, Exit.fail(withMethod(error, entry.method)))
      }
      Deferred.unsafeDone(closedWith, Exit.succeed(error))
    }

    // Responses and progress are handled synchronously; only what must run effects does.
    const onResponse = (message: JsonRpc.Success | JsonRpc.Failure): Effect.Effect<void> | undefined => {
      const id = message.id
      const entry = id === null ? undefined : pending.get(id)
      if (entry === undefined) {
        if (id !== null && abandoned.delete(id)) return undefined
        const what = "error" in message ? `an error (${message.error.code}: ${message.error.message})` : "a response"
        return Effect.logWarning(`server '${server}' sent ${what} for unknown request id ${JSON.stringify(id)}`).pipe(
          Effect.annotateLogs({ server })
        )
      }
      pending.delete(id!)
      answer(
        entry,
        "result" in message
          ? Exit.succeed(message.result)
          : Exit.fail(McpError.make(server, new McpError.ProtocolReason({ method: entry.method, ...message.error })))
      )
      return undefined
    }

    const onProgress = (params: Record<string, unknown> | undefined): Effect.Effect<void> | undefined => {
      const token = params?.progressToken
      const entry = typeof token === "number" || typeof token === "string" ? pending.get(token) : undefined
      if (entry === undefined) return undefined
      entry.lastActivity = clock.unsafeCurrentTimeMillis()
      if (entry.onProgress === undefined || typeof params!.progress !== "number") return undefined
      const progress = params as unknown as Progress
      return entry.onProgress({ progress: progress.progress, total: progress.total, message: progress.message }).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("progress callback failed", cause))
      )
    }

    const onNotification = (message: JsonRpc.Notification): Effect.Effect<void> | undefined => {
      let effect: Effect.Effect<void> | undefined
      if (message.method === "notifications/progress") {
        effect = onProgress(message.params)
      } else if (message.method === "notifications/cancelled") {
        const requestId = message.params?.requestId
        const fiber = typeof requestId === "string" || typeof requestId === "number" ? running.get(requestId) : undefined
        fiber?.unsafeInterruptAsFork(FiberId.none)
      }
      notifications.unsafeOffer(message)
      return effect
    }

    const respond = (id: JsonRpc.RequestId, exit: Exit.Exit<Record<string, unknown>, HandlerError>) => {
      if (Exit.isInterrupted(exit)) return Effect.void
      const message: JsonRpc.Message = Exit.isSuccess(exit)
        ? { jsonrpc: "2.0", id, result: exit.value }
        : { jsonrpc: "2.0", id, error: errorObject(exit.cause) }
      return Effect.ignore(transport.send(message))
    }

    const onRequest = (message: JsonRpc.Request): Effect.Effect<void> | undefined => {
      const handler = handlers.get(message.method)
      if (handler === undefined) {
        return respond(
          message.id,
          Exit.fail(new HandlerError({ code: JsonRpc.ErrorCode.MethodNotFound, message: `Method not found: ${message.method}` }))
        )
      }
      const id = message.id
      const fiber = run(handler(message).pipe(
        Effect.onExit((exit) => Effect.zipRight(Effect.sync(() => running.delete(id)), respond(id, exit)))
      ))
      if (fiber.unsafePoll() === null) running.set(id, fiber)
      return undefined
    }

    const onFailed = (failed: RequestFailed): undefined => {
      const entry = pending.get(failed.id)
      if (entry === undefined) return undefined
      pending.delete(failed.id)
      answer(entry, Exit.fail(withMethod(failed.error, entry.method)))
    }

    const onMessage = (message: Incoming): void => {
      const effect = "method" in message
        ? (JsonRpc.isRequest(message) ? onRequest(message) : onNotification(message))
        : message instanceof RequestFailed
        ? onFailed(message)
        : onResponse(message)
      if (effect !== undefined) run(effect)
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => close(McpError.make(server, new McpError.ClosedReason({ message: "the connection was closed" }))))
    )
    transport.listen({ message: onMessage, closed: close })

    const cancel = (id: JsonRpc.RequestId, reason: string) => {
      abandon(id)
      return Effect.ignore(transport.send({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason }
      }))
    }

    // One timer for all requests, sleeping until the earliest deadline; a request with an
    // earlier deadline than the one it sleeps for wakes it. No fiber or timer per request.
    let wakeAt = Infinity
    let wake = Deferred.unsafeMake<void>(FiberId.none)
    // Fails the entry with a Timeout and, when it is cancellable, tells the other side.
    const expire = (id: JsonRpc.RequestId, entry: Entry, now: number): Effect.Effect<void> | undefined => {
      pending.delete(id)
      const kind = now >= entry.start + entry.totalMs ? "total" : "idle"
      const afterMs = kind === "total" ? entry.totalMs : entry.idleMs
      const error = McpError.make(server, new McpError.TimeoutReason({ method: entry.method, afterMs, kind }))
      answer(entry, Exit.fail(error))
      return entry.cancellable ? cancel(id, `Timed out: ${error.message}`) : undefined
    }
    const timer = Effect.suspend(() => {
      const now = clock.unsafeCurrentTimeMillis()
      let earliest = Infinity
      const cancels: Array<Effect.Effect<void>> = []
      for (const [id, entry] of pending) {
        const deadline = deadlineOf(entry)
        if (deadline > now) earliest = Math.min(earliest, deadline)
        else {
          const cancelled = expire(id, entry, now)
          if (cancelled !== undefined) cancels.push(cancelled)
        }
      }
      // With nothing pending it still sleeps for a default timeout, not forever: a request
      // made meanwhile with the default timeout ends after that, and need not wake it.
      wakeAt = earliest === Infinity ? now + defaultTimeout : earliest
      wake = Deferred.unsafeMake<void>(FiberId.none)
      const sleep = Effect.raceFirst(Effect.sleep(wakeAt - now), Deferred.await(wake))
      return cancels.length === 0 ? sleep : Effect.zipRight(Effect.all(cancels, { discard: true }), sleep)
    })
    yield* Effect.forkIn(Effect.forever(timer), scope)

    const request: Peer["request"] = (method, params, requestOptions = {}) =>
      Effect.suspend(() => {
        if (closeError) return Effect.fail(withMethod(closeError, method))
        const id = nextId++
        const now = clock.unsafeCurrentTimeMillis()
        const reset = requestOptions.resetTimeoutOnProgress === true
        const entry: Entry = {
          method,
          answer: undefined,
          resume: undefined,
          start: now,
          lastActivity: now,
          idleMs: toMillis(requestOptions.timeout, defaultTimeout),
          totalMs: toMillis(requestOptions.maxTotalTimeout, Infinity),
          reset,
          cancellable: requestOptions.cancellable ?? method !== "initialize",
          onProgress: requestOptions.onProgress
        }
        const wantsProgress = reset || requestOptions.onProgress !== undefined
        const message: JsonRpc.Request = {
          jsonrpc: "2.0",
          id,
          method,
          ...(wantsProgress
            ? { params: { ...params, _meta: { ...(params?._meta as object | undefined), progressToken: id } } }
            : params === undefined ? {} : { params })
        }
        pending.set(id, entry)
        const deadline = deadlineOf(entry)
        if (deadline < wakeAt) {
          wakeAt = deadline
          Deferred.unsafeDone(wake, Exit.void)
        }
        // One suspension per call where the transport can send at once: the send happens
        // as the wait begins, and interrupting the wait forgets the request and cancels it.
        if (transport.sendNow !== undefined) {
          const sendNow = transport.sendNow
          return Effect.async<Record<string, unknown>, McpError.McpError>((resume) => {
            const refused = sendNow(message)
            if (refused !== undefined) {
              pending.delete(id)
              return resume(Effect.fail(refused))
            }
            resumeWith(entry, resume)
            return Effect.suspend(() => pending.delete(id) && entry.cancellable ? cancel(id, CANCELLED) : Effect.void)
          })
        }
        // One exit handler for the send and the wait (what onExit does, minus its work on
        // success): a request that did not get its answer is forgotten, and cancelled when
        // the caller gave up on it (the timer cancels what timed out).
        return Effect.uninterruptibleMask((restore) =>
          Effect.matchCauseEffect(restore(Effect.zipRight(transport.send(message), awaitAnswer(entry))), {
            onSuccess: Effect.succeed,
            onFailure: (cause) => {
              const wasPending = pending.delete(id)
              const failed = Effect.failCause(cause)
              return wasPending && entry.cancellable && Cause.isInterrupted(cause)
                ? Effect.zipRight(cancel(id, CANCELLED), failed)
                : failed
            }
          })
        )
      })

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
      inFlight: () => pending.size
    } satisfies Peer
  })

const errorObject = (cause: Cause.Cause<HandlerError>): JsonRpc.ErrorObject => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const { code, data, message } = failure.value
    return data === undefined ? { code, message } : { code, message, data }
  }
  return { code: JsonRpc.ErrorCode.InternalError, message: Cause.pretty(cause).split("\n")[0] ?? "internal error" }
}
