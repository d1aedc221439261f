/**
 * The requests of one session that are in flight at each server, so a server's log
 * messages while they run can go to the request that caused them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as JsonRpc from "../../JsonRpc.js"

/** The requests in flight per server. */
export class InFlight {
  private readonly calls = new Map<string, Set<JsonRpc.RequestId>>()

  /** Runs `effect` as a call to `server` made by request `id`. */
  track<A, E, R>(server: string, id: JsonRpc.RequestId, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.acquireUseRelease(
      Effect.sync(() => {
        let set = this.calls.get(server)
        if (set === undefined) this.calls.set(server, set = new Set())
        set.add(id)
      }),
      () => effect,
      () =>
        Effect.sync(() => {
          const set = this.calls.get(server)
          set?.delete(id)
          if (set?.size === 0) this.calls.delete(server)
        })
    )
  }

  /** The latest request still in flight at `server`, if any. */
  latest(server: string): JsonRpc.RequestId | undefined {
    const set = this.calls.get(server)
    if (set === undefined) return undefined
    let last: JsonRpc.RequestId | undefined
    for (const id of set) last = id
    return last
  }
}
