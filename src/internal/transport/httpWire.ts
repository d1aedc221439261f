/**
 * The wire the HTTP transports use (see the public HttpWire module): the HttpWire in context
 * when it stands for the `HttpClient` in context, else one on that client, a fiber per exchange reading the
 * body as a Stream.
 *
 * @internal
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import type { HttpWire, Wire, WireHeaders } from "../../HttpWire.js"

/** One header's value (the first, if repeated). */
export const header = (headers: WireHeaders, name: string): string | undefined => {
  const value = headers[name]
  return typeof value === "string" || value === undefined ? value : value[0]
}

/**
 * The HttpWire's exchange when there is one for `client` itself, else a wire that runs each
 * exchange of `client` in a fiber of `runtime`.
 */
export const of = (
  wire: Option.Option<HttpWire>,
  client: HttpClient.HttpClient,
  runtime: Runtime.Runtime<never>
): Wire => Option.isSome(wire) && wire.value.client === client ? wire.value.exchange : fromHttpClient(client, runtime)

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
