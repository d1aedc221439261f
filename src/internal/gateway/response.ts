/**
 * Answers written straight onto Node's response from the callback that has them: a JSON
 * body once a POST's requests are answered, or SSE events as they come. The handler's fiber
 * only waits for the response to end (so the server does not write one of its own), and
 * is interrupted when the client goes away: the server runs handlers uninterruptibly, so
 * the waits here are interruptible.
 *
 * @internal
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Effect from "effect/Effect"
import type * as http from "node:http"
import type { EventSink } from "./streamLog.js"

/** The headers of every SSE answer. */
export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive"
}

const nodeResponse = (request: HttpServerRequest.HttpServerRequest): http.ServerResponse =>
  NodeHttpServerRequest.toServerResponse(request)

/**
 * Answers `request` with one JSON body, written when `start`'s callback is called with it;
 * completes once it is written.
 */
export const json = (
  request: HttpServerRequest.HttpServerRequest,
  headers: Record<string, string>,
  start: (answer: (body: unknown) => void) => void
): Effect.Effect<void> =>
  Effect.interruptible(Effect.async<void>((resume) => {
    const response = nodeResponse(request)
    start((body) => {
      if (!response.writableEnded && !response.destroyed) {
        const text = JSON.stringify(body)
        response.writeHead(200, {
          ...headers,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(text))
        })
        response.end(text)
      }
      resume(Effect.void)
    })
  }))

/**
 * Answers `request` with an event stream at once, and gives `start` its sink; completes when
 * the sink is ended. When the client goes away first, the reader `start` returned is ended.
 */
export const eventStream = (
  request: HttpServerRequest.HttpServerRequest,
  headers: Record<string, string>,
  start: (sink: EventSink) => EventSink
): Effect.Effect<void> =>
  Effect.interruptible(Effect.async<void>((resume) => {
    const response = nodeResponse(request)
    // Headers go out with the first event, which `start` writes at once.
    response.writeHead(200, { ...headers, ...SSE_HEADERS })
    let ended = false
    const reader = start({
      write: (text) => {
        if (!response.writableEnded) response.write(text)
      },
      end: () => {
        if (ended) return
        ended = true
        response.end()
        resume(Effect.void)
      }
    })
    return Effect.sync(() => reader.end())
  }))
