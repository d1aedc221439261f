// A call by qualified name to a server that has not listed its tools yet (the gateway after
// its settle window, a script racing the fleet): the server is still connecting, which is
// what the caller is told, not that there is no such tool.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure } from "../src/testing/Results.js"
import { stateOf, until } from "./support/events.js"
import { Platform } from "./support/platform.js"

describe("ServerRegistry: a server still connecting", () => {
  it.scoped("a call to its tool says it is still connecting; an unknown server's tool is still not found", () =>
    Effect.gen(function*() {
      const fleet = yield* ServerRegistry.make().pipe(Effect.provide(Platform))
      const events = yield* fleet.subscribe
      // Its connection never completes: it stays Connecting.
      yield* fleet.reconcile([
        { name: "slow", transport: { type: "custom", key: "slow", connect: Effect.never } },
        FakeServer.spec({ name: "other", tools: [] })
      ])
      yield* until(events, stateOf("slow", "Connecting"))
      const error = failure(yield* Effect.exit(fleet.callTool("mcp__slow__echo", {})))
      expect(error.reason).toMatchObject({ _tag: "Unavailable", state: "Connecting" })
      expect(error.server).toBe("slow")
      expect(error.message).toBe(
        "server 'slow': is still connecting: its tools are not listed yet, so 'mcp__slow__echo' cannot be called yet"
      )
      const unknown = failure(yield* Effect.exit(fleet.callTool("mcp__nobody__echo", {})))
      expect(unknown.reason._tag).toBe("NotFound")
    }))
})
