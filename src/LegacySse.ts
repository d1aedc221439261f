/**
 * The HTTP+SSE transport of MCP 2024-11-05: a GET opens an event stream whose first
 * `endpoint` event names the URL to POST messages to; the server's messages come back as
 * `message` events on that stream. The stream is the session: when it ends, so does the
 * connection. {@link StreamableHttp} falls back to it for servers that predate Streamable HTTP.
 *
 * @since 0.1.0
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Http from "./internal/transport/http.js"
import { SseDecoder } from "./internal/transport/sseDecoder.js"
import type * as JsonRpc from "./JsonRpc.js"
import * as McpError from "./McpError.js"

/**
 * An open legacy session: where to POST, and how to send.
 *
 * @since 0.1.0
 */
export interface Session {
  /** The URL the server's `endpoint` event named. */
  readonly endpoint: string
  /** POSTs one message; fails on an error status. */
  readonly send: (message: JsonRpc.Message) => Effect.Effect<void, McpError.McpError>
}

/**
 * Opens the event stream and waits for the `endpoint` event. Messages go to `receive`;
 * when the stream ends or breaks, `onEnd` gets why. The stream is read in the Scope.
 *
 * @since 0.1.0
 */
export const open = (
  ctx: Http.Context,
  url: string,
  options: {
    readonly receive: (messages: ReadonlyArray<JsonRpc.Message>) => Effect.Effect<void>
    readonly onEnd: (error: McpError.McpError) => Effect.Effect<void>
    readonly timeout: Duration.DurationInput
  }
) =>
  Effect.gen(function*() {
    const what = "the SSE stream (GET)"
    const response = yield* Http.execute(
      ctx,
      HttpClientRequest.get(url, { headers: { ...ctx.headers, accept: "text/event-stream" } }),
      what
    ).pipe(Effect.timeoutFail({
      duration: options.timeout,
      onTimeout: () => closed(ctx, `the SSE stream at ${Http.safeUrl(url)} did not open within the timeout`)
    }))
    if (!Http.isOk(response.status)) return yield* Effect.fail(yield* Http.statusError(ctx, response, what))
    if (Http.mediaType(response) !== "text/event-stream") {
      yield* Http.discard(response)
      return yield* Effect.fail(closed(ctx, `${Http.safeUrl(url)} answered GET with ${Http.mediaType(response) || "no content type"}, not an event stream`))
    }

    const endpoint = yield* Deferred.make<string, McpError.McpError>()
    yield* Http.readEvents(ctx, response, what, new SseDecoder(ctx.maxMessageBytes), (events) =>
      Effect.forEach(events, (event) => {
        if (event.event === "endpoint") return Deferred.complete(endpoint, resolveEndpoint(ctx, url, event.data))
        if (event.event !== "message") return Effect.void
        return Effect.flatMap(Http.parseMessages(ctx, event.data, "an event"), options.receive)
      }, { discard: true })).pipe(
        Effect.zipRight(Effect.fail(closed(ctx, "the server ended the SSE stream"))),
        Effect.catchAll((error) => Effect.zipRight(Deferred.fail(endpoint, error), options.onEnd(error))),
        Effect.forkScoped
      )
    const postTo = yield* Deferred.await(endpoint).pipe(Effect.timeoutFail({
      duration: options.timeout,
      onTimeout: () => closed(ctx, "the SSE stream sent no endpoint event within the timeout")
    }))

    const send = (message: JsonRpc.Message) =>
      Effect.gen(function*() {
        const method = "method" in message ? message.method : "a response"
        const posted = yield* Http.execute(
          ctx,
          HttpClientRequest.post(postTo, { headers: ctx.headers }).pipe(
            HttpClientRequest.bodyText(JSON.stringify(message), "application/json")
          ),
          method
        ).pipe(Effect.timeoutFail({
          duration: options.timeout,
          onTimeout: () => closed(ctx, `the server did not accept ${method} within the timeout`)
        }))
        if (!Http.isOk(posted.status)) return yield* Effect.fail(yield* Http.statusError(ctx, posted, method))
        yield* Http.discard(posted)
      })
    return { endpoint: postTo, send } satisfies Session
  })

const closed = (ctx: Http.Context, message: string) => McpError.make(ctx.server, new McpError.ClosedReason({ message }))

// The endpoint may be relative; it must stay on the stream's origin, or a server could send
// our headers (credentials) anywhere.
const resolveEndpoint = (ctx: Http.Context, url: string, data: string) =>
  Effect.suspend(() => {
    let resolved: URL
    try {
      resolved = new URL(data.trim(), url)
    } catch {
      return Effect.fail(closed(ctx, `the endpoint event is not a URL: ${data.slice(0, 200)}`))
    }
    if (resolved.origin !== new URL(url).origin && ctx.redirects !== "any") {
      return Effect.fail(closed(ctx, `the endpoint event points to another origin (${resolved.origin}); refused`))
    }
    return Effect.succeed(resolved.toString())
  })
