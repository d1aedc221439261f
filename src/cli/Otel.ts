/**
 * The CLI's telemetry from the standard OpenTelemetry environment: spans and metrics exported
 * by OTLP over HTTP with `@effect/opentelemetry`'s own exporters (`OtlpTracer`,
 * `OtlpMetrics`: no OpenTelemetry SDK loaded), in JSON or protobuf.
 *
 * Nothing is exported unless an endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the
 * per-signal `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `..._METRICS_ENDPOINT`, used as given):
 * a command never reaches for a collector nobody named. Also read: `OTEL_SDK_DISABLED`,
 * `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` (`none` turns a signal off; `otlp`, the
 * default), `OTEL_EXPORTER_OTLP_PROTOCOL` and its per-signal forms (`http/protobuf`, the
 * default, or `http/json`; `grpc` is refused with a note), `OTEL_EXPORTER_OTLP_HEADERS` and
 * its per-signal forms (`k=v,...`, never printed), `OTEL_SERVICE_NAME` (default `mcp-fleet`),
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_SCHEDULE_DELAY` and `OTEL_METRIC_EXPORT_INTERVAL`
 * (milliseconds).
 *
 * @since 0.1.0
 */
import type * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import type { HttpClient } from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { VERSION } from "./version.js"

/** The environment read, by variable name. */
export type Environment = Readonly<Record<string, string | undefined>>

/** One signal's export: where, how, with which headers. */
export interface Export {
  readonly url: string
  readonly protocol: "http/json" | "http/protobuf"
  readonly headers: Readonly<Record<string, string>>
  readonly intervalMs: number | undefined
}

/** What the environment asks for: each signal's export, or none; notes for the person. */
export interface Plan {
  readonly traces: Export | undefined
  readonly metrics: Export | undefined
  readonly serviceName: string
  readonly notes: ReadonlyArray<string>
}

// `k=v,k2=v2`, values percent-encoded (the OTLP exporter spec's format).
const parsePairs = (text: string | undefined): Record<string, string> => {
  const pairs: Record<string, string> = {}
  for (const part of (text ?? "").split(",")) {
    const at = part.indexOf("=")
    if (at <= 0) continue
    const key = part.slice(0, at).trim()
    try {
      pairs[key] = decodeURIComponent(part.slice(at + 1).trim())
    } catch {
      pairs[key] = part.slice(at + 1).trim()
    }
  }
  return pairs
}

const milliseconds = (text: string | undefined): number | undefined => {
  const value = text === undefined ? NaN : Number(text)
  return Number.isFinite(value) && value > 0 ? value : undefined
}

const signal = (
  env: Environment,
  name: "TRACES" | "METRICS",
  path: string,
  interval: string,
  notes: Array<string>
): Export | undefined => {
  const exporter = (env[`OTEL_${name}_EXPORTER`] ?? "otlp").trim().toLowerCase()
  if (exporter === "none") return undefined
  if (exporter !== "otlp") {
    notes.push(`OTEL_${name}_EXPORTER=${exporter} is not supported (otlp or none): ${name.toLowerCase()} not exported`)
    return undefined
  }
  const own = env[`OTEL_EXPORTER_OTLP_${name}_ENDPOINT`]
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT
  const url = own !== undefined && own !== ""
    ? own
    : base !== undefined && base !== ""
    ? `${base.replace(/\/+$/, "")}${path}`
    : undefined
  if (url === undefined) return undefined
  const protocol = (env[`OTEL_EXPORTER_OTLP_${name}_PROTOCOL`] ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf")
    .trim()
    .toLowerCase()
  if (protocol !== "http/json" && protocol !== "http/protobuf") {
    notes.push(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported (http/protobuf or http/json): ${name.toLowerCase()} not exported`
    )
    return undefined
  }
  return {
    url,
    protocol,
    headers: {
      ...parsePairs(env.OTEL_EXPORTER_OTLP_HEADERS),
      ...parsePairs(env[`OTEL_EXPORTER_OTLP_${name}_HEADERS`])
    },
    intervalMs: milliseconds(env[interval])
  }
}

/** What `env` asks the CLI to export. */
export const plan = (env: Environment): Plan => {
  const notes: Array<string> = []
  const off = (env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() === "true"
  const resource = parsePairs(env.OTEL_RESOURCE_ATTRIBUTES)
  return {
    traces: off ? undefined : signal(env, "TRACES", "/v1/traces", "OTEL_BSP_SCHEDULE_DELAY", notes),
    metrics: off ? undefined : signal(env, "METRICS", "/v1/metrics", "OTEL_METRIC_EXPORT_INTERVAL", notes),
    serviceName: env.OTEL_SERVICE_NAME || resource["service.name"] || "mcp-fleet",
    notes
  }
}

// The exporters' code is loaded only when an endpoint is named: most commands export nothing.
const exporters = (plan: { readonly traces?: Export | undefined; readonly metrics?: Export | undefined }, resource: {
  readonly serviceName: string
  readonly serviceVersion: string
}): Layer.Layer<never> =>
  Layer.unwrapEffect(Effect.promise(async () => {
    const [OtlpMetrics, OtlpSerialization, OtlpTracer, FetchHttpClient] = await Promise.all([
      import("@effect/opentelemetry/OtlpMetrics"),
      import("@effect/opentelemetry/OtlpSerialization"),
      import("@effect/opentelemetry/OtlpTracer"),
      import("@effect/platform/FetchHttpClient")
    ])
    const options = (signal: Export) => ({
      url: signal.url,
      resource,
      headers: signal.headers,
      shutdownTimeout: "3 seconds" as const
    })
    const provided = (
      layer: Layer.Layer<never, never, OtlpSerialization.OtlpSerialization | HttpClient>,
      signal: Export
    ) =>
      layer.pipe(
        Layer.provide(signal.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
        Layer.provide(FetchHttpClient.layer)
      )
    const { metrics, traces } = plan
    return Layer.mergeAll(
      traces === undefined
        ? Layer.empty
        : provided(OtlpTracer.layer({ ...options(traces), exportInterval: traces.intervalMs ?? 5000 }), traces),
      metrics === undefined
        ? Layer.empty
        : provided(OtlpMetrics.layer({ ...options(metrics), exportInterval: metrics.intervalMs ?? 60_000 }), metrics)
    )
  }))

/**
 * The exporters `env` asks for, as a Layer that installs the tracer and exports the metrics
 * until its Scope closes (then it sends what is left, within a few seconds). Empty when
 * nothing is asked. Notes about what it cannot do go to stderr, once.
 */
export const layer = (env: Environment = process.env): Layer.Layer<never> => {
  const { metrics, notes, serviceName, traces } = plan(env)
  const told = notes.length === 0
    ? Layer.empty
    : Layer.effectDiscard(Effect.sync(() => process.stderr.write(notes.map((note) => `mcp-fleet: ${note}\n`).join(""))))
  return traces === undefined && metrics === undefined
    ? told
    : Layer.merge(told, exporters({ traces, metrics }, { serviceName, serviceVersion: VERSION }))
}
