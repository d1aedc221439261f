/**
 * The dashboard's call metrics: rate, error share and p50/p99 of each window, from the
 * differences between two snapshots of Telemetry's client operation histogram.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Metrics from "../../../src/internal/dashboard/metrics.js"
import * as Telemetry from "../../../src/Telemetry.js"

// One call's duration recorded as the fleet records it.
const record = (server: string, seconds: number, method = "tools/call", error?: string) =>
  Metric.update(
    Telemetry.clientOperationDuration.pipe(
      Metric.tagged(Telemetry.ServerName, server),
      Metric.tagged(Telemetry.Attributes.methodName, method),
      error === undefined ? (metric) => metric : Metric.tagged(Telemetry.Attributes.errorType, error)
    ),
    seconds
  )

describe("dashboard metrics", () => {
  it.effect("gives each window's calls, errors and quantiles, and only tools/call", () =>
    Effect.gen(function*() {
      const server = `metrics-test-${process.pid}-${Date.now()}`
      yield* record(server, 0.5)
      const series = yield* Metrics.make()
      // 90 calls of 15 ms, 10 failed calls of 3 s, and a list that is not a call.
      for (let i = 0; i < 90; i++) yield* record(server, 0.015)
      for (let i = 0; i < 10; i++) yield* record(server, 3, "tools/call", "timeout")
      yield* record(server, 1, "tools/list")
      yield* series.sample
      const [point] = series.points()[server]!
      expect(point!.errors).toBeCloseTo(0.1)
      // p50 within the 10–20 ms bucket; p99 within 2–5 s.
      expect(point!.p50).toBeGreaterThan(10)
      expect(point!.p50).toBeLessThanOrEqual(20)
      expect(point!.p99).toBeGreaterThan(2000)
      expect(point!.p99).toBeLessThanOrEqual(5000)
      yield* series.sample
      expect(series.points()[server]![1]).toMatchObject({ rate: 0, errors: 0, p50: null, p99: null })
    }))
})
