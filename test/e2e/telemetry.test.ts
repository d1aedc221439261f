// Telemetry end to end by the OpenTelemetry MCP conventions: a client in this process (its
// spans exported by @effect/opentelemetry) calls the gateway (`mcp-fleet serve --stdio`, a
// child process exporting from the OpenTelemetry environment), which calls a fronted stdio
// server (test/fixtures/traced-server.ts, exporting the same way). One OTLP/HTTP receiver on
// loopback gets everything: one trace across three processes, its spans named and attributed
// by the conventions, and the metric points.
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as McpClient from "../../src/McpClient.js"
import * as Stdio from "../../src/Stdio.js"
import type { Transport } from "../../src/Transport.js"
import { bundled } from "../support/bundle.js"
import { CLI, cliEnv, removeTempDirs } from "../support/cli.js"
import { eventually, tempConfig } from "../support/gateway.js"
import { hangGuard } from "../support/guard.js"
import { type Point, type Receiver, receiver, type Span } from "../support/otlp.js"

// The fronted server bundled (support/bundle.ts): under tsx each start cost seconds of CPU.
const FIXTURE = await bundled("test/fixtures/traced-server.ts")

const SERVER = 2
const CLIENT = 3

// The environment of a process that exports to `url` quickly, in JSON.
const otelEnv = (url: string, service: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: url,
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  OTEL_SERVICE_NAME: service,
  OTEL_BSP_SCHEDULE_DELAY: "50",
  OTEL_METRIC_EXPORT_INTERVAL: "100"
})

describe("telemetry across the gateway (OTLP/HTTP to a receiver on loopback)", () => {
  let otlp: Receiver
  let config: ReturnType<typeof tempConfig>
  let scope: Scope.CloseableScope
  let client: McpClient.McpClient
  let run: <A, E>(effect: Effect.Effect<A, E, Transport>) => Promise<A>

  beforeAll(async () => {
    otlp = await receiver()
    config = tempConfig({
      traced: {
        command: process.execPath,
        args: [FIXTURE],
        env: otelEnv(otlp.url, "fronted")
      }
    })
    const tracer = OtlpTracer.layer({
      url: `${otlp.url}/v1/traces`,
      resource: { serviceName: "test" },
      exportInterval: "50 millis"
    }).pipe(
      Layer.provide(OtlpSerialization.layerJson),
      Layer.provide(FetchHttpClient.layer)
    )
    const transport = Stdio.layer({
      name: "gateway",
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio", "--config", config.file],
      env: { ...cliEnv(), ...otelEnv(otlp.url, "gateway"), OTEL_SERVICE_NAME: "gateway" },
      inheritEnv: true
    })
    scope = Effect.runSync(Scope.make())
    const runtime = await Effect.runPromise(
      Layer.toRuntime(Layer.mergeAll(tracer, transport, Layer.setTracerEnabled(true))).pipe(Scope.extend(scope))
    )
    run = (effect) => Effect.runPromise(Effect.provide(effect, runtime))
    client = await run(
      McpClient.make({ clientInfo: { name: "telemetry-test", version: "1.0.0" } }).pipe(Scope.extend(scope))
    )
    // The fronted server starts beside the gateway: its tools come once it is ready.
    const names = await eventually(
      () => run(Effect.map(client.listTools(), (tools) => tools.map((tool) => tool.name))),
      (names) => names.includes("mcp__traced__broken"),
      hangGuard(60_000)
    )
    expect(names).toContain("mcp__traced__echo")
  }, hangGuard(90_000))

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await otlp?.close()
    config?.remove()
    removeTempDirs()
  })

  const spansOf = (trace: string) => otlp.spans.filter((span) => span.traceId === trace)
  const named = (spans: ReadonlyArray<Span>, name: string, service: string, kind: number) =>
    spans.find((span) => span.name === name && span.service === service && span.kind === kind)

  it("one trace runs client → gateway → fronted server, each span a child of the one before", async () => {
    const result = await run(
      client.callTool("mcp__traced__echo", { text: "hi" }).pipe(Effect.withSpan("test"))
    )
    expect(result.content).toEqual([{ type: "text", text: "hi" }])
    const root = () => otlp.spans.find((span) => span.name === "test")
    await otlp.until(() => {
      const trace = root()?.traceId
      return trace !== undefined && named(spansOf(trace), "tools/call echo", "fronted", SERVER) !== undefined &&
        named(spansOf(trace), "tools/call echo", "gateway", CLIENT) !== undefined &&
        named(spansOf(trace), "tools/call mcp__traced__echo", "gateway", SERVER) !== undefined
    })
    const spans = spansOf(root()!.traceId)
    const sent = named(spans, "tools/call mcp__traced__echo", "test", CLIENT)!
    const gatewayServed = named(spans, "tools/call mcp__traced__echo", "gateway", SERVER)!
    const gatewaySent = named(spans, "tools/call echo", "gateway", CLIENT)!
    const fronted = named(spans, "tools/call echo", "fronted", SERVER)!
    // Between a CLIENT span and the span it was sent in may come a library's own (`McpClient.callTool`,
    // the fleet's routing and policy in the gateway).
    const ancestors = (span: Span): Array<string> => {
      const parent = spans.find((candidate) => candidate.spanId === span.parentSpanId)
      return parent === undefined ? [] : [parent.spanId, ...ancestors(parent)]
    }
    expect(ancestors(sent)).toContain(root()!.spanId)
    expect(gatewayServed.parentSpanId).toBe(sent.spanId)
    expect(ancestors(gatewaySent)).toContain(gatewayServed.spanId)
    expect(fronted.parentSpanId).toBe(gatewaySent.spanId)

    expect(sent.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "mcp__traced__echo",
      "gen_ai.operation.name": "execute_tool",
      "network.transport": "pipe",
      "mcp_fleet.server.name": "gateway"
    })
    expect(typeof sent.attributes["jsonrpc.request.id"]).toBe("string")
    expect(typeof sent.attributes["mcp.protocol.version"]).toBe("string")
    expect(gatewaySent.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "network.transport": "pipe",
      "mcp_fleet.server.name": "traced"
    })
    expect(fronted.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "mcp_fleet.server.name": "traced",
      "network.transport": "pipe"
    })
    expect(fronted.attributes["jsonrpc.request.id"]).toBe(gatewaySent.attributes["jsonrpc.request.id"])
  }, hangGuard(60_000))

  it("a tool's error result is error.type tool_error; a JSON-RPC error names its code", async () => {
    await run(client.callTool("mcp__traced__broken", {}).pipe(Effect.withSpan("broken")))
    const unknown = await run(
      Effect.either(client.request("tools/call", { name: "nope", arguments: {} }, Schema.Unknown))
    )
    expect(unknown._tag).toBe("Left")
    await otlp.until(() =>
      otlp.spans.some((span) => span.name === "tools/call broken" && span.service === "fronted") &&
      otlp.spans.some((span) => span.name === "tools/call nope" && span.service === "gateway")
    )
    const broken = otlp.spans.find((span) => span.name === "tools/call broken" && span.service === "fronted")!
    expect(broken.attributes["error.type"]).toBe("tool_error")
    expect(broken.status.code).toBe(2)
    const nope = otlp.spans.find((span) => span.name === "tools/call nope" && span.service === "gateway")!
    expect(nope.kind).toBe(SERVER)
    expect(nope.attributes["error.type"]).toBe("-32602")
    expect(nope.attributes["rpc.response.status_code"]).toBe("-32602")
  }, hangGuard(60_000))

  it("exports the duration histograms and the fleet's gauges, tagged by method and server", async () => {
    const point = (name: string, service: string, match: (point: Point) => boolean) =>
      otlp.points.find((p) => p.name === name && p.service === service && match(p))
    const tagged = (tool: string) => (p: Point) =>
      p.attributes["mcp.method.name"] === "tools/call" && p.attributes["gen_ai.tool.name"] === tool
    await otlp.until(() =>
      point("mcp.client.operation.duration", "gateway", tagged("broken")) !== undefined &&
      point("mcp.server.operation.duration", "fronted", tagged("broken")) !== undefined
    )
    const sent = point("mcp.client.operation.duration", "gateway", tagged("echo"))!
    expect(sent.unit).toBe("s")
    expect(sent.value).toBeGreaterThanOrEqual(1)
    expect(sent.attributes["mcp_fleet.server.name"]).toBe("traced")
    expect(sent.attributes["error.type"]).toBeUndefined()
    const failed = point("mcp.client.operation.duration", "gateway", tagged("broken"))!
    expect(failed.attributes["error.type"]).toBe("tool_error")
    expect(point("mcp.server.operation.duration", "gateway", tagged("mcp__traced__echo"))).toBeDefined()
    expect(point("mcp_fleet.servers", "gateway", (p) => p.attributes["mcp_fleet.server.state"] === "Ready")?.value)
      .toBe(1)
    expect(point("mcp_fleet.calls.in_flight", "gateway", (p) => p.attributes["mcp_fleet.server.name"] === "traced"))
      .toBeDefined()
  }, hangGuard(60_000))
})
