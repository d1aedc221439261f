import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { InFlight } from "../../../src/internal/gateway/inFlight.js"
import * as Logging from "../../../src/internal/gateway/logging.js"

const setup = () => {
  const sent: Array<{ method: string; params: unknown; related: unknown }> = []
  const inFlight = new InFlight()
  const logging = Logging.make(inFlight, {
    notify: (method, params, related) => Effect.sync(() => void sent.push({ method, params, related }))
  })
  const log = (level: "debug" | "info" | "error") =>
    logging.forward({ _tag: "LogMessage", server: "alpha", level, logger: undefined, data: level })
  return { sent, inFlight, logging, log }
}

const setLevel = (level: unknown) => ({ jsonrpc: "2.0" as const, id: 1, method: "logging/setLevel", params: { level } })

describe("gateway logging", () => {
  it.effect("without a level, a server's messages go only to the call in flight there, on its stream", () =>
    Effect.gen(function*() {
      const { inFlight, log, sent } = setup()
      yield* log("info")
      expect(sent).toEqual([])
      yield* inFlight.track("alpha", 1, inFlight.track("alpha", 2, log("debug")))
      expect(sent).toEqual([{
        method: "notifications/message",
        params: { level: "debug", logger: "alpha", data: "debug" },
        related: 2
      }])
      expect(inFlight.latest("alpha")).toBeUndefined()
    }))

  it.effect("with a level, every message at or above it; an unknown level is -32602", () =>
    Effect.gen(function*() {
      const { log, logging, sent } = setup()
      expect(yield* Effect.flip(logging.setLevel(setLevel("loud")))).toMatchObject({ code: -32602 })
      expect(yield* Effect.flip(logging.setLevel(setLevel("constructor")))).toMatchObject({ code: -32602 })
      yield* logging.setLevel(setLevel("info"))
      yield* log("debug")
      yield* log("info")
      yield* log("error")
      expect(sent.map((message) => (message.params as { level: string }).level)).toEqual(["info", "error"])
    }))
})
