/**
 * The gate calls pass through to reach a server: straight through while a connection is
 * ready, otherwise waiting (up to the call's ready wait, `deadline.ts`) for the next one, waking an idle
 * server on the way; failing at once when the server cannot become ready by waiting. A call
 * its connection refused unsent (it had ended before the call was sent) waits for the next
 * connection the same way; a call that may have reached the server is never sent again. It
 * counts calls in flight, so an idle timeout only ever stops a quiet server.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as SubscriptionRef from "effect/SubscriptionRef"
import type * as McpClient from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import { isTerminal, type ServerState } from "../../ServerState.js"
import * as Deadline from "./deadline.js"
import type { StatefulTwin } from "./statefulTwin.js"

/**
 * What the gate reads of its actor.
 */
export interface Actor {
  readonly server: string
  readonly state: SubscriptionRef.SubscriptionRef<ServerState>
  /** The current state, without going through the ref. */
  readonly now: () => ServerState
  readonly lastError: () => McpError.McpError | undefined
  /** Asks an idle server to start again. */
  readonly wake: Effect.Effect<void>
  /** The error a caller gets: the server's secrets masked. */
  readonly mask: (error: McpError.McpError) => McpError.McpError
}

/**
 * One server's gate.
 */
export interface CallGate {
  /** The ready connection, if there is one. */
  readonly client: () => McpClient.McpClient | undefined
  /** Opens the gate to a ready connection, or closes it (undefined), dropping its twin. */
  readonly setClient: (client: McpClient.McpClient | undefined) => void
  /** Gives the ready connection a stateful twin (`statefulTwin.ts`), for stateful callers. */
  readonly setTwin: (twin: StatefulTwin) => void
  /**
   * Runs `f` with a ready connection, waiting for one if the server is starting (within the
   * call's ready wait); again on the next connection when `f` fails `unsent`. A `stateful`
   * caller's `f` runs on the connection's stateful twin when it has one.
   */
  readonly withClient: <A>(
    f: (client: McpClient.McpClient) => Effect.Effect<A, McpError.McpError>,
    deadline: Deadline.CallDeadline,
    stateful?: boolean | undefined
  ) => Effect.Effect<A, McpError.McpError>
  /** Completes once no call has been in flight for `idleMs`, counted from the last one or from now. */
  readonly idle: (idleMs: number) => Effect.Effect<void>
}

const unavailable = (state: ServerState): string => {
  switch (state._tag) {
    case "Disabled":
      return "is disabled"
    case "Stopped":
      return "is stopped"
    case "NeedsAuth":
      return `needs authorization: ${state.error.message}`
    case "Failed":
      return `failed after ${state.attempt} attempt${
        state.attempt === 1 ? "" : "s"
      } and is not retried: ${state.error.message}`
    default:
      return `is ${state._tag}`
  }
}

// Whether a call failed only because its connection had ended before it was sent.
const unsent = (cause: Cause.Cause<McpError.McpError>): boolean => cause._tag === "Fail" && cause.error.unsent

/**
 * Makes a closed gate.
 */
export const make = (actor: Actor): CallGate => {
  let client: McpClient.McpClient | undefined
  let twin: StatefulTwin | undefined
  let inFlight = 0
  let lastActivity = 0

  // The ready connection, unless it is the one that refused a call (`stale`).
  const readyClient = (stale: McpClient.McpClient | undefined) =>
    Effect.suspend((): Effect.Effect<Option.Option<McpClient.McpClient>, McpError.McpError> => {
      if (client !== undefined && client !== stale) return Effect.succeed(Option.some(client))
      const now = actor.now()
      if (isTerminal(now)) {
        return Effect.fail(
          McpError.unavailable(actor.server, { state: now._tag, message: unavailable(now) })
        )
      }
      return now._tag === "Idle" ? Effect.as(actor.wake, Option.none()) : Effect.succeed(Option.none())
    })

  // Waits for a ready connection within the call's ready wait; a wait cut short by the
  // call's total limit fails as the call's timeout.
  const awaitClient = (deadline: Deadline.CallDeadline, stale?: McpClient.McpClient) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const wait = Deadline.readyWait(deadline, now)
      return actor.state.changes.pipe(
        Stream.mapEffect(() => readyClient(stale)),
        Stream.filterMap((found) => found),
        Stream.runHead,
        Effect.flatMap(Option.match({
          onNone: () => Effect.die("the state stream ended"),
          onSome: Effect.succeed
        })),
        Effect.timeoutFail({
          duration: wait.ms,
          onTimeout: () => wait.total ? Deadline.totalExceeded(deadline) : notReady(wait.ms)
        })
      )
    })

  const notReady = (ms: number) => {
    const lastError = actor.lastError()
    return McpError.unavailable(actor.server, {
      state: actor.now()._tag,
      message: `was not ready within ${ms} ms (${lastError ? `last error: ${lastError.message}` : actor.now()._tag})`
    })
  }

  const finished = Effect.map(Clock.currentTimeMillis, (at) => {
    inFlight--
    lastActivity = at
  })
  // Runs `f` on `c`, counted in flight; a refusal of a call never sent goes on to the next
  // connection. One exit handler, as `ensuring` would cost.
  const use = <A>(
    c: McpClient.McpClient,
    f: (client: McpClient.McpClient) => Effect.Effect<A, McpError.McpError>,
    deadline: Deadline.CallDeadline
  ): Effect.Effect<A, McpError.McpError> =>
    Effect.uninterruptibleMask((restore) => {
      inFlight++
      return Effect.matchCauseEffect(restore(f(c)), {
        onSuccess: (a) => Effect.as(finished, a),
        onFailure: (cause) =>
          Effect.zipRight(
            finished,
            unsent(cause)
              ? restore(Effect.flatMap(awaitClient(deadline, c), (next) => use(next, f, deadline)))
              : Effect.failCause(Cause.map(cause, actor.mask))
          )
      })
    })

  // `f` on the twin of `c` while `c` is the ready connection and its twin opens, else on `c`.
  const onTwin = <A>(
    f: (client: McpClient.McpClient) => Effect.Effect<A, McpError.McpError>
  ) =>
  (c: McpClient.McpClient): Effect.Effect<A, McpError.McpError> =>
    Effect.suspend(() =>
      c === client && twin !== undefined
        ? Effect.flatMap(twin.client, (stateful) => f(stateful ?? c))
        : f(c)
    )

  return {
    client: () => client,
    setClient: (next) => {
      client = next
      twin = undefined
    },
    setTwin: (next) => {
      twin = next
    },
    withClient: (given, deadline, stateful) =>
      Effect.suspend(() => {
        const f = stateful === true ? onTwin(given) : given
        return client !== undefined
          ? use(client, f, deadline)
          : Effect.flatMap(awaitClient(deadline), (c) => use(c, f, deadline))
      }),
    idle: (idleMs) =>
      Effect.gen(function*() {
        lastActivity = Math.max(lastActivity, yield* Clock.currentTimeMillis)
        while (true) {
          const quietFor = (yield* Clock.currentTimeMillis) - lastActivity
          if (inFlight === 0 && quietFor >= idleMs) return
          yield* Effect.sleep(inFlight === 0 ? idleMs - quietFor : idleMs)
        }
      })
  }
}
