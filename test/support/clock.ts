// Driving polls on the TestClock: time moves only when a poll is known to be asleep, so each
// step is exactly one fetch.
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"

// Waits until fibers sleep until each of `times` on the TestClock. A poll started at T with
// interval I sleeps until T + I, and after its k-th fetch until T + (k + 1) I; other
// fibers (a Peer's timer) sleep until other times.
const asleep = (...times: ReadonlyArray<number>) =>
  Effect.zipLeft(TestClock.sleeps(), Effect.yieldNow()).pipe(
    Effect.repeat({ until: (sleeps) => times.every((time) => Chunk.some(sleeps, (at) => at === time)) })
  )

// The clock of a poll about to start: `tick` lets it fetch once and waits until it sleeps again.
export const pollClock = (intervalMs: number) =>
  Effect.map(TestClock.currentTimeMillis, (start) => {
    let next = start + intervalMs
    return {
      tick: Effect.gen(function*() {
        yield* asleep(next)
        yield* TestClock.adjust(intervalMs)
        next += intervalMs
        yield* asleep(next)
      })
    }
  })
