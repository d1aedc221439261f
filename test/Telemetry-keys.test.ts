// The keys Telemetry's metrics register: one per tag set, its tags the `unit` then the point's,
// with the metric's description and kind (incremental for the counters), as an exporter reads
// them from `Metric.snapshot`; and the revision probe a 2025 server refuses, which is no point.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type * as MetricKey from "effect/MetricKey"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as McpClient from "../src/McpClient.js"
import * as Telemetry from "../src/Telemetry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { Transport } from "../src/Transport.js"

// The registered keys of `name` whose tags include `label`: a value no other test uses.
const keysOf = (name: string, label: MetricLabel.MetricLabel) =>
  Effect.map(
    Metric.snapshot,
    (pairs): Array<MetricKey.MetricKey.Untyped> =>
      pairs.filter((pair) =>
        pair.metricKey.name === name &&
        pair.metricKey.tags.some((tag) => tag.key === label.key && tag.value === label.value)
      ).map((pair) => pair.metricKey)
  )

const tagsOf = (key: MetricKey.MetricKey.Untyped) => key.tags.map((tag) => [tag.key, tag.value])

describe("Telemetry's metric keys", () => {
  it.effect("a histogram's tag set: one key, the unit first, the description kept", () =>
    Effect.gen(function*() {
      const server = MetricLabel.make(Telemetry.ServerName, "keys-test-histogram")
      const tags = [MetricLabel.make(Telemetry.Attributes.methodName, "tools/call"), server]
      Telemetry.clientOperationDuration.unsafeUpdate(0.5, tags)
      Telemetry.clientOperationDuration.unsafeUpdate(1.5, tags)
      // The same values in another array: the same key, found by equality.
      Telemetry.clientOperationDuration.unsafeUpdate(2.5, [...tags])
      const keys = yield* keysOf("mcp.client.operation.duration", server)
      expect(keys).toHaveLength(1)
      expect(tagsOf(keys[0]!)).toEqual([
        ["unit", "s"],
        [Telemetry.Attributes.methodName, "tools/call"],
        [Telemetry.ServerName, "keys-test-histogram"]
      ])
      expect(Option.getOrUndefined(keys[0]!.description)).toMatch(/^The duration of the MCP request/)
      const state = yield* Metric.value(Metric.taggedWithLabels(Telemetry.clientOperationDuration, tags))
      expect(state.count).toBe(3)
      expect(state.sum).toBe(4.5)
    }))

  it.effect("a counter's key is incremental; a gauge's untagged points have the unit alone", () =>
    Effect.gen(function*() {
      const server = MetricLabel.make(Telemetry.ServerName, "keys-test-counter")
      Telemetry.restarts.unsafeUpdate(1, [server])
      Telemetry.restarts.unsafeUpdate(-1, [server]) // dropped: the counter only grows
      const [key] = yield* keysOf("mcp_fleet.server.restarts", server)
      expect(tagsOf(key!)).toEqual([["unit", "{restart}"], [Telemetry.ServerName, "keys-test-counter"]])
      expect((key!.keyType as unknown as { readonly incremental: boolean }).incremental).toBe(true)
      expect((yield* Metric.value(Metric.taggedWithLabels(Telemetry.restarts, [server]))).count).toBe(1)

      Telemetry.heldTools.unsafeUpdate(7, [])
      const untagged = (yield* Metric.snapshot).filter((pair) =>
        pair.metricKey.name === "mcp_fleet.tools.held" && pair.metricKey.tags.length === 1
      )
      expect(untagged.map((pair) => tagsOf(pair.metricKey))).toEqual([[["unit", "{tool}"]]])
    }))

  it.scoped("a 2025 server's refusal of the revision probe is no point; its other requests are", () =>
    Effect.gen(function*() {
      const name = "keys-test-legacy"
      const fake = yield* FakeServer.make({ name })
      yield* McpClient.make().pipe(Effect.provideService(Transport, fake.transport))
      expect(fake.requests.map((request) => request.method)).toEqual(["server/discover", "initialize"])
      const keys = yield* keysOf("mcp.client.operation.duration", MetricLabel.make(Telemetry.ServerName, name))
      const methods = keys.map((key) => key.tags.find((tag) => tag.key === Telemetry.Attributes.methodName)?.value)
      expect(methods).toEqual(["initialize"])
    }))
})
