// The MCP conventions in one process: spans on both sides of a Memory pair, the trace context
// carried in `_meta`, the duration points, and what a served request passes on without a tracer.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as McpClient from "../src/McpClient.js"
import * as McpServer from "../src/McpServer.js"
import * as Telemetry from "../src/Telemetry.js"
import { text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { recordingTracer } from "./support/tracing.js"

// What a tool saw of the span it ran in, and the `_meta` it was sent.
const seen: Array<{ readonly traceId: string | undefined; readonly meta: unknown }> = []
const probe = McpServer.tool({
  name: "probe",
  description: "Tells the span it runs in",
  parameters: Schema.Struct({}),
  handler: (_, ctx) =>
    Effect.map(Effect.option(Effect.currentParentSpan), (span) => {
      seen.push({ traceId: Option.getOrUndefined(span)?.traceId, meta: ctx.request.params?._meta })
      return text("ok")
    })
})
const failing = McpServer.tool({
  name: "failing",
  description: "Reports an error",
  parameters: Schema.Struct({}),
  handler: () => Effect.succeed({ content: [{ type: "text", text: "no" }], isError: true })
})

const connect = Effect.gen(function*() {
  const server = yield* McpServer.fromItems({ serverInfo: { name: "probed", version: "1" }, tools: [probe, failing] })
  const { transport } = yield* McpServer.connectMemory(server, { name: "probed" })
  return yield* McpClient.make({ protocolVersion: "2025-11-25" }).pipe(Effect.provideService(Transport, transport))
})

// The count of `metric`'s points tagged with all of `tags`.
const countOf = (name: string, tags: Record<string, string>) =>
  Effect.map(Metric.snapshot, (pairs) => {
    let count = 0
    for (const { metricKey, metricState } of pairs) {
      if (metricKey.name !== name || !MetricState.isHistogramState(metricState)) continue
      const labels = new Map(metricKey.tags.map((label) => [label.key, label.value]))
      if (Object.entries(tags).every(([key, value]) => labels.get(key) === value)) count += metricState.count
    }
    return count
  })

describe("Telemetry", () => {
  it.scoped("a CLIENT span and the SERVER span it parents, named {method} {target}, context in _meta", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* recordingTracer
      const client = yield* connect.pipe(Effect.withTracer(tracer))
      yield* client.callTool("probe", {}).pipe(Effect.withTracer(tracer))
      const sent = spans.find((s) => s.name === "tools/call probe" && s.kind === "client")!
      const served = spans.find((s) => s.name === "tools/call probe" && s.kind === "server")!
      expect(Option.getOrUndefined(served.span.parent)?.spanId).toBe(sent.span.spanId)
      expect(served.span.traceId).toBe(sent.span.traceId)
      expect(Object.fromEntries(sent.span.attributes)).toMatchObject({
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "probe",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": "2025-11-25",
        "mcp_fleet.server.name": "probed"
      })
      expect(Object.fromEntries(served.span.attributes)).toMatchObject({
        "mcp.method.name": "tools/call",
        "mcp_fleet.server.name": "probed",
        "mcp.protocol.version": "2025-11-25"
      })
      expect(served.span.attributes.get("jsonrpc.request.id")).toBe(sent.span.attributes.get("jsonrpc.request.id"))
      expect(seen.at(-1)?.meta).toMatchObject({
        traceparent: `00-${sent.span.traceId}-${sent.span.spanId}-01`
      })
    }))

  it.scoped("a tool's error result is error.type tool_error, on the span and the duration point", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* recordingTracer
      const client = yield* connect.pipe(Effect.withTracer(tracer))
      const tags = { "mcp.method.name": "tools/call", "gen_ai.tool.name": "failing", "error.type": "tool_error" }
      const before = yield* countOf("mcp.client.operation.duration", tags)
      const served = yield* countOf("mcp.server.operation.duration", tags)
      yield* client.callTool("failing", {}).pipe(Effect.withTracer(tracer))
      expect(yield* countOf("mcp.client.operation.duration", tags)).toBe(before + 1)
      expect(yield* countOf("mcp.server.operation.duration", tags)).toBe(served + 1)
      const sent = spans.find((s) => s.name === "tools/call failing" && s.kind === "client")!
      expect(sent.span.attributes.get("error.type")).toBe("tool_error")
      expect(sent.span.status._tag === "Ended" && sent.span.status.exit._tag).toBe("Failure")
    }))

  it.scoped("without a tracer, a served request runs under the traceparent it brought", () =>
    Effect.gen(function*() {
      const client = yield* connect
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
      const meta = { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, tracestate: "rojo=1", baggage: "user=alice" }
      yield* client.request("tools/call", { name: "probe", arguments: {}, _meta: meta }, Schema.Unknown)
      expect(seen.at(-1)).toEqual({ traceId, meta })
    }))

  it("names the histograms as the conventions do, in seconds", () => {
    const snapshot = Effect.runSync(Metric.snapshot).map((pair) => pair.metricKey)
    const units = new Map(snapshot.map((key) => [key.name, key.tags.find((tag) => tag.key === "unit")?.value]))
    expect(units.get("mcp.client.operation.duration")).toBe("s")
    expect(units.get("mcp.server.operation.duration")).toBe("s")
    expect(Telemetry.ServerName).toBe("mcp_fleet.server.name")
  })
})
