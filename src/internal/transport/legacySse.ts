/**
 * The HTTP+SSE transport of MCP 2024-11-05, shared by `LegacySse.make` and the fallback of
 * `StreamableHttp`: a GET opens an event stream whose first `endpoint` event names the URL
 * to POST messages to; the server's messages come back as `message` events on that stream,
 * decoded and delivered in its data callback. The stream is the session: when it ends, so
 * does the connection.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import { type Inbox, RequestFailed } from "../../Transport.js"
import { safeUrl } from "../secrets.js"
import * as Http from "./http.js"
import { SseDecoder } from "./sseDecoder.js"
import { endsConnection } from "./streamableHttpConnection.js"

/** An open legacy session: where to POST, and how to send. */
export interface Session {
  /** The URL the server's `endpoint` event named. */
  readonly endpoint: string
  /**
   * Sends one message. A request is POSTed in the background, and fails through the inbox;
   * anything else is sent before this returns.
   */
  readonly send: (message: JsonRpc.Message) => Effect.Effect<void, McpError.McpError>
}

const WHAT = "the SSE stream (GET)"

/**
 * Opens the event stream and waits for the `endpoint` event. Messages go to `inbox`, which
 * ends when the stream ends or breaks. The stream is dropped when the Scope closes.
 */
export const open = (
  ctx: Http.Context,
  url: string,
  inbox: Inbox,
  timeoutMs: number
): Effect.Effect<Session, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const timeout = Duration.millis(timeoutMs)
    const opened = yield* Http.open(ctx, {
      method: "GET",
      url,
      headers: { ...ctx.headers, accept: "text/event-stream" }
    }, WHAT).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => Http.closedError(ctx, `the SSE stream at ${safeUrl(url)} did not open within the timeout`)
      })
    )
    const response = opened.response
    if (!response.ok) return yield* Effect.fail(yield* Http.statusError(ctx, opened, WHAT, timeoutMs))
    if (response.mediaType !== "text/event-stream") {
      yield* Http.discard(opened)
      return yield* Effect.fail(Http.closedError(
        ctx,
        `${safeUrl(url)} answered GET with ${response.mediaType || "no content type"}, not an event stream`
      ))
    }

    const endpoint = Deferred.unsafeMake<string, McpError.McpError>(FiberId.none)
    const reader: Http.EventReader = {
      onEvent: (event) => {
        if (event.event === "endpoint") Deferred.unsafeDone(endpoint, resolveEndpoint(ctx, url, event.data))
        else if (event.event === "message") {
          for (const message of Http.parseMessages(ctx, event.data, "an event")) inbox.deliver(message)
        }
      },
      onStreamEnd: (broke) => {
        const error = broke ?? Http.closedError(ctx, "the server ended the SSE stream")
        Deferred.unsafeDone(endpoint, Exit.fail(error))
        inbox.end(error)
      }
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => response.abort()))
    opened.read(new Http.EventSink(ctx, response, WHAT, new SseDecoder(ctx.maxMessageBytes), reader))
    const postTo = yield* Deferred.await(endpoint).pipe(Effect.timeoutFail({
      duration: timeout,
      onTimeout: () => Http.closedError(ctx, "the SSE stream sent no endpoint event within the timeout")
    }))

    const post = (message: JsonRpc.Message) =>
      Effect.gen(function*() {
        const method = "method" in message ? message.method : "a response"
        const posted = yield* Http.open(ctx, {
          method: "POST",
          url: postTo,
          headers: { ...ctx.headers, "content-type": "application/json" },
          body: JSON.stringify(message)
        }, method).pipe(Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => Http.closedError(ctx, `the server did not accept ${method} within the timeout`)
        }))
        if (!posted.response.ok) return yield* Effect.fail(yield* Http.statusError(ctx, posted, method, timeoutMs))
        yield* Http.discard(posted)
      })
    // A request's answer comes on the stream; its POST must not hold up the caller.
    const send = (message: JsonRpc.Message) =>
      JsonRpc.isRequest(message)
        ? Effect.sync(() =>
          void ctx.fork(Effect.catchAll(post(message), (error) =>
            Effect.sync(() => {
              inbox.deliver(new RequestFailed(message.id, error))
              if (endsConnection(error)) inbox.end(error)
            })))
        )
        : post(message)
    return { endpoint: postTo, send } satisfies Session
  })

// The endpoint may be relative; it must stay on the stream's origin, or a server could send
// our headers (credentials) anywhere.
const resolveEndpoint = (ctx: Http.Context, url: string, data: string): Exit.Exit<string, McpError.McpError> => {
  let resolved: URL
  try {
    resolved = new URL(data.trim(), url)
  } catch {
    return Exit.fail(Http.closedError(ctx, `the endpoint event is not a URL: ${data.slice(0, 200)}`))
  }
  if (resolved.origin !== new URL(url).origin && ctx.redirects !== "any") {
    return Exit.fail(Http.closedError(ctx, `the endpoint event points to another origin (${resolved.origin}); refused`))
  }
  return Exit.succeed(resolved.toString())
}
