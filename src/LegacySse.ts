/**
 * The HTTP+SSE transport of MCP 2024-11-05: a GET opens an event stream whose first
 * `endpoint` event names the URL to POST messages to; the server's messages come back as
 * `message` events on that stream. The stream is the session: when it ends, so does the
 * connection. {@link StreamableHttp} falls back to it by itself for servers that predate
 * Streamable HTTP; `make` speaks it alone, to a server known to need it.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { safeUrl } from "./internal/secrets.js"
import * as Http from "./internal/transport/http.js"
import * as Legacy from "./internal/transport/legacySse.js"
import type * as McpError from "./McpError.js"
import { Inbox, Transport } from "./Transport.js"

/**
 * How to reach a 2024-11-05 HTTP+SSE server.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The server's name, used in errors and logs. */
  readonly name: string
  /** The URL of the event stream (often ending in `/sse`). */
  readonly url: string
  /** Headers sent with every request (authorization, API keys); secrets may be Redacted. */
  readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  /** The largest event accepted. Default: 16 MiB. */
  readonly maxMessageBytes?: number | undefined
  /** How long the server may take to open the stream, name the endpoint, or accept a POST. Default: 30 seconds. */
  readonly httpTimeout?: Duration.DurationInput | undefined
  /** Which redirects to follow, and where the endpoint may point: `same-origin` (the default), `any` or `none`. */
  readonly redirects?: Http.Redirects | undefined
}

/**
 * Opens the event stream and waits for its endpoint, owned by the current Scope. Fails with
 * an Http error when the server refuses the GET, or a Closed error when it answers with no
 * event stream or names no usable endpoint in time.
 *
 * @example
 * ```ts
 * import { HttpClientUndici, LegacySse, McpClient, Transport } from "mcp-fleet"
 * import { Effect } from "effect"
 *
 * const client = Effect.flatMap(
 *   LegacySse.make({ name: "old", url: "http://127.0.0.1:3001/sse" }),
 *   (transport) => McpClient.make().pipe(Effect.provideService(Transport.Transport, transport))
 * ).pipe(Effect.provide(HttpClientUndici.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<Transport, McpError.McpError, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const ctx = yield* Http.makeContext(options)
    const inbox = new Inbox(ctx.server)
    const session = yield* Legacy.open(ctx, options.url, inbox, Duration.toMillis(options.httpTimeout ?? "30 seconds"))
    yield* Effect.addFinalizer(() => Effect.sync(() => inbox.end(Http.closedError(ctx, "the connection was closed"))))
    return {
      server: ctx.server,
      kind: "sse",
      send: (message) =>
        inbox.open ? session.send(message) : Effect.fail(Http.closedError(ctx, "the connection is closed")),
      listen: inbox.listen,
      info: () => ({ url: safeUrl(options.url), endpoint: safeUrl(session.endpoint) })
    } satisfies Transport
  })

/**
 * A layer providing an HTTP+SSE Transport.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Transport, McpError.McpError, HttpClient.HttpClient> =>
  Layer.scoped(Transport, make(options))
