/**
 * Waiting for a set of servers to be ready: at once a failure when one of them can no
 * longer become ready, and after the timeout a failure that names every laggard.
 *
 * @internal
 */
import type * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as McpError from "../../McpError.js"
import type { AwaitTarget } from "../../ServerRegistry.js"
import { describe as describeState, isTerminal, type ServerState } from "../../ServerState.js"
import type { ServerActor } from "./serverActor.js"

/**
 * Whether `target` waits for `actor`.
 */
export const isTarget = (target: AwaitTarget, actor: ServerActor): boolean =>
  target === "required"
    ? actor.spec.required === true
    : target === "settled"
    ? actor.spec.disabled !== true
    : target.includes(actor.name)

/**
 * Waits for `waiting`, the actors `target` chose.
 */
export const awaitReady = (
  waiting: ReadonlyArray<ServerActor>,
  target: AwaitTarget,
  timeout: Duration.DurationInput
): Effect.Effect<void, McpError.McpError> =>
  Effect.flatMap(Effect.clock, (clock) => {
    // An Idle server (lazy, or stopped when quiet) is as ready as it gets until a call wakes it.
    const done = (state: ServerState) =>
      state._tag === "Ready" || state._tag === "Idle" ||
      (target === "settled" && (state._tag === "Failed" || isTerminal(state)))
    const one = (actor: ServerActor) =>
      actor.state.changes.pipe(
        Stream.mapEffect((state) =>
          target !== "settled" && isTerminal(state)
            ? Effect.fail(McpError.unavailable(actor.name, {
              state: state._tag,
              message: `cannot become ready: ${describeState(state, clock.unsafeCurrentTimeMillis())}`
            }))
            : Effect.succeed(done(state))
        ),
        Stream.takeUntil((ready) => ready),
        Stream.runDrain
      )
    return Effect.forEach(waiting, one, { concurrency: "unbounded", discard: true }).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => notReady(waiting.filter((actor) => !done(actor.status().state)), clock)
      })
    )
  })

// One laggard is that server's failure; several are the fleet's.
const notReady = (lagging: ReadonlyArray<ServerActor>, clock: Clock.Clock) => {
  const now = clock.unsafeCurrentTimeMillis()
  return McpError.unavailable(lagging.length === 1 ? lagging[0].name : undefined, {
    state: "NotReady",
    message: `not ready in time: ${
      lagging.map((actor) => `'${actor.name}' is ${describeState(actor.status().state, now)}`).join("; ")
    }`
  })
}
