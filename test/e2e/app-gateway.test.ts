// examples/app-gateway.ts, its core run here: the app's two tools and a real fleet
// (server-everything, server-memory) served as one MCP server over HTTP on 127.0.0.1, called
// by our McpClient over Streamable HTTP.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Fleet, serve } from "../../examples/app-gateway.js"
import * as HttpClientUndici from "../../src/HttpClientUndici.js"
import * as McpClient from "../../src/McpClient.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import * as StreamableHttp from "../../src/StreamableHttp.js"
import { firstText } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import { hangGuard } from "../support/guard.js"

const connected = Effect.gen(function*() {
  const registry = yield* ServerRegistry.ServerRegistry
  yield* Effect.orDie(registry.awaitReady({ servers: ["everything", "memory"], timeout: hangGuard(30_000) }))
  const url = yield* serve()
  const transport = yield* StreamableHttp.make({ name: "app-gateway", url })
  return yield* McpClient.make().pipe(Effect.provideService(Transport, transport))
})

describe("examples/app-gateway", () => {
  it.scopedLive(
    "serves the app's tools under their own names and the fleet's qualified, and calls both",
    () =>
      Effect.gen(function*() {
        const client = yield* connected
        const names = (yield* client.listTools()).map((tool) => tool.name)
        expect(names.slice(0, 2)).toEqual(["word_count", "dice"])
        expect(names).toContain("mcp__everything__echo")
        expect(names).toContain("mcp__memory__read_graph")
        expect(names.filter((name) => !name.startsWith("mcp__"))).toEqual(["word_count", "dice"])

        expect(firstText(yield* client.callTool("word_count", { text: "one two  three" }))).toBe("3")
        const progress: Array<number> = []
        const rolled = yield* client.callTool("dice", { n: 3, sides: 4 }, {
          onProgress: (p) => Effect.sync(() => void progress.push(p.progress))
        })
        expect(firstText(rolled)).toMatch(/^[1-4] [1-4] [1-4]$/)
        expect(progress).toEqual([1, 2, 3])
        // Arguments are decoded with the tool's Schema: a bad one is a tool error the model reads.
        const bad = yield* client.callTool("dice", { n: 0 })
        expect(bad.isError).toBe(true)

        expect(firstText(yield* client.callTool("mcp__everything__echo", { message: "via the fleet" }))).toContain(
          "via the fleet"
        )
        const graph = yield* client.callTool("mcp__memory__read_graph", {})
        expect(graph.isError).not.toBe(true)
      }).pipe(Effect.provide(Layer.merge(Fleet, HttpClientUndici.layer))),
    60_000
  )
})
