/**
 * The Streamable HTTP transport (MCP 2025-03-26 and later): every message is a POST, and
 * the server answers a request with one JSON body or an event stream that may carry
 * progress, log messages and requests before the response; what such a stream carries is
 * delivered with the id of the request its POST sent (`Transport.Receiver`'s `related`), so
 * a server's request made for one of ours reaches the call that sent it. A standing GET
 * stream carries what the server sends unasked (stateful revisions), related to nothing.
 * A request of 2026-07-28 (its revision in `_meta`) has its body mirrored into the request metadata headers, a JSON-RPC error in a
 * 400 or 404 refusal as its answer, and no session; cancelling it closes its stream. Lost streams are resumed with `Last-Event-ID`. When the
 * server forgets the session (404), the connection ends with a Closed error marked
 * `sessionExpired`: its owner reconnects, and the new connection initializes again (a
 * transport never speaks the handshake itself). When it refuses our credentials (401 or
 * 403), the connection ends with that Http error: the fleet waits for new ones (NeedsAuth). Servers that only speak the 2024-11-05
 * HTTP+SSE transport are detected and spoken to with {@link LegacySse}.
 *
 * Answers are read in the HTTP client's callbacks and delivered from there; with
 * `HttpClientUndici` a request costs no fiber, Stream or timer, and any other `HttpClient`
 * works too, at the price of a fiber per exchange.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { safeUrl } from "./internal/secrets.js"
import * as Http from "./internal/transport/http.js"
import * as Legacy from "./internal/transport/legacySse.js"
import { annotations, type Mirror } from "./internal/transport/mcpHeaders.js"
import { Connection, endsConnection } from "./internal/transport/streamableHttpConnection.js"
import { listen } from "./internal/transport/streamableHttpListen.js"
import * as Post from "./internal/transport/streamableHttpPost.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as McpError from "./McpError.js"
import { Inbox, RequestFailed, Transport } from "./Transport.js"

/**
 * How to reach an HTTP server.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The server's name, used in errors and logs. */
  readonly name: string
  /** The MCP endpoint. */
  readonly url: string
  /** Headers sent with every request (authorization, API keys); secrets may be Redacted. */
  readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  /**
   * `streamable`: Streamable HTTP only. `sse`: the 2024-11-05 HTTP+SSE transport only.
   * `auto` (the default): Streamable HTTP, falling back to HTTP+SSE when the server refuses
   * initialize with 400, 404 or 405 (any 4xx but 401 and 403 when asking for 2024-11-05).
   */
  readonly mode?: "auto" | "streamable" | "sse" | undefined
  /** The largest body or event accepted. Default: 16 MiB. */
  readonly maxMessageBytes?: number | undefined
  /**
   * How long the server may take to accept a message that expects no answer, open a
   * stream, or end the session. A request's own answer is bounded by the request's
   * timeout instead. Default: 30 seconds.
   */
  readonly httpTimeout?: Duration.DurationInput | undefined
  /** Reconnecting a lost stream: delays double from `initialDelay` up to `maxDelay`, unless the server's `retry` says otherwise; `maxAttempts` in a row without an event, then give up. */
  readonly reconnect?: {
    readonly initialDelay?: Duration.DurationInput | undefined
    readonly maxDelay?: Duration.DurationInput | undefined
    readonly maxAttempts?: number | undefined
  } | undefined
  /** Which redirects to follow: `same-origin` (the default), `any` or `none`. */
  readonly redirects?: Http.Redirects | undefined
  /**
   * Credentials made for each request (an OAuth DPoP-bound token and its proof); a bearer
   * token goes in `headers` instead, made once.
   */
  readonly auth?: RequestAuth | undefined
}

/**
 * Credentials made for each request: `headers(method, url)` gives the headers to add
 * (`authorization`, `dpop`), and `answered` sees every answer's status and headers, and asks
 * for the request to be sent once more (a DPoP nonce challenge).
 *
 * @since 0.1.0
 * @category models
 */
export type RequestAuth = Http.RequestAuth

// Whether a refused initialize means the server predates Streamable HTTP.
const canFallBack = (request: JsonRpc.Request, status: number) =>
  status === 400 || status === 404 || status === 405 ||
  (status >= 400 && status < 500 && status !== 401 && status !== 403 &&
    (request.params as { protocolVersion?: unknown } | undefined)?.protocolVersion === "2024-11-05")

// The tools whose arguments the connection mirrors into headers (`x-mcp-header`), and why
// the others' annotations were rejected.
const mirrorToolArguments = (
  conn: Connection,
  tools: ReadonlyArray<{ readonly name: string; readonly inputSchema: unknown }>
): ReadonlyMap<string, string> => {
  const mirrors = new Map<string, ReadonlyArray<Mirror>>()
  const rejected = new Map<string, string>()
  for (const tool of tools) {
    const found = annotations(tool.inputSchema)
    if (found._tag === "Invalid") rejected.set(tool.name, found.reason)
    else if (found.mirrors.length > 0) mirrors.set(tool.name, found.mirrors)
  }
  conn.toolMirrors = mirrors
  return rejected
}

// Ends the session on the server; 405 means the server does not allow it.
const endSession = (ctx: Http.Context, conn: Connection, httpTimeoutMs: number): Effect.Effect<void> =>
  Http.open(ctx, { method: "DELETE", url: conn.url, headers: conn.headers({}) }, "DELETE").pipe(
    Effect.flatMap(Http.discard),
    Effect.timeout(Duration.millis(httpTimeoutMs)),
    Effect.ignore
  )

// The connection's state, delivering what the server sends to `inbox`.
const connectionOf = (ctx: Http.Context, options: Options, inbox: Inbox): Connection =>
  new Connection(ctx, options.url, {
    httpTimeoutMs: Duration.toMillis(options.httpTimeout ?? "30 seconds"),
    initialDelayMs: Duration.toMillis(options.reconnect?.initialDelay ?? "500 millis"),
    maxDelayMs: Duration.toMillis(options.reconnect?.maxDelay ?? "30 seconds"),
    maxAttempts: options.reconnect?.maxAttempts ?? 5
  }, (message, related) => inbox.deliver(message, related))

// Stops reading the answer of the request a cancellation names; gives its exchange, if any.
const stopCancelled = (
  exchanges: Map<JsonRpc.RequestId, Post.PostedRequest>,
  cancellation: JsonRpc.Request | JsonRpc.Notification
): Post.PostedRequest | undefined => {
  const id = cancellation.params?.requestId as JsonRpc.RequestId
  const exchange = exchanges.get(id)
  exchange?.stop()
  exchanges.delete(id)
  return exchange
}

// Opens the 2024-11-05 transport a server that refused Streamable HTTP may speak, logged.
const fallBackTo = (
  ctx: Http.Context,
  openLegacy: Effect.Effect<Legacy.Session, McpError.McpError>,
  status: number
): Effect.Effect<Legacy.Session, McpError.McpError> =>
  Effect.zipRight(
    Effect.logInfo(
      `server '${ctx.server}' refused Streamable HTTP (HTTP ${status}); trying the 2024-11-05 HTTP+SSE transport`
    ).pipe(Effect.annotateLogs({ server: ctx.server })),
    openLegacy
  )

/**
 * Connects to the server, owned by the current Scope. Nothing is sent until the first
 * message (initialize), except in `sse` mode, which opens its event stream at once.
 * `send` fails with a Closed error once the connection is gone, with a Transport error when
 * the server cannot be reached, or an Http error when it refuses a message that expects no
 * answer; a request's own failures come to the Peer as `RequestFailed`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<Transport, McpError.McpError, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const mode = options.mode ?? "auto"
    const ctx = yield* Http.makeContext(options)
    const inbox = new Inbox(ctx.server)
    const conn = connectionOf(ctx, options, inbox)
    const httpTimeoutMs = conn.settings.httpTimeoutMs
    // The requests under way, to stop one when it is cancelled, and all when closing.
    const exchanges = new Map<JsonRpc.RequestId, Post.PostedRequest>()
    let stopListening = () => {}
    let legacy: Legacy.Session | undefined
    const scope = yield* Effect.scope
    // The legacy event stream belongs to this transport's Scope, whichever fiber opens it.
    const openLegacy = Effect.provideService(Legacy.open(ctx, options.url, inbox, httpTimeoutMs), Scope.Scope, scope)

    // The session the server forgot (a 404), while requests of it are still out: each of
    // them is either refused the same way (not run: unsent, sent again on the next
    // connection) or answered, so the connection ends once the last one is settled.
    let expired: McpError.McpError | undefined
    const settled = () => expired !== undefined && exchanges.size === 0 && inbox.end(expired)
    const end = (error: McpError.McpError) => {
      if (!endsConnection(error)) return
      if (error.reason._tag !== "Closed" || error.reason.sessionExpired !== true) return inbox.end(error)
      expired ??= conn.sessionExpired()
      settled()
    }

    // Switches to the 2024-11-05 transport on the same URL, and sends it the refused initialize.
    const fallBack = (request: JsonRpc.Request, status: number) =>
      Effect.tap(fallBackTo(ctx, openLegacy, status), (session) => {
        legacy = session
        return session.send(request)
      }).pipe(Effect.catchAll((error) => Effect.sync(() => owner.done(request.id, error))))

    const owner: Post.Owner = {
      done: (id, error) => {
        exchanges.delete(id)
        if (error === undefined) return void settled()
        inbox.deliver(new RequestFailed(id, error))
        end(error)
      },
      refused: (request, status) => {
        if (mode !== "auto" || request.method !== "initialize" || !canFallBack(request, status)) return false
        exchanges.delete(request.id)
        ctx.fork(fallBack(request, status))
        return true
      }
    }

    const request = (message: JsonRpc.Request) => {
      if (message.method === "initialize") conn.initializeId = message.id
      const posted = new Post.PostedRequest(conn, message, owner)
      if (!posted.finished) exchanges.set(message.id, posted)
    }

    // After initialized, open the GET stream, and return once the server has answered it:
    // a server may send requests there as soon as the connection is ready (elicitation
    // during the first tool call), and drops them when no stream is open.
    const opened = Effect.map(listen(conn, (error) => inbox.end(error)), (stop) => {
      stopListening = stop
    })

    // Once the session is forgotten nothing more goes to it (a request refused here was not
    // sent); a cancellation only stops reading its request's answer.
    const afterExpiry = (message: JsonRpc.Message): Effect.Effect<void, McpError.McpError> => {
      if (!("method" in message) || message.method !== "notifications/cancelled") return Effect.fail(expired!)
      stopCancelled(exchanges, message)
      return Effect.sync(settled)
    }

    const send = (message: JsonRpc.Message): Effect.Effect<void, McpError.McpError> =>
      Effect.suspend(() => {
        if (conn.closing || !inbox.open) return Effect.fail(Http.closedError(ctx, "the connection is closed"))
        if (legacy !== undefined) return legacy.send(message)
        if (expired !== undefined) return afterExpiry(message)
        if (JsonRpc.isRequest(message)) return Effect.sync(() => request(message))
        const what = "method" in message ? message.method : "a response"
        const sent = Effect.tapError(Post.notify(conn, message, what), (error) => Effect.sync(() => end(error)))
        if (!("method" in message)) return sent
        if (message.method === "notifications/initialized") return Effect.zipRight(sent, opened)
        // After a cancellation, stop reading the cancelled request's answer. For a request of
        // 2026-07-28, closing its stream is the cancellation: nothing is posted.
        if (message.method === "notifications/cancelled" && stopCancelled(exchanges, message)?.modern === true) {
          return Effect.void
        }
        return sent
      })

    if (mode === "sse") legacy = yield* openLegacy

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        conn.closing = true
        for (const exchange of exchanges.values()) exchange.stop()
        exchanges.clear()
        stopListening()
        if (conn.sessionId !== undefined && legacy === undefined) {
          yield* endSession(ctx, conn, httpTimeoutMs)
        }
        inbox.end(Http.closedError(ctx, "the connection was closed"))
      })
    )

    return {
      server: ctx.server,
      get kind() {
        return legacy === undefined ? "http" : "sse"
      },
      send,
      listen: inbox.listen,
      mirrorToolArguments: (tools) => mirrorToolArguments(conn, tools),
      info: () => ({
        url: safeUrl(conn.url),
        ...(legacy === undefined ? {} : { endpoint: safeUrl(legacy.endpoint) }),
        ...(conn.sessionId === undefined ? {} : { sessionId: conn.sessionId })
      })
    } satisfies Transport
  })

/**
 * A layer providing a Streamable HTTP Transport.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Transport, McpError.McpError, HttpClient.HttpClient> =>
  Layer.scoped(Transport, make(options))
