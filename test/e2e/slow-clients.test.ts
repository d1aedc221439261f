// Slow and oversized clients on the node:http endpoints (issue 24 §3, §13): a body trickled to
// McpServer.serveHttp or the gateway is cut with 408 after `bodyTimeout`, headers trickled
// after `headersTimeout`, and a 200 MiB declared body is refused with 413 before any is read.
// Raw sockets, so the client is as slow as the test wants it.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as net from "node:net"
import * as McpServer from "../../src/McpServer.js"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as NodeMcpServer from "../../src/NodeMcpServer.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { Platform } from "../support/platform.js"
import { margin } from "../support/processes.js"

const LIMITS = { bodyTimeout: "300 millis", headersTimeout: "300 millis" } as const

const mcpServer = Effect.gen(function*() {
  const server = yield* McpServer.fromItems({ serverInfo: { name: "slow", version: "1.0.0" } })
  return yield* NodeMcpServer.serveHttp(server, { port: 0, ...LIMITS })
})

const gateway = Effect.gen(function*() {
  const context = yield* Layer.build(
    Policy.layer({}).pipe(Layer.provideMerge(ServerRegistry.layer()), Layer.provide(Platform))
  )
  return yield* NodeGateway.serveHttp({ port: 0, ...LIMITS }).pipe(Effect.provide(context))
})

interface Outcome {
  readonly received: string
  readonly ms: number
}

// Connects to `url`, writes `head`, then one byte of `trickle` every 50 ms; resolves with what
// came back once the server closes the connection, and how long that took.
const trickle = (url: string, head: string, trickle: string) =>
  Effect.async<Outcome>((resume) => {
    const { hostname, port } = new URL(url)
    const started = Date.now()
    const socket = net.connect(Number(port), hostname)
    let received = ""
    let sent = 0
    let timer: ReturnType<typeof setInterval> | undefined
    socket.setEncoding("utf8")
    // The trickle starts once the head is written: on a busy machine a tick could come first,
    // and a byte of the body before the head is a 400, not the slow client under test.
    socket.on("connect", () => {
      socket.write(head)
      timer = setInterval(() => {
        if (sent < trickle.length) socket.write(trickle[sent++]!)
      }, 50)
    })
    socket.on("data", (chunk: string) => received += chunk)
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearInterval(timer)
      resume(Effect.succeed({ received, ms: Date.now() - started }))
    })
    return Effect.sync(() => {
      clearInterval(timer)
      socket.destroy()
    })
  })

const head = (url: string, length: number) =>
  `POST ${new URL(url).pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
  `Accept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n`

const BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }).padEnd(400, " ")

describe("slow clients", () => {
  for (const [name, serve] of [["McpServer.serveHttp", mcpServer], ["the gateway", gateway]] as const) {
    it.scopedLive(`${name}: a trickled body is cut with 408 after bodyTimeout`, () =>
      Effect.gen(function*() {
        const url = yield* serve
        const bound = margin(300 + 1000)
        const outcome = yield* trickle(url, head(url, BODY.length), BODY)
        expect(outcome.received).toMatch(/^HTTP\/1\.1 408/)
        expect(outcome.received).toContain("the body did not arrive within 300 ms")
        expect(outcome.ms).toBeLessThan(yield* bound)
      }), { timeout: 30_000 })

    it.scopedLive(`${name}: trickled headers are cut after headersTimeout`, () =>
      Effect.gen(function*() {
        const url = yield* serve
        const bound = margin(300 + 1000)
        const outcome = yield* trickle(url, "", head(url, 2))
        expect(outcome.received).toMatch(/^HTTP\/1\.1 408/)
        expect(outcome.ms).toBeLessThan(yield* bound)
      }), { timeout: 30_000 })
  }

  it.scopedLive(
    "McpServer.toWebHandler (the neutral core): a body that never ends is cut with 408",
    () =>
      Effect.gen(function*() {
        const server = yield* McpServer.fromItems({ serverInfo: { name: "slow", version: "1.0.0" } })
        const handler = yield* McpServer.toWebHandler(server, { bodyTimeout: "300 millis" })
        let cancelled = false
        const body = new ReadableStream<Uint8Array>({
          start: (controller) => controller.enqueue(new TextEncoder().encode("{")),
          cancel: () => {
            cancelled = true
          }
        })
        const bound = margin(300 + 1000)
        const started = Date.now()
        const response = yield* Effect.promise(() =>
          handler(
            new Request("http://127.0.0.1/mcp", {
              method: "POST",
              headers: { "content-type": "application/json", accept: "application/json" },
              body,
              duplex: "half"
            } as RequestInit)
          )
        )
        expect(response.status).toBe(408)
        expect(Date.now() - started).toBeLessThan(yield* bound)
        expect(cancelled).toBe(true)
      }),
    { timeout: 30_000 }
  )

  it.scopedLive("a 200 MiB declared body is refused with 413 before any of it is read", () =>
    Effect.gen(function*() {
      const url = yield* mcpServer
      const outcome = yield* trickle(url, head(url, 200 * 1024 * 1024), "")
      expect(outcome.received).toMatch(/^HTTP\/1\.1 413/)
      expect(outcome.received).toContain("the body exceeds 16777216 bytes")
    }), { timeout: 30_000 })
})
