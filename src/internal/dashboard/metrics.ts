/**
 * Per-server call rate, error rate and p50/p99 latency over time, read from the client
 * operation histogram the fleet records (`mcp.client.operation.duration`, in seconds, each
 * point tagged `mcp_fleet.server.name`, `mcp.method.name` and, when it failed, `error.type`):
 * the same metric an OpenTelemetry exporter sends, read in process with `Metric.snapshot`.
 * Each sample is the difference from the one before, so a window shows that window alone.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricState from "effect/MetricState"
import * as Telemetry from "../../Telemetry.js"

// Telemetry.clientOperationDuration, read by its name across all its tags.
const OPERATION_DURATION = "mcp.client.operation.duration"
const SERVER_TAG = Telemetry.ServerName
const METHOD_TAG = Telemetry.Attributes.methodName
const ERROR_TAG = Telemetry.Attributes.errorType

/** One server's calls in one window. */
export interface Point {
  readonly at: number
  /** Calls a second. */
  readonly rate: number
  /** The share of calls that failed, 0 to 1. */
  readonly errors: number
  /** Latency quantiles in milliseconds, estimated from the histogram's buckets; null with no call. */
  readonly p50: number | null
  readonly p99: number | null
}

// A histogram's totals for one server: calls, failed calls, cumulative counts per bound.
interface Totals {
  count: number
  failed: number
  readonly buckets: Map<number, number>
}

const totalsNow = (metric: string) =>
  Effect.map(Metric.snapshot, (pairs) => {
    const byServer = new Map<string, Totals>()
    for (const pair of pairs) {
      if (pair.metricKey.name !== metric || !MetricState.isHistogramState(pair.metricState)) continue
      const tags = new Map(pair.metricKey.tags.map((tag) => [tag.key, tag.value]))
      const server = tags.get(SERVER_TAG)
      const method = tags.get(METHOD_TAG)
      if (server === undefined || (method !== undefined && method !== "tools/call")) continue
      const totals = byServer.get(server) ?? { count: 0, failed: 0, buckets: new Map() }
      const state = pair.metricState
      totals.count += state.count
      if (tags.has(ERROR_TAG)) totals.failed += state.count
      for (const [bound, count] of state.buckets) {
        totals.buckets.set(bound, (totals.buckets.get(bound) ?? 0) + count)
      }
      byServer.set(server, totals)
    }
    return byServer
  })

// The value under which `share` of the window's calls fall: the upper bound of that bucket,
// interpolated within it, in milliseconds.
const quantile = (bounds: ReadonlyArray<readonly [number, number]>, total: number, share: number): number | null => {
  if (total === 0) return null
  const target = share * total
  let lower = 0
  let below = 0
  for (const [bound, cumulative] of bounds) {
    if (cumulative >= target) {
      const within = cumulative - below
      const upper = Number.isFinite(bound) ? bound : lower
      const fraction = within === 0 ? 1 : (target - below) / within
      return (lower + (upper - lower) * fraction) * 1000
    }
    lower = Number.isFinite(bound) ? bound : lower
    below = cumulative
  }
  return lower * 1000
}

const window = (now: Totals, before: Totals | undefined, seconds: number, at: number): Point => {
  const count = now.count - (before?.count ?? 0)
  const failed = now.failed - (before?.failed ?? 0)
  const bounds = [...now.buckets.entries()].sort(([a], [b]) => a - b).map(([bound, cumulative]) =>
    [bound, cumulative - (before?.buckets.get(bound) ?? 0)] as const
  )
  return {
    at,
    rate: count / seconds,
    errors: count === 0 ? 0 : failed / count,
    p50: quantile(bounds, count, 0.5),
    p99: quantile(bounds, count, 0.99)
  }
}

// Telemetry.restarts, read by its name.
const RESTARTS = "mcp_fleet.server.restarts"

const restartTotals = Effect.map(Metric.snapshot, (pairs) => {
  const byServer = new Map<string, number>()
  for (const pair of pairs) {
    if (pair.metricKey.name !== RESTARTS || !MetricState.isCounterState(pair.metricState)) continue
    const server = pair.metricKey.tags.find((tag) => tag.key === SERVER_TAG)?.value
    if (server !== undefined) byServer.set(server, Number(pair.metricState.count))
  }
  return byServer
})

/**
 * Restarts per server since the dashboard began, counted by the fleet's own
 * `mcp_fleet.server.restarts` (one rule: `ServerState.isRestart`); the counter is the
 * process's, so the count at the start is taken off.
 */
export const restarts = Effect.map(
  restartTotals,
  (before) => Effect.map(restartTotals, (now) => (server: string) => (now.get(server) ?? 0) - (before.get(server) ?? 0))
)

/** Series per server, one point a sample, the last `keep` kept. */
export interface Series {
  readonly sample: Effect.Effect<void>
  readonly points: () => Readonly<Record<string, ReadonlyArray<Point>>>
}

export const make = (keep = 90) =>
  Effect.gen(function*() {
    const metric = OPERATION_DURATION
    let last = yield* totalsNow(metric)
    let lastAt = yield* Clock.currentTimeMillis
    const series = new Map<string, Array<Point>>()
    const sample = Effect.map(Effect.zip(totalsNow(metric), Clock.currentTimeMillis), ([now, at]) => {
      const seconds = Math.max((at - lastAt) / 1000, 0.001)
      for (const [server, totals] of now) {
        const points = series.get(server) ?? []
        points.push(window(totals, last.get(server), seconds, at))
        if (points.length > keep) points.shift()
        series.set(server, points)
      }
      last = now
      lastAt = at
    })
    return { sample, points: () => Object.fromEntries(series) } satisfies Series
  })
