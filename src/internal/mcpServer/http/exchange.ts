/**
 * What the Streamable HTTP core needs of a platform's HTTP: one request and its answer (an
 * exchange, `X`) read and written through a table of functions the platform's adapter makes
 * once (`web.ts` on fetch's Request and Response, `node.ts` on node:http). The core holds no
 * platform type: it asks an exchange for its method, path, headers and body (read whole
 * within a size limit), and answers it whole (status, headers, body) or as an event stream
 * written as events come, learning when the exchange closes (answered, or the client gone).
 * A table rather than an object per request: on node:http the exchange is Node's own
 * response, so the adapter adds no allocation to a request.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type { RequestHeaders } from "./guard.js"
import type { Answer } from "./response.js"
import type { EventSink } from "./streamLog.js"

/** How much of a body is read, and for how long. */
export interface BodyLimits {
  readonly maxBytes: number
  readonly timeoutMs: number
}

/** The operations on one platform's exchanges. */
export interface Exchange<X> {
  /** The request's method, upper-case. */
  readonly method: (exchange: X) => string | undefined
  /** The request's path, without its query. */
  readonly path: (exchange: X) => string
  /** The request's headers, by lower-case name (Host included). */
  readonly headers: (exchange: X) => RequestHeaders
  /**
   * Reads the body whole in the platform's callbacks: `done` gets its UTF-8 text, or the
   * refusal (`Guard.tooLarge` past `limits.maxBytes`, `Guard.tooSlow` when it has not all come
   * within `limits.timeoutMs`, the rest not read; `Guard.unreadable`). Called once.
   */
  readonly readBody: (exchange: X, limits: BodyLimits, done: (body: string | Answer) => void) => void
  /** The client's network address, when the platform gives it (for per-address caps). */
  readonly address: (exchange: X) => string | undefined
  /** Answers whole: `answer` with `headers` besides its own, unless the exchange has closed. */
  readonly send: (exchange: X, answer: Answer, headers: Readonly<Record<string, string>>) => void
  /** Answers 200 with an event stream at once; events go to the sink as they are written. */
  readonly stream: (exchange: X, headers: Readonly<Record<string, string>>) => EventSink
  /** Whether the answer is complete or the client went away. */
  readonly isGone: (exchange: X) => boolean
  /** Calls `listener` once the exchange closes: its answer complete, or the client gone. */
  readonly onClose: (exchange: X, listener: () => void) => void
  /** Something failed: 500 when nothing was answered yet, else the answer is cut short. */
  readonly fail: (exchange: X) => void
}

/** An endpoint's exchanges, and the fibers for what their callbacks cannot do. */
export interface Io<X> extends Exchange<X> {
  /** Runs what cannot be done in a callback (opening a session), with the server; 500 if it dies. */
  readonly fork: (exchange: X, effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>
  /** A callback threw: the defect is logged and the request answered with 500. */
  readonly failed: (exchange: X, defect: unknown) => void
}
