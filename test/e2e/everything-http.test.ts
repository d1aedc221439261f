// The reference server over HTTP: the same flows as over stdio, through Streamable HTTP
// (answers on event streams, the GET stream for log messages and resource updates), through
// the 2024-11-05 HTTP+SSE transport reached by fallback, and through it when forced.
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClientUndici from "../../src/HttpClientUndici.js"
import * as LegacySse from "../../src/LegacySse.js"
import * as McpClient from "../../src/McpClient.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import * as StreamableHttp from "../../src/StreamableHttp.js"
import { Transport } from "../../src/Transport.js"
import { stateOf, until } from "../support/events.js"
import { everything } from "../support/everything.js"
import { everythingSuite } from "../support/everythingSuite.js"
import { Platform } from "../support/platform.js"

const connect = (mode: "streamableHttp" | "sse", transportMode: StreamableHttp.Options["mode"], kind: string) =>
  Effect.gen(function*() {
    const url = yield* everything(mode)
    const transport = yield* StreamableHttp.make({ name: "everything", url, mode: transportMode })
    const client = yield* McpClient.make().pipe(Effect.provideService(Transport, transport))
    // Checked here, once per suite: the transport the client ended up on.
    if (transport.kind !== kind) throw new Error(`expected the ${kind} transport, got ${transport.kind}`)
    return client
  })

everythingSuite(
  "server-everything over Streamable HTTP",
  connect("streamableHttp", "auto", "http"),
  HttpClientUndici.layer
)
everythingSuite("server-everything over HTTP+SSE, by fallback", connect("sse", "auto", "sse"), HttpClientUndici.layer)
everythingSuite("server-everything over HTTP+SSE, forced", connect("sse", "sse", "sse"), HttpClientUndici.layer)

it.scopedLive("Streamable HTTP: the server's session id is kept for the connection", () =>
  Effect.gen(function*() {
    const url = yield* everything("streamableHttp")
    const transport = yield* StreamableHttp.make({ name: "everything", url })
    yield* McpClient.make().pipe(Effect.provideService(Transport, transport))
    expect(transport.info().sessionId).toMatch(/^[0-9a-f-]{36}$/)
  }).pipe(Effect.provide(HttpClientUndici.layer)))

it.scopedLive("LegacySse.make alone speaks HTTP+SSE to a server that only has it", () =>
  Effect.gen(function*() {
    const url = yield* everything("sse")
    const transport = yield* LegacySse.make({ name: "legacy", url })
    expect(transport.kind).toBe("sse")
    expect(transport.info()).toMatchObject({ url, endpoint: expect.stringMatching(/\/message$/) })
    const client = yield* McpClient.make().pipe(Effect.provideService(Transport, transport))
    const result = yield* client.callTool("echo", { message: "alone" })
    expect(result.content).toEqual([{ type: "text", text: "Echo: alone" }])
  }).pipe(Effect.provide(HttpClientUndici.layer)))

it.scopedLive("fleet: an http server that only speaks HTTP+SSE is Ready, and its status says sse", () =>
  Effect.gen(function*() {
    const url = yield* everything("sse")
    const fleet = yield* ServerRegistry.make()
    const events = yield* fleet.subscribe
    yield* fleet.reconcile([{ name: "legacy", transport: { type: "http", url } }])
    yield* until(events, stateOf("legacy", "Ready"))
    const [status] = yield* fleet.status
    expect(status!.transport).toBe("sse")
    expect(status!.connection).toMatchObject({ url, endpoint: expect.stringMatching(/\/message$/) })
    const result = yield* fleet.callTool("mcp__legacy__echo", { message: "old" })
    expect(result.content).toEqual([{ type: "text", text: "Echo: old" }])
  }).pipe(Effect.provide(Platform)))
