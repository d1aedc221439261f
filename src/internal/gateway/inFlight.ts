/**
 * The requests of one session that are in flight at each server, by their contexts, so a
 * server's log messages while they run can go to the request that caused them, and its
 * requests to the client go through that request (on its stream, or, for a modern
 * request, as an input round). A modern request's (2026-07-28) tells when it has calls in
 * flight and when it has none again (`onBusy`): it is known to the relay and to the log
 * forwarding only meanwhile, instead of for its whole life.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as McpServer from "../../McpServer.js"

/** The requests in flight per server. */
export class InFlight {
  private readonly calls = new Map<string, Set<McpServer.RequestContext>>()

  /** `onBusy(true)` when a first call begins, `onBusy(false)` when the last one ends. */
  constructor(private readonly onBusy?: ((busy: boolean) => void) | undefined) {}

  /** Runs `effect` as a call to `server` made by the request of `ctx`. */
  track<A, E, R>(
    server: string,
    ctx: McpServer.RequestContext,
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> {
    return Effect.acquireUseRelease(
      Effect.sync(() => {
        if (this.calls.size === 0) this.onBusy?.(true)
        let set = this.calls.get(server)
        if (set === undefined) this.calls.set(server, set = new Set())
        set.add(ctx)
      }),
      () => effect,
      () =>
        Effect.sync(() => {
          const set = this.calls.get(server)
          set?.delete(ctx)
          if (set?.size === 0) this.calls.delete(server)
          if (this.calls.size === 0) this.onBusy?.(false)
        })
    )
  }

  /** The latest request still in flight at `server`, if any. */
  latest(server: string): McpServer.RequestContext | undefined {
    const set = this.calls.get(server)
    if (set === undefined) return undefined
    let last: McpServer.RequestContext | undefined
    for (const ctx of set) last = ctx
    return last
  }
}
