/**
 * Limits alone: the token bucket on the TestClock, concurrency slots, the timeout, and
 * pools that follow a changed limit.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import type * as Catalog from "../../../src/Catalog.js"
import { type Bucket, makeLimiter, refill, withTimeout } from "../../../src/internal/policy/limits.js"
import type { Resolved } from "../../../src/internal/policy/rules.js"
import type * as Policy from "../../../src/Policy.js"

const entry = {
  name: "mcp__a__t",
  server: "a",
  tool: { name: "t", inputSchema: { type: "object" } }
} as unknown as Catalog.ToolEntry

const only = (limits: Partial<Resolved>): Resolved => ({ call: {}, server: {}, tool: {}, ...limits })
const server = (limits: Policy.Limits) => only({ server: limits })

describe("limits", () => {
  it("refill: tokens come back continuously, up to the bucket's size", () => {
    const bucket: Bucket = { calls: 2, perMs: 1000, tokens: 0, updated: 0 }
    refill(bucket, 250)
    expect(bucket.tokens).toBe(0.5)
    refill(bucket, 10_000)
    expect(bucket.tokens).toBe(2)
  })

  it.effect("rate: a call over the rate fails at once saying when the next is allowed", () =>
    Effect.gen(function*() {
      const { limited } = makeLimiter()
      const limits = server({ rateLimit: { calls: 2, per: "1 second" } })
      yield* limited(entry, limits, Effect.void)
      yield* limited(entry, limits, Effect.void)
      const error = yield* Effect.flip(limited(entry, limits, Effect.void))
      expect(error.reason).toMatchObject({
        _tag: "Limit",
        what: "calls per 1000 ms to the server (the next is allowed in 500 ms)",
        limit: 2
      })
      yield* TestClock.adjust("500 millis")
      yield* limited(entry, limits, Effect.void)
    }))

  it.effect("rate: a tool over its own rate takes no token from the server", () =>
    Effect.gen(function*() {
      const { limited } = makeLimiter()
      const limits = only({
        tool: { rateLimit: { calls: 1, per: 1000 } },
        server: { rateLimit: { calls: 2, per: 1000 } }
      })
      yield* limited(entry, limits, Effect.void)
      const error = yield* Effect.flip(limited(entry, limits, Effect.void))
      expect((error.reason as { what: string }).what).toContain("to tool 't'")
      // The server's bucket still holds its second token for another tool.
      const other = { ...entry, tool: { ...entry.tool, name: "u" } } as Catalog.ToolEntry
      yield* limited(other, limits, Effect.void)
    }))

  it.effect("concurrency: the next call waits for a free slot; a changed limit gets fresh slots", () =>
    Effect.gen(function*() {
      const { limited } = makeLimiter()
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.fork(limited(entry, server({ maxConcurrent: 1 }), Deferred.await(release)))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(limited(entry, server({ maxConcurrent: 1 }), Effect.succeed("second")))
      yield* Effect.yieldNow()
      expect(second.unsafePoll()).toBeNull()
      // A config edit to two slots: a new call does not wait for the old pool.
      expect(yield* limited(entry, server({ maxConcurrent: 2 }), Effect.succeed("third"))).toBe("third")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      expect(yield* Fiber.join(second)).toBe("second")
    }))

  it("timeout: the policy's timeout becomes the call's total limit, unless the caller's own is shorter", () => {
    expect(withTimeout(undefined, 50)).toEqual({ maxTotalTimeout: 50 })
    const idle: { readonly timeout: number; readonly maxTotalTimeout?: number } = { timeout: 10 }
    expect(withTimeout(idle, 50)).toEqual({ timeout: 10, maxTotalTimeout: 50 })
    expect(withTimeout({ maxTotalTimeout: 20 }, 50)).toEqual({ maxTotalTimeout: 20 })
    expect(withTimeout({ maxTotalTimeout: 80 }, 50)).toEqual({ maxTotalTimeout: 50 })
    const options = { maxTotalTimeout: 80 }
    expect(withTimeout(options, undefined)).toBe(options)
  })
})
