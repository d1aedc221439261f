/**
 * The HTTP exchange the HTTP transports are written on: one request, its answer handed to
 * callbacks as it arrives, so that a transport completes a request from the I/O callback
 * that read its answer. Any `HttpClient` can carry it (a fiber per exchange, reading the
 * body as a Stream); a client that brings its own wire under {@link WireTypeId} (the one
 * from `HttpClientUndici`) carries it with no fiber, Stream or promise at all.
 *
 * @internal
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"

/** One request, as it goes on the wire. */
export interface WireRequest {
  readonly method: "GET" | "POST" | "DELETE"
  readonly url: string
  /** Every header, lower-cased names; a POST body's content type among them. */
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | undefined
}

/** Response headers, names lower-cased. */
export type WireHeaders = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * Where an exchange reports; after `onEnd` or `onError` nothing more is called. Its
 * functions are called as methods, so a class can be the handler.
 */
export interface WireHandler {
  /** The status and headers; called once, before any data. */
  readonly onHeaders: (status: number, headers: WireHeaders) => void
  readonly onData: (chunk: Uint8Array) => void
  readonly onEnd: () => void
  /** The request could not be sent, or (after `onHeaders`) its body broke. */
  readonly onError: (cause: unknown) => void
}

/** An exchange under way. */
export interface Abortable {
  /** Stops it: its connection is dropped and its handler hears nothing more. */
  abort(): void
}

/** Starts one exchange. */
export type Wire = (request: WireRequest, handler: WireHandler) => Abortable

/** Where an `HttpClient` that brings its own wire keeps it. */
export const WireTypeId: unique symbol = Symbol.for("mcp-fleet/HttpWire")

/** One header's value (the first, if repeated). */
export const header = (headers: WireHeaders, name: string): string | undefined => {
  const value = headers[name]
  return typeof value === "string" || value === undefined ? value : value[0]
}

/** The wire for `client`: its own, else one that runs each exchange in a fiber of `runtime`. */
export const of = (client: HttpClient.HttpClient, runtime: Runtime.Runtime<never>): Wire =>
  (client as { readonly [WireTypeId]?: Wire })[WireTypeId] ?? fromHttpClient(client, runtime)

const fromHttpClient = (client: HttpClient.HttpClient, runtime: Runtime.Runtime<never>): Wire => {
  const runFork = Runtime.runFork(runtime)
  return (request, handler) => {
    const { "content-type": contentType, ...headers } = request.headers
    let built = HttpClientRequest.make(request.method)(request.url, { headers })
    if (request.body !== undefined) built = HttpClientRequest.bodyText(built, request.body, contentType)
    let aborted = false
    const exchange = Effect.flatMap(client.execute(built), (response) => {
      handler.onHeaders(response.status, response.headers)
      return Stream.runForEachChunk(response.stream, (chunk) =>
        Effect.sync(() => {
          for (const bytes of chunk) if (!aborted) handler.onData(bytes)
        }))
    })
    // A failure is handed on, never left to the runtime, which would log it whole: an
    // HttpClientError names the whole URL, query included, and holds the request. What
    // went wrong underneath is its cause.
    const fiber = runFork(Effect.flatMap(Effect.exit(exchange), (exit) =>
      Effect.sync(() => {
        if (aborted) return
        if (Exit.isSuccess(exit)) return handler.onEnd()
        const error = Cause.squash(exit.cause) as { readonly cause?: unknown }
        handler.onError(error.cause ?? error)
      })))
    return {
      abort: () => {
        if (aborted) return
        aborted = true
        fiber.unsafeInterruptAsFork(FiberId.none)
      }
    }
  }
}
