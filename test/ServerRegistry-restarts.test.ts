// One rule counts restarts (`ServerState.isRestart`): the fleet's `mcp_fleet.server.restarts`
// counter, which the dashboard reads, counts a restart asked of a running server and a
// connection started again after one failed, and nothing else (the first start, a stop).
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricState from "effect/MetricState"
import * as McpError from "../src/McpError.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import { isRestart, ServerState } from "../src/ServerState.js"
import * as Telemetry from "../src/Telemetry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { stateOf, until } from "./support/events.js"
import { Platform } from "./support/platform.js"

// The counter's value for one server (the process's: tests take the difference).
const restartsOf = (server: string) =>
  Effect.map(Metric.snapshot, (pairs) => {
    for (const { metricKey, metricState } of pairs) {
      if (metricKey.name !== "mcp_fleet.server.restarts" || !MetricState.isCounterState(metricState)) continue
      if (metricKey.tags.some((tag) => tag.key === Telemetry.ServerName && tag.value === server)) {
        return Number(metricState.count)
      }
    }
    return 0
  })

describe("ServerRegistry: restarts, counted by one rule", () => {
  it("isRestart: Failed → Connecting and Ready/Idle → Pending, nothing else", () => {
    const failed = ServerState.Failed({ error: McpError.closed("s", { message: "gone" }), attempt: 1, retryAt: 0 })
    const connecting = ServerState.Connecting({ attempt: 2, since: 0 })
    const ready = ServerState.Ready({
      protocolVersion: "2025-11-25",
      serverInfo: { name: "s", version: "1" },
      since: 0
    })
    expect(isRestart(failed, connecting)).toBe(true)
    expect(isRestart(ready, ServerState.Pending())).toBe(true)
    expect(isRestart(ServerState.Idle({ since: 0 }), ServerState.Pending())).toBe(true)
    expect(isRestart(ServerState.Pending(), connecting)).toBe(false)
    expect(isRestart(ready, ServerState.Stopped())).toBe(false)
  })

  it.scoped("a restart asked of a Ready server counts once; the first start counts nothing", () =>
    Effect.gen(function*() {
      const name = `restarted-${Math.random().toString(36).slice(2)}`
      const fleet = yield* ServerRegistry.make().pipe(Effect.provide(Platform))
      const events = yield* fleet.subscribe
      const server = FakeServer.spec({ name, tools: [] })
      yield* fleet.reconcile([server])
      yield* until(events, stateOf(name, "Ready"))
      expect(yield* restartsOf(name)).toBe(0)
      yield* fleet.restart(name)
      yield* until(events, stateOf(name, "Ready"))
      expect(server.connects()).toBe(2)
      expect(yield* restartsOf(name)).toBe(1)
    }))
})
