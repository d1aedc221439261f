/**
 * A routed call's time limits, decided in one place when the call enters the registry, from
 * the call's options and its server's spec; the parts that enforce them receive the result
 * instead of deciding again:
 *
 * - `readyMs`: how long the call waits for a ready connection (`readyTimeout`, else the
 *   spec's, else 30 s), enforced by the call gate (`callGate.ts`), also when a task's call
 *   follows it on a later connection (`taskCalls.ts`);
 * - `idleMs`: how long its request may go without an answer, or progress (`timeout`, else
 *   the connection's request timeout), enforced by the Peer's one timer, and by the client
 *   around its wait for the host's answers to a 2026-07-28 input round;
 * - `endsAt`: when the whole call must be done, the wait for the server included
 *   (`maxTotalTimeout`, counted from the call's start; the Policy's `limits.timeout` comes in
 *   through it), enforced by the Peer's timer for a plain request, sent with what is left
 *   of it, and by one timer around the call (a task's many requests, or input rounds).
 *
 * A call without `maxTotalTimeout` reads no clock and starts no timer for it.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import type { CallToolOptions } from "../../ServerRegistry.js"
import type * as ServerSpec from "../../ServerSpec.js"

/**
 * The limits of one routed call.
 */
export interface CallDeadline {
  readonly server: string
  /** How long the call waits for a ready connection, in ms. */
  readonly readyMs: number
  /** The request's inactivity limit in ms; undefined: the connection's request timeout. */
  readonly idleMs: number | undefined
  /** The whole call's limit in ms, and the Clock time it ends at; Infinity for none. */
  readonly totalMs: number
  readonly endsAt: number
}

/** The options a call's limits are decided from. */
export type DeadlineOptions = Pick<CallToolOptions, "readyTimeout" | "timeout" | "maxTotalTimeout">

const DEFAULT_READY_MS = 30_000

const millis = (input: Duration.DurationInput | undefined): number | undefined =>
  input === undefined ? undefined : Duration.toMillis(Duration.decode(input))

const decide = (options: DeadlineOptions | undefined, spec: ServerSpec.ServerSpec, now: number): CallDeadline => {
  const totalMs = millis(options?.maxTotalTimeout) ?? Infinity
  return {
    server: spec.name,
    readyMs: millis(options?.readyTimeout) ?? millis(spec.readyTimeout) ?? DEFAULT_READY_MS,
    idleMs: millis(options?.timeout),
    totalMs,
    endsAt: now + totalMs
  }
}

/**
 * Decides the limits of a call to `spec`'s server starting now and runs `f` with them; the
 * Clock is read only when the call has a total limit.
 */
export const decided = <A, E, R>(
  options: DeadlineOptions | undefined,
  spec: ServerSpec.ServerSpec,
  f: (deadline: CallDeadline) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  options?.maxTotalTimeout === undefined
    ? f(decide(options, spec, 0))
    : Effect.flatMap(Clock.currentTimeMillis, (now) => f(decide(options, spec, now)))

/** The failure of a call that ran out of its total limit. */
export const totalExceeded = (deadline: CallDeadline): McpError.McpError =>
  McpError.timeout(deadline.server, { method: "tools/call", afterMs: deadline.totalMs, kind: "total" })

/**
 * How long a wait for the server may last from `now`: the ready timeout, or what is left of
 * the total when that is shorter (`total`: the wait then ends the call).
 */
export const readyWait = (deadline: CallDeadline, now: number): { readonly ms: number; readonly total: boolean } => {
  const left = Math.max(0, deadline.endsAt - now)
  return left < deadline.readyMs ? { ms: left, total: true } : { ms: deadline.readyMs, total: false }
}

/**
 * Sends one request with the call's limits: its inactivity limit (`options.timeout` as
 * given), and what is left of its total (read from the Clock only when there is one), which
 * also bounds the whole exchange: a 2026-07-28 call's input rounds are several requests and
 * the waits for the client's answers between them.
 */
export const send = <O extends McpClient.CallToolOptions, A>(
  deadline: CallDeadline,
  options: O | undefined,
  f: (options: O | undefined) => Effect.Effect<A, McpError.McpError>
): Effect.Effect<A, McpError.McpError> =>
  deadline.totalMs === Infinity ? f(options) : Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const left = deadline.endsAt - now
    // The Peer is given what is left; its total timeout is the call's, and says the call's maximum.
    return left <= 0
      ? Effect.fail(totalExceeded(deadline))
      : f({ ...options!, timeout: deadline.idleMs, maxTotalTimeout: left }).pipe(
        Effect.mapError((error) =>
          error.reason._tag === "Timeout" && error.reason.kind === "total" ? totalExceeded(deadline) : error
        ),
        Effect.timeoutFail({ duration: left, onTimeout: () => totalExceeded(deadline) })
      )
  })

/**
 * Bounds an effect of many requests (a call that runs as a task) by what is left of the
 * total, with one timer; unbounded without a total.
 */
export const bounded = <A>(
  deadline: CallDeadline,
  effect: Effect.Effect<A, McpError.McpError>
): Effect.Effect<A, McpError.McpError> =>
  deadline.totalMs === Infinity ? effect : Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.timeoutFail(effect, {
      duration: Math.max(0, deadline.endsAt - now),
      onTimeout: () => totalExceeded(deadline)
    }))
