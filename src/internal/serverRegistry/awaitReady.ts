/**
 * Waiting for a set of servers to be ready: at once a failure when one of them can no
 * longer become ready, and after the timeout a failure that names every laggard.
 *
 * @internal
 */
import type * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as McpError from "../../McpError.js"
import type { RegistryEvent } from "../../RegistryEvent.js"
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
 * Waits for `waiting`, the actors `target` chose. Their states are read as they are now and
 * again whenever a batch of the registry's events comes (`events`, subscribed before the
 * first read): one subscription for the whole fleet, not a stream per server. A dropped
 * event costs nothing, since every read looks at all those still awaited, and the change
 * that settles the last of them comes with an event of its own.
 */
export const awaitReady = (
  waiting: ReadonlyArray<ServerActor>,
  target: AwaitTarget,
  timeout: Duration.DurationInput,
  events: Effect.Effect<Queue.Dequeue<RegistryEvent>, never, Scope.Scope>
): Effect.Effect<void, McpError.McpError> =>
  Effect.flatMap(Effect.clock, (clock) => {
    // An Idle server (lazy, or stopped when quiet) is as ready as it gets until a call wakes it.
    const done = (state: ServerState) =>
      state._tag === "Ready" || state._tag === "Idle" ||
      (target === "settled" && (state._tag === "Failed" || isTerminal(state)))
    // Those still awaited; fails when one of them can no longer become ready.
    const left = (actors: ReadonlyArray<ServerActor>) =>
      Effect.suspend(() => {
        const still: Array<ServerActor> = []
        for (const actor of actors) {
          const state = actor.now()
          if (target !== "settled" && isTerminal(state)) {
            return Effect.fail(McpError.unavailable(actor.name, {
              state: state._tag,
              message: `cannot become ready: ${describeState(state, clock.unsafeCurrentTimeMillis())}`
            }))
          }
          if (!done(state)) still.push(actor)
        }
        return Effect.succeed(still)
      })
    const until = (queue: Queue.Dequeue<RegistryEvent>) => {
      const loop = (actors: ReadonlyArray<ServerActor>): Effect.Effect<void, McpError.McpError> =>
        actors.length === 0
          ? Effect.void
          : Queue.take(queue).pipe(
            Effect.zipRight(Queue.takeAll(queue)),
            Effect.zipRight(left(actors)),
            Effect.flatMap(loop)
          )
      return Effect.flatMap(left(waiting), loop)
    }
    return Effect.scoped(Effect.flatMap(events, until)).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => notReady(waiting.filter((actor) => !done(actor.now())), clock)
      })
    )
  })

// One laggard is that server's failure; several are the fleet's.
const notReady = (lagging: ReadonlyArray<ServerActor>, clock: Clock.Clock) => {
  const now = clock.unsafeCurrentTimeMillis()
  return McpError.unavailable(lagging.length === 1 ? lagging[0].name : undefined, {
    state: "NotReady",
    message: `not ready in time: ${
      lagging.map((actor) => `'${actor.name}' is ${describeState(actor.now(), now)}`).join("; ")
    }`
  })
}
