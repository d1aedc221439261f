// The MCP conventions over Streamable HTTP: a client's CLIENT span parents the SERVER span of
// the request it sent (its context in `_meta`), for a stateful session and for a modern
// request answered with no session; the client span names the server's address and port.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as HttpClientUndici from "../src/HttpClientUndici.js"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "../src/McpServer.js"
import * as NodeMcpServer from "../src/NodeMcpServer.js"
import * as StreamableHttp from "../src/StreamableHttp.js"
import { text } from "../src/testing/Results.js"
import { recordingTracer } from "./support/tracing.js"

const echo = McpServer.tool({
  name: "echo",
  description: "Says it back",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text: said }) => Effect.succeed(text(said))
})

const over = (protocolVersion: McpSchema.Revision | undefined) =>
  Effect.gen(function*() {
    const { spans, tracer } = yield* recordingTracer
    const server = yield* McpServer.fromItems({ serverInfo: { name: "http-echo", version: "1" }, tools: [echo] })
    const url = yield* NodeMcpServer.serveHttp(server, { port: 0 }).pipe(Effect.withTracer(tracer))
    const transport = StreamableHttp.layer({ name: "remote", url }).pipe(Layer.provide(HttpClientUndici.layer))
    yield* Effect.gen(function*() {
      const client = yield* McpClient.make({ protocolVersion })
      yield* client.callTool("echo", { text: "hi" })
    }).pipe(Effect.provide(transport), Effect.withTracer(tracer))
    const sent = spans.find((s) => s.name === "tools/call echo" && s.kind === "client")!
    const served = spans.find((s) => s.name === "tools/call echo" && s.kind === "server")!
    expect(Option.getOrUndefined(served.span.parent)?.spanId).toBe(sent.span.spanId)
    expect(Object.fromEntries(sent.span.attributes)).toMatchObject({
      "network.transport": "tcp",
      "network.protocol.name": "http",
      "server.address": "127.0.0.1",
      "server.port": Number(new URL(url).port),
      "mcp_fleet.server.name": "remote"
    })
    expect(served.span.attributes.get("mcp_fleet.server.name")).toBe("http-echo")
    return served
  })

describe("Telemetry over Streamable HTTP", () => {
  it.scoped("a stateful session: the server span is the client span's child, with the session id", () =>
    Effect.map(over("2025-11-25"), (served) => {
      expect(typeof served.span.attributes.get("mcp.session.id")).toBe("string")
      expect(served.span.attributes.get("network.transport")).toBe("tcp")
    }))

  it.scoped("a modern request with no session: the server span is the client span's child", () =>
    Effect.asVoid(over(undefined)))
})
