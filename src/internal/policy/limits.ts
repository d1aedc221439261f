/**
 * Limits at run time: a concurrency semaphore and a token bucket per server and per tool,
 * and a timeout per call (handed to the registry as the call's total limit, which it enforces
 * with the call's other limits: one place decides a call's deadlines). Pools live as long as the policy; a config edit that changes a
 * limit gives its pool a fresh semaphore or bucket, and calls already running keep theirs.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Catalog from "../../Catalog.js"
import * as McpError from "../../McpError.js"
import type * as Policy from "../../Policy.js"
import type { Resolved } from "./rules.js"

/** A token bucket: `calls` tokens at most, refilled continuously at `calls` per `perMs`. */
export interface Bucket {
  readonly calls: number
  readonly perMs: number
  tokens: number
  updated: number
}

/** The slots and the bucket of one server or one tool. */
export interface Pool {
  concurrency: { readonly max: number; readonly semaphore: Effect.Semaphore } | undefined
  rate: Bucket | undefined
}

/** Adds the tokens earned since the last refill, up to the bucket's size. */
export const refill = (bucket: Bucket, now: number): void => {
  bucket.tokens = Math.min(bucket.calls, bucket.tokens + (now - bucket.updated) * bucket.calls / bucket.perMs)
  bucket.updated = now
}

/** Runs calls under limits. */
export interface Limiter {
  readonly limited: <A>(
    entry: Catalog.ToolEntry,
    resolved: Resolved,
    call: Effect.Effect<A, McpError.McpError>
  ) => Effect.Effect<A, McpError.McpError>
}

/**
 * The call's options with the policy's `timeout` as its total limit, or the caller's own when
 * that is shorter: the registry counts it from the call's start, the wait for the server to
 * be ready included, and fails the call with a Timeout reason of kind `total`.
 */
export const withTimeout = <O extends { readonly maxTotalTimeout?: Duration.DurationInput | undefined }>(
  options: O | undefined,
  timeout: Duration.DurationInput | undefined
): O | { readonly maxTotalTimeout: Duration.DurationInput } | undefined => {
  if (timeout === undefined) return options
  const own = options?.maxTotalTimeout
  const shorter = own !== undefined && Duration.lessThan(Duration.decode(own), Duration.decode(timeout)) ? own : timeout
  return { ...options, maxTotalTimeout: shorter }
}

/** A limiter with pools of its own. */
export const makeLimiter = (): Limiter => {
  const pools = new Map<string, Pool>()

  // The pool of `key`, brought in line with `limits`.
  const poolOf = (key: string, limits: Policy.Limits): Pool => {
    let pool = pools.get(key)
    if (pool === undefined) {
      pool = { concurrency: undefined, rate: undefined }
      pools.set(key, pool)
    }
    const max = limits.maxConcurrent
    if (max === undefined) pool.concurrency = undefined
    else if (pool.concurrency?.max !== max) pool.concurrency = { max, semaphore: Effect.unsafeMakeSemaphore(max) }
    const rate = limits.rateLimit
    if (rate === undefined) pool.rate = undefined
    else {
      const perMs = Duration.toMillis(Duration.decode(rate.per))
      if (pool.rate?.calls !== rate.calls || pool.rate.perMs !== perMs) {
        pool.rate = { calls: rate.calls, perMs, tokens: rate.calls, updated: -Infinity }
      }
    }
    return pool
  }

  // Takes a token from every bucket, or from none when one is empty.
  const takeTokens = (entry: Catalog.ToolEntry, scoped: ReadonlyArray<readonly [Pool, string]>) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      for (const [pool, what] of scoped) {
        const bucket = pool.rate
        if (bucket === undefined) continue
        refill(bucket, now)
        if (bucket.tokens < 1) {
          const wait = Math.ceil((1 - bucket.tokens) * bucket.perMs / bucket.calls)
          return Effect.fail(McpError.limit(entry.server, {
            what: `calls per ${bucket.perMs} ms to ${what} (the next is allowed in ${wait} ms)`,
            limit: bucket.calls
          }))
        }
      }
      for (const [pool] of scoped) if (pool.rate !== undefined) pool.rate.tokens -= 1
      return Effect.void
    })

  const limited: Limiter["limited"] = (entry, resolved, call) =>
    Effect.suspend(() => {
      const scoped = [
        [poolOf(`${entry.server}\u0000${entry.tool.name}`, resolved.tool), `tool '${entry.tool.name}'`],
        [poolOf(entry.server, resolved.server), "the server"]
      ] as const
      // Slots are always taken tool first, then server, so two calls never wait on each other.
      const slotted = scoped.reduceRight(
        (inner, [pool]) => pool.concurrency === undefined ? inner : pool.concurrency.semaphore.withPermits(1)(inner),
        call
      )
      return Effect.zipRight(takeTokens(entry, scoped), slotted)
    })

  return { limited }
}
