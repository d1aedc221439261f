/**
 * The supervision loop of one server: run a session, then set the state that follows it,
 * close the session's scope (process tree and pending calls with it) and wait as that state
 * requires — backing off after a failure, for good when the error is not retryable or the
 * attempts ran out, until enabled when disabled, until woken when idle.
 *
 * The verdict on a ready connection's end is made in the step that sees it closed (the Peer's
 * `onClosed`, synchronous), with the backoff's jitter drawn beforehand, so no call slips
 * through a closed gate; the event is published a moment later. A refusal of credentials with a
 * `TokenStore` in context is one more attempt, not NeedsAuth (`auth.ts`).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Random from "effect/Random"
import * as Scope from "effect/Scope"
import * as McpError from "../../McpError.js"
import type { Requirements } from "../../ServerRegistry.js"
import type * as ServerSpec from "../../ServerSpec.js"
import { ServerState } from "../../ServerState.js"
import * as Session from "./session.js"

const millis = (input: Duration.DurationInput) => Duration.toMillis(Duration.decode(input))

/**
 * The delay before retry number `attempt` (1 for the first retry): exponential, capped,
 * then varied by ±jitter, never past the cap.
 */
export const backoff = (policy: ServerSpec.RestartPolicy, attempt: number, random: number): number => {
  const max = millis(policy.maxDelay)
  const base = Math.min(max, millis(policy.initialDelay) * Math.pow(policy.factor, attempt - 1))
  return Math.round(Math.min(max, Math.max(0, base * (1 + policy.jitter * (2 * random - 1)))))
}

/**
 * What a failed session leads to: which attempt it was (a stable session starts the count
 * again) and whether another one will come.
 */
export const judge = (
  policy: ServerSpec.RestartPolicy,
  error: McpError.McpError,
  readyFor: number,
  failures: number
): { readonly attempt: number; readonly permanent: boolean } => {
  const attempt = (readyFor >= millis(policy.stableAfter) ? 0 : failures) + 1
  return { attempt, permanent: !error.retryable || (policy.maxAttempts !== undefined && attempt >= policy.maxAttempts) }
}

/**
 * What a failed session leads to, decided once: the state it leaves, which attempt it was,
 * whether another one will come, and when.
 */
export interface Verdict {
  readonly error: McpError.McpError
  readonly attempt: number
  readonly permanent: boolean
  /** When the next attempt starts (unused when permanent). */
  readonly retryAt: number
  /** Failed, or NeedsAuth for a server that refuses us without credentials. */
  readonly state: ServerState
}

/**
 * The verdict on a session that failed at `at`, after `failures` in a row, drawing its
 * jitter from `random` (in [0, 1)).
 */
export const decide = (
  policy: ServerSpec.RestartPolicy,
  error: McpError.McpError,
  readyFor: number,
  failures: number,
  at: number,
  random: number,
  auth?: { readonly recoverable: boolean; readonly authorizationUrl: string | undefined } | undefined
): Verdict => {
  const judged = judge(policy, error, readyFor, failures)
  const attempt = judged.attempt
  // A refusal OAuth may recover from is tried again, once, like any other failure.
  const recovering = auth?.recoverable === true && error.needsAuth
  const permanent = judged.permanent && !recovering
  // The recovery (a refresh, a client credentials grant) runs at once, and the server is
  // still connecting meanwhile: a first contact with no token yet is no failure, and a
  // health check does not settle on it.
  const retryAt = at + (permanent || recovering ? 0 : backoff(policy, attempt, random))
  // A server that refuses us without credentials waits for new ones (a config change or
  // a restart) instead of being asked again and again.
  const state = recovering
    ? ServerState.Connecting({ attempt: attempt + 1, since: at })
    : error.needsAuth
    ? ServerState.NeedsAuth({ error, authorizationUrl: auth?.authorizationUrl })
    : ServerState.Failed({ error, attempt, retryAt: permanent ? undefined : retryAt })
  return { error, attempt, permanent, retryAt, state }
}

/**
 * The mutable part of the loop the actor also writes: `disable` and `enable` set it at once.
 */
export interface Switch {
  disabled: boolean
}

// Publishes the verdict's state, closes the scope, and waits: the backoff, or for a control
// request when no retry will come (not after a fill: the lazy loop goes on). Returns the
// failures in a row so far.
const afterFailure = (
  core: Session.Core,
  toggle: Switch,
  verdict: Verdict,
  scope: Scope.CloseableScope,
  fill: boolean
) =>
  Effect.gen(function*() {
    const { attempt, error } = verdict
    yield* core.setState(verdict.state)
    yield* Effect.logWarning(error.message).pipe(Effect.annotateLogs({ server: core.spec.name, attempt }))
    yield* Effect.uninterruptible(Scope.close(scope, Exit.fail(error)))
    if (fill) return attempt
    if (verdict.permanent) {
      yield* core.clearLists
      if ((yield* Session.takeControl(core, ["restart", "enable", "disable"])) === "disable") toggle.disabled = true
      return 0
    }
    const left = verdict.retryAt - (yield* Clock.currentTimeMillis)
    const early = yield* Effect.raceFirst(
      Effect.as(Effect.sleep(Math.max(0, left)), undefined),
      Session.takeControl(core, ["restart", "disable"])
    )
    if (early === "disable") toggle.disabled = true
    return early === undefined ? attempt : 0
  })

// The Idle state of the server now: a lazy server's says so.
const idleState = (core: Session.Core) =>
  Effect.map(
    Clock.currentTimeMillis,
    (since) => ServerState.Idle(core.lazy === undefined ? { since } : { since, lazy: true })
  )

// Waits Idle until a call wakes it (or a restart); false when it is disabled instead.
const awaitWake = (core: Session.Core, toggle: Switch) =>
  Effect.map(Session.takeControl(core, ["wake", "restart", "disable"]), (control) => {
    if (control === "disable") toggle.disabled = true
    return control !== "disable"
  })

// Sets the state that follows a session that ended without failing, and closes its scope;
// after a fill, returns at once (the lazy loop waits for the wake).
const afterStop = (
  core: Session.Core,
  toggle: Switch,
  outcome: Exclude<Session.Outcome, { _tag: "Failed" }>,
  scope: Scope.CloseableScope,
  fill: boolean
) =>
  Effect.gen(function*() {
    if (outcome._tag === "Control") {
      if (outcome.control === "disable") toggle.disabled = true
      else yield* core.setState(ServerState.Pending())
      yield* Scope.close(scope, Exit.void)
      return 0
    }
    yield* core.setState(yield* idleState(core))
    // Whole, even when the fleet stops meanwhile (a one-shot command ends once a fill is Idle):
    // an interrupted close would leave the process running, its later finalizers skipped.
    yield* Effect.uninterruptible(Scope.close(scope, Exit.void))
    if (!fill) yield* awaitWake(core, toggle)
    return 0
  })

// One session and what follows it; returns the failures in a row. The verdict on a ready
// connection seen closed is made, and its state marked, in the very step it is seen: the
// jitter is drawn beforehand for that. A fill goes idle as soon as no call is in flight.
const runSession = (
  core: Session.Core,
  policy: ServerSpec.RestartPolicy,
  toggle: Switch,
  failures: number,
  fill = false
) =>
  Effect.gen(function*() {
    const clock = yield* Effect.clock
    yield* core.setState(ServerState.Connecting({ attempt: failures + 1, since: clock.unsafeCurrentTimeMillis() }))
    const random = yield* Random.next
    let seen: Verdict | undefined
    const authOf = (error: McpError.McpError) => ({
      recoverable: core.auth.refused(error),
      authorizationUrl: core.auth.authorizationUrl
    })
    const lost = (error: McpError.McpError, readyFor: number) => {
      seen = decide(policy, error, readyFor, failures, clock.unsafeCurrentTimeMillis(), random, authOf(error))
      core.mark(seen.state)
    }
    return yield* Effect.acquireUseRelease(
      Scope.make(),
      (scope) =>
        Effect.gen(function*() {
          const outcome = yield* Session.run(core, scope, lost, fill ? 0 : undefined)
          if (outcome._tag !== "Failed") return yield* afterStop(core, toggle, outcome, scope, fill)
          const verdict = seen !== undefined && seen.error === outcome.error
            ? seen
            : decide(
              policy,
              outcome.error,
              outcome.readyFor,
              failures,
              yield* Clock.currentTimeMillis,
              random,
              authOf(outcome.error)
            )
          return yield* afterFailure(core, toggle, verdict, scope, fill)
        }),
      (scope, exit) => Scope.close(scope, exit)
    )
  })

// A lazy server before its first use: Idle with its cached lists until a call wakes it. With
// none cached it stays Pending (listed by name only; a call waits, as for any server starting),
// and is started once, after the servers that are not lazy have settled, to fill the cache;
// filled or not (a failed fill is logged, and its error kept as the last one) it then waits
// Idle for its first call. False when it was disabled meanwhile.
const lazyStart = (
  core: Session.Core,
  lazy: NonNullable<Session.Core["lazy"]>,
  policy: ServerSpec.RestartPolicy,
  toggle: Switch
) =>
  Effect.gen(function*() {
    const cached = yield* lazy.restore
    if (!(cached && lazy.idle())) yield* core.setState(cached ? yield* idleState(core) : ServerState.Pending())
    if (!cached) {
      const early = yield* Effect.raceFirst(
        Effect.as(lazy.fills.othersSettled, undefined),
        Session.takeControl(core, ["wake", "restart", "disable"])
      )
      if (early === "disable") toggle.disabled = true
      if (early !== undefined) return early !== "disable"
      const failed = (yield* lazy.fills.run(runSession(core, policy, toggle, 0, true))) > 0
      if (toggle.disabled) return false
      if (failed) yield* core.setState(yield* idleState(core))
    }
    return yield* awaitWake(core, toggle)
  })

/**
 * The loop; it runs until interrupted, and then the server is Stopped.
 */
export const supervise = (
  core: Session.Core,
  policy: ServerSpec.RestartPolicy,
  toggle: Switch
): Effect.Effect<never, never, Requirements> =>
  Effect.gen(function*() {
    const { spec } = core
    // Failed attempts in a row; reset by a stable session, a restart or an enable.
    let failures = 0
    // A lazy server sleeps until its first call.
    let awake = core.lazy === undefined
    while (true) {
      if (toggle.disabled) {
        yield* core.clearLists
        yield* core.setState(ServerState.Disabled())
        yield* Session.takeControl(core, ["enable", "restart"])
        toggle.disabled = false
        failures = 0
      } else if (spec.problem !== undefined) {
        const error = McpError.config(spec.name, { message: spec.problem })
        yield* core.setState(ServerState.Failed({ error, attempt: 1, retryAt: undefined }))
        if ((yield* Session.takeControl(core, ["disable", "restart"])) === "disable") toggle.disabled = true
      } else if (!awake) {
        awake = yield* lazyStart(core, core.lazy!, policy, toggle)
      } else {
        failures = yield* runSession(core, policy, toggle, failures)
      }
    }
  }).pipe(
    Effect.onInterrupt(() => core.setState(ServerState.Stopped()))
  )
