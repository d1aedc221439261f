import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { InFlight } from "../../../src/internal/gateway/inFlight.js"
import * as Logging from "../../../src/internal/gateway/logging.js"
import type * as JsonRpc from "../../../src/JsonRpc.js"
import type * as McpSchema from "../../../src/McpSchema.js"
import type * as McpServer from "../../../src/McpServer.js"

// The context of a call with request id `id`: all the forwarder reads of it.
const call = (id: number) =>
  ({ request: { jsonrpc: "2.0", id, method: "tools/call" } }) as unknown as McpServer.RequestContext

const setup = () => {
  const sent: Array<{ method: string; params: unknown; related: unknown }> = []
  const inFlight = new InFlight()
  // The level the client set with logging/setLevel (McpServer keeps it).
  const session = {
    level: undefined as McpSchema.LoggingLevel | undefined,
    notify: (method: string, params?: Record<string, unknown>, related?: JsonRpc.RequestId) =>
      Effect.sync(() => void sent.push({ method, params, related }))
  }
  const forward = Logging.forwarder(inFlight, { level: () => session.level, notify: session.notify })
  const log = (level: "debug" | "info" | "error") =>
    forward({ _tag: "LogMessage", server: "alpha", level, logger: undefined, data: level, perRequest: false })
  return { sent, inFlight, session, log }
}

describe("gateway logging", () => {
  it.effect("without a level, a server's messages go only to the call in flight there, on its stream", () =>
    Effect.gen(function*() {
      const { inFlight, log, sent } = setup()
      yield* log("info")
      expect(sent).toEqual([])
      yield* inFlight.track("alpha", call(1), inFlight.track("alpha", call(2), log("debug")))
      expect(sent).toEqual([{
        method: "notifications/message",
        params: { level: "debug", logger: "alpha", data: "debug" },
        related: 2
      }])
      expect(inFlight.latest("alpha")).toBeUndefined()
    }))

  it.effect("with a level, every message at or above it", () =>
    Effect.gen(function*() {
      const { log, sent, session } = setup()
      session.level = "info"
      yield* log("debug")
      yield* log("info")
      yield* log("error")
      expect(sent.map((message) => (message.params as { level: string }).level)).toEqual(["info", "error"])
    }))
})
