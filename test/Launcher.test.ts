// The Launcher seam: ServerSpec.connect starts stdio servers and opens WebSockets through the
// Launcher in context, and without one fails for good, naming the server and the layer to add.
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Launcher from "../src/Launcher.js"
import type * as McpError from "../src/McpError.js"
import * as Memory from "../src/Memory.js"
import * as ServerSpec from "../src/ServerSpec.js"

const stdio: ServerSpec.ServerSpec = { name: "local", transport: { type: "stdio", command: "some-server" } }
const ws: ServerSpec.ServerSpec = { name: "remote", transport: { type: "ws", url: "ws://127.0.0.1:1/mcp" } }

describe("Launcher", () => {
  for (const spec of [stdio, ws]) {
    it.scoped(`a ${spec.transport.type} server without a launcher fails for good, saying what to provide`, () =>
      Effect.gen(function*() {
        const error: McpError.McpError = yield* Effect.flip(ServerSpec.connect(spec))
        expect(error.server).toBe(spec.name)
        expect(error.reason._tag).toBe("Config")
        expect(error.message).toContain(`"mcp-fleet/node"`)
        expect(error.retryable).toBe(false)
      }).pipe(Effect.provide(FetchHttpClient.layer)))
  }

  it.scoped("connect hands stdio and ws specs to the launcher in context", () =>
    Effect.gen(function*() {
      const started: Array<string> = []
      const launcher: Launcher.Launcher = {
        stdio: (options) => Effect.map(Memory.makePair(), ([client]) => (started.push(options.command), client)),
        webSocket: (options) => Effect.map(Memory.makePair(), ([client]) => (started.push(options.url), client))
      }
      yield* Effect.provide(
        Effect.all([ServerSpec.connect(stdio), ServerSpec.connect(ws)]),
        Layer.succeed(Launcher.Launcher, launcher)
      )
      expect(started).toEqual(["some-server", "ws://127.0.0.1:1/mcp"])
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})
