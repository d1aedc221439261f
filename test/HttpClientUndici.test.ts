// mcp-fleet's lean HttpClient against a node:http server on 127.0.0.1: what it sends, how
// bodies are read, that interruption hangs up, and that bodies it cannot send are refused.
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as http from "node:http"
import type * as net from "node:net"
import * as HttpClientUndici from "../src/HttpClientUndici.js"

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

// A server that records each request and answers with `answer`; closed with the Scope.
const serve = (answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly seen: Array<Seen>; readonly server: http.Server }>((resume) => {
      const seen: Array<Seen> = []
      const server = http.createServer((req, res) => {
        let body = ""
        req.setEncoding("utf8").on("data", (chunk: string) => body += chunk).on("end", () => {
          seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
          answer(req, res)
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, seen, server })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() =>
          resume(Effect.void)
        )
      })
  )

// The client lives as long as the test: its Agent closing would cut bodies still being read.
const withClient = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, HttpClientUndici.layer)

describe("HttpClientUndici", () => {
  it.scopedLive("sends method, path, query, headers and body; reads status, headers, text and json", () =>
    Effect.gen(function*() {
      const { seen, url } = yield* serve((_, res) => {
        res.writeHead(201, { "content-type": "application/json", "x-answer": "yes" })
        res.end(`{"ok":true}`)
      })
      const response = yield* HttpClient.execute(
        HttpClientRequest.post(`${url}/mcp?a=1`, { headers: { "x-custom": "c" } }).pipe(
          HttpClientRequest.bodyText(`{"hello":"world"}`, "application/json")
        )
      )
      expect(response.status).toBe(201)
      expect(response.headers["x-answer"]).toBe("yes")
      expect(yield* response.json).toEqual({ ok: true })
      expect(seen).toHaveLength(1)
      expect(seen[0]).toMatchObject({ method: "POST", url: "/mcp?a=1", body: `{"hello":"world"}` })
      expect(seen[0]!.headers).toMatchObject({ "x-custom": "c", "content-type": "application/json" })
    }).pipe(withClient))

  it.scopedLive("streams a body as it arrives", () =>
    Effect.gen(function*() {
      const { url } = yield* serve((_, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("data: one\n\n")
        setTimeout(() => res.end("data: two\n\n"), 20)
      })
      const response = yield* HttpClient.get(url)
      const chunks = yield* Stream.runCollect(Stream.decodeText(response.stream))
      expect(Chunk.join(chunks, "")).toBe("data: one\n\ndata: two\n\n")
    }).pipe(withClient))

  it.scopedLive("interrupting a request in flight hangs up on the server", () =>
    Effect.gen(function*() {
      const received = yield* Deferred.make<void>()
      const hungUp = yield* Deferred.make<void>()
      const { url } = yield* serve((req) => {
        // Never answers; the socket closing is the client giving up.
        req.socket.on("close", () => Deferred.unsafeDone(hungUp, Effect.void))
        Deferred.unsafeDone(received, Effect.void)
      })
      const fiber = yield* Effect.fork(
        HttpClient.execute(HttpClientRequest.post(url).pipe(HttpClientRequest.bodyText("x")))
      )
      yield* Deferred.await(received)
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(hungUp)
    }).pipe(withClient))

  // A body that never ends: headers and one chunk, then nothing. Giving up on reading it
  // must hang up, or its socket stays open for as long as the server keeps it.
  const stalledBody = (
    read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<unknown, HttpClientError.ResponseError>
  ) =>
    Effect.gen(function*() {
      const hungUp = yield* Deferred.make<void>()
      const { url } = yield* serve((req, res) => {
        req.socket.on("close", () => Deferred.unsafeDone(hungUp, Effect.void))
        res.writeHead(200, { "content-type": "application/json" })
        res.write(`{"partial":`)
      })
      const response = yield* HttpClient.get(url)
      const timedOut = yield* read(response).pipe(Effect.timeout("100 millis"), Effect.flip)
      expect(timedOut._tag).toBe("TimeoutException")
      yield* Deferred.await(hungUp).pipe(Effect.timeout("2 seconds"))
    }).pipe(withClient)

  it.scopedLive("giving up on text of a stalled body hangs up", () => stalledBody((response) => response.text))
  it.scopedLive("giving up on json of a stalled body hangs up", () => stalledBody((response) => response.json))
  it.scopedLive("giving up on arrayBuffer of a stalled body hangs up", () =>
    stalledBody((response) => response.arrayBuffer))
  it.scopedLive("giving up on the stream of a stalled body hangs up", () =>
    stalledBody((response) => Stream.runDrain(response.stream)))

  it.scopedLive("refuses a body it cannot send with an Encode error", () =>
    Effect.gen(function*() {
      const { url } = yield* serve((_, res) => res.end())
      const form = new FormData()
      form.set("a", "b")
      const error = yield* Effect.flip(
        HttpClient.execute(HttpClientRequest.post(url).pipe(HttpClientRequest.bodyFormData(form)))
      )
      expect(error).toMatchObject({ _tag: "RequestError", reason: "Encode" })
    }).pipe(withClient))
})
