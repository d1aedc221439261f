/**
 * The supervision loop of one server: run a session, then set the state that follows it,
 * close the session's scope (process tree and pending calls with it) and wait as that state
 * requires — backing off after a failure, for good when the error is not retryable or the
 * attempts ran out, until enabled when disabled, until woken when idle.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Random from "effect/Random"
import * as Scope from "effect/Scope"
import * as Catalog from "../../Catalog.js"
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
 * The mutable part of the loop the actor also writes: `disable` and `enable` set it at once.
 */
export interface Switch {
  disabled: boolean
}

// Sets the state that follows a failure, closes the scope, and waits: the backoff, or for a
// control request when no retry will come. Returns the failures in a row so far.
const afterFailure = (
  core: Session.Core,
  policy: ServerSpec.RestartPolicy,
  toggle: Switch,
  outcome: Extract<Session.Outcome, { _tag: "Failed" }>,
  scope: Scope.CloseableScope,
  failures: number
) =>
  Effect.gen(function*() {
    const { error } = outcome
    const { attempt, permanent } = judge(policy, error, outcome.readyFor, failures)
    const at = yield* Clock.currentTimeMillis
    const delay = permanent ? 0 : backoff(policy, attempt, yield* Random.next)
    // A server that refuses us without credentials waits for new ones (a config change or
    // a restart) instead of being asked again and again.
    yield* core.setState(
      error.needsAuth
        ? ServerState.NeedsAuth({ error })
        : ServerState.Failed({ error, attempt, retryAt: permanent ? undefined : at + delay })
    )
    yield* Effect.logWarning(error.message).pipe(Effect.annotateLogs({ server: core.spec.name, attempt }))
    yield* Scope.close(scope, Exit.fail(error))
    if (permanent) {
      yield* core.setLists(Catalog.emptyLists)
      if ((yield* Session.takeControl(core, ["restart", "enable", "disable"])) === "disable") toggle.disabled = true
      return 0
    }
    const left = at + delay - (yield* Clock.currentTimeMillis)
    const early = yield* Effect.raceFirst(
      Effect.as(Effect.sleep(Math.max(0, left)), undefined),
      Session.takeControl(core, ["restart", "disable"])
    )
    if (early === "disable") toggle.disabled = true
    return early === undefined ? attempt : 0
  })

const afterSession = (
  core: Session.Core,
  policy: ServerSpec.RestartPolicy,
  toggle: Switch,
  outcome: Session.Outcome,
  scope: Scope.CloseableScope,
  failures: number
) =>
  Effect.gen(function*() {
    switch (outcome._tag) {
      case "Control": {
        if (outcome.control === "disable") toggle.disabled = true
        else yield* core.setState(ServerState.Pending())
        yield* Scope.close(scope, Exit.void)
        return 0
      }
      case "Idle": {
        yield* core.setState(ServerState.Idle({ since: yield* Clock.currentTimeMillis }))
        yield* Scope.close(scope, Exit.void)
        if ((yield* Session.takeControl(core, ["wake", "restart", "disable"])) === "disable") toggle.disabled = true
        return 0
      }
      case "Failed":
        return yield* afterFailure(core, policy, toggle, outcome, scope, failures)
    }
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
    while (true) {
      if (toggle.disabled) {
        yield* core.setLists(Catalog.emptyLists)
        yield* core.setState(ServerState.Disabled())
        yield* Session.takeControl(core, ["enable", "restart"])
        toggle.disabled = false
        failures = 0
      } else if (spec.problem !== undefined) {
        const error = McpError.make(spec.name, new McpError.ConfigReason({ message: spec.problem }))
        yield* core.setState(ServerState.Failed({ error, attempt: 1, retryAt: undefined }))
        if ((yield* Session.takeControl(core, ["disable", "restart"])) === "disable") toggle.disabled = true
      } else {
        yield* core.setState(ServerState.Connecting({ attempt: failures + 1 }))
        failures = yield* Effect.acquireUseRelease(
          Scope.make(),
          (scope) =>
            Effect.flatMap(Session.run(core, scope), (outcome) =>
              afterSession(core, policy, toggle, outcome, scope, failures)),
          (scope, exit) =>
            Scope.close(scope, exit)
        )
      }
    }
  }).pipe(
    Effect.onInterrupt(() => core.setState(ServerState.Stopped()))
  )
