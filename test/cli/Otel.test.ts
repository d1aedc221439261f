// The CLI's reading of the OpenTelemetry environment: what it exports, where, how.
import { describe, expect, it } from "vitest"
import * as Otel from "../../src/cli/Otel.js"

describe("Otel.plan", () => {
  it("exports nothing unless an endpoint is named", () => {
    expect(Otel.plan({})).toMatchObject({ traces: undefined, metrics: undefined, serviceName: "mcp-fleet", notes: [] })
  })

  it("appends each signal's path to the base endpoint; a signal's own endpoint is used as given", () => {
    const plan = Otel.plan({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://metrics:9000/in",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc,x-team=fleet",
      OTEL_SERVICE_NAME: "gateway"
    })
    expect(plan.traces).toEqual({
      url: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      headers: { authorization: "Bearer abc", "x-team": "fleet" },
      intervalMs: undefined
    })
    expect(plan.metrics?.url).toBe("http://metrics:9000/in")
    expect(plan.serviceName).toBe("gateway")
  })

  it("honours none, http/json, the intervals and the service name in the resource attributes", () => {
    const plan = Otel.plan({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
      OTEL_TRACES_EXPORTER: "none",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_METRIC_EXPORT_INTERVAL: "250",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=from-resource,deployment.environment=dev"
    })
    expect(plan.traces).toBeUndefined()
    expect(plan.metrics).toMatchObject({ protocol: "http/json", intervalMs: 250 })
    expect(plan.serviceName).toBe("from-resource")
  })

  it("says what it cannot do (grpc, another exporter), and OTEL_SDK_DISABLED turns all off", () => {
    const grpc = Otel.plan({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })
    expect(grpc.traces).toBeUndefined()
    expect(grpc.notes[0]).toContain("grpc is not supported")
    expect(Otel.plan({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x", OTEL_METRICS_EXPORTER: "prometheus" }).notes[0])
      .toContain("OTEL_METRICS_EXPORTER=prometheus is not supported")
    expect(Otel.plan({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x", OTEL_SDK_DISABLED: "true" }))
      .toMatchObject({ traces: undefined, metrics: undefined })
  })
})
