/**
 * Following one event stream of a Streamable HTTP connection: the answer to a POST, or the
 * standing GET stream. Events are decoded in the body's data callback and each message is
 * delivered at once. When the stream ends or breaks before what it was read for, it is
 * resumed with a GET carrying `Last-Event-ID`, after the server's `retry` (else a doubling
 * backoff), up to `maxAttempts` tries in a row that bring no event; resuming is the one
 * part that runs as a fiber, since it waits on the Clock.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import * as Http from "./http.js"
import { type Event as SseEvent, SseDecoder } from "./sseDecoder.js"
import { type Connection, unreachable } from "./streamableHttpConnection.js"

/** What a stream is read for: the answer to one request, or whatever the server sends unasked. */
export interface Reading {
  readonly method: string
  readonly awaiting: JsonRpc.RequestId | undefined
}

/** The delay before resume attempt `attempt` (from 1): the server's `retry`, else a doubling backoff. */
export const delayMs = (settings: Connection["settings"], attempt: number, retry: number | undefined): number =>
  retry ?? Math.min(settings.maxDelayMs, settings.initialDelayMs * 2 ** (attempt - 1))

/** Who reads a stream: hears once, when there is nothing more to read, whether it failed. */
export interface Reader {
  ended(error: McpError.McpError | undefined): void
}

/** One stream, across its resumptions. */
export class EventStream implements Http.EventReader {
  private readonly decoder: SseDecoder
  private answered = false
  private attempt = 0
  private stopped = false
  private response: Http.Response | undefined
  private resuming: Fiber.RuntimeFiber<void> | undefined

  constructor(
    private readonly conn: Connection,
    private readonly reading: Reading,
    private readonly reader: Reader
  ) {
    this.decoder = new SseDecoder(conn.ctx.maxMessageBytes)
  }

  /** The sink for a response body of this stream (the first, or a resumed one). */
  sink(response: Http.Response): Http.Sink {
    this.response = response
    return new Http.EventSink(this.conn.ctx, response, this.reading.method, this.decoder, this)
  }

  /** Stops reading, and resuming: the request was cancelled. The reader is not told. */
  stop(): void {
    this.stopped = true
    this.response?.abort()
    this.resuming?.unsafeInterruptAsFork(FiberId.none)
  }

  onEvent(event: SseEvent): void {
    this.attempt = 0
    if (event.event !== "message" || event.data.trim() === "") return
    const awaiting = this.reading.awaiting
    for (const message of Http.parseMessages(this.conn.ctx, event.data, "an event")) {
      if (awaiting !== undefined && !this.answered && !("method" in message) && message.id === awaiting) {
        this.answered = true
      }
      // What a POST's stream carries relates to the one request that POST sent (we send no
      // batches); the standing GET's relates to none.
      this.conn.deliver(message, awaiting)
    }
  }

  onStreamEnd(error: McpError.McpError | undefined): void {
    if (this.stopped) return
    if (this.answered || this.conn.closing) return this.reader.ended(undefined)
    // Resuming would bring the same oversize event again.
    if (error !== undefined && error.reason._tag === "Limit") return this.reader.ended(error)
    const why = error === undefined ? "" : `: ${error.message}`
    if (this.reading.awaiting !== undefined && this.decoder.lastEventId === undefined) {
      return this.reader.ended(Http.closedError(
        this.conn.ctx,
        `the stream answering ${this.reading.method} ended before the answer, with no event id to resume from${why}`
      ))
    }
    this.resuming = this.conn.ctx.fork(
      Effect.catchAll(this.resume(why), (failed) => Effect.sync(() => this.reader.ended(failed)))
    )
  }

  // Tries GETs with Last-Event-ID until one opens an event stream, whose body this stream
  // then reads on.
  private resume(why: string): Effect.Effect<void, McpError.McpError> {
    const { conn, reading } = this
    const what = `the resumed stream of ${reading.method}`
    return Effect.gen(this, function*() {
      while (true) {
        this.attempt++
        if (this.attempt > conn.settings.maxAttempts) {
          return yield* Effect.fail(Http.closedError(
            conn.ctx,
            `lost the stream ${
              reading.awaiting === undefined ? "of server messages" : `answering ${reading.method}`
            } and could not resume it in ${conn.settings.maxAttempts} attempts${why}`
          ))
        }
        yield* Effect.logDebug(`server '${conn.ctx.server}': resuming the stream of ${reading.method}${why}`)
        yield* Effect.sleep(Duration.millis(delayMs(conn.settings, this.attempt, this.decoder.retry)))
        const sentIn = conn.sessionId
        const opened = yield* Effect.either(openGet(conn, what, this.decoder.lastEventId))
        if (opened._tag === "Left") {
          if (unreachable(opened.left)) return yield* Effect.fail(opened.left)
          continue
        }
        const response = opened.right.response
        if (response.status === 404 && sentIn !== undefined) {
          yield* Http.discard(opened.right)
          return yield* Effect.fail(conn.sessionExpired())
        }
        if (!response.ok || response.mediaType !== "text/event-stream") {
          const error = yield* Http.statusError(conn.ctx, opened.right, what, conn.settings.httpTimeoutMs)
          // The server cannot resume (405): another try will not help.
          if (response.status >= 400 && response.status < 500) return yield* Effect.fail(error)
          continue
        }
        if (this.stopped) return yield* Http.discard(opened.right)
        return opened.right.read(this.sink(response))
      }
    })
  }
}

/** Opens a GET event stream, resuming after `lastEventId` if given, within the HTTP timeout. */
export const openGet = (
  conn: Connection,
  what: string,
  lastEventId: string | undefined
): Effect.Effect<Http.Opened, McpError.McpError> =>
  Http.open(conn.ctx, {
    method: "GET",
    url: conn.url,
    headers: conn.headers(
      lastEventId === undefined
        ? { accept: "text/event-stream" }
        : { accept: "text/event-stream", "last-event-id": lastEventId }
    )
  }, what).pipe(Effect.timeoutFail({
    duration: Duration.millis(conn.settings.httpTimeoutMs),
    onTimeout: () => Http.closedError(conn.ctx, `${what} did not open within the timeout`)
  }))
