/**
 * The WebSocket transport, for servers that offer one: subprotocol `mcp`, one JSON-RPC
 * message (or batch) per text frame, custom headers on the upgrade request.
 *
 * @since 0.1.0
 */
import * as Socket from "@effect/platform/Socket"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { revealAll } from "./internal/reveal.js"
import { safeUrl, scrubCause, scrubUrls } from "./internal/secrets.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as Launcher from "./Launcher.js"
import * as McpError from "./McpError.js"
import { deliverBroken, Inbox, Transport } from "./Transport.js"

/**
 * How to reach a WebSocket server (declared by the neutral Launcher, which this module implements on Node).
 *
 * @since 0.1.0
 */
export type Options = Launcher.WebSocketOptions

const MESSAGE_TOO_BIG = 1009

/**
 * Opens the connection, owned by the current Scope; fails if it does not open.
 *
 * @since 0.1.0
 */
export const make = (options: Options): Effect.Effect<Transport, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const server = options.name
    const maxBytes = options.maxMessageBytes ?? JsonRpc.DEFAULT_MAX_MESSAGE_BYTES
    const headers = revealAll(options.headers)
    // Loaded by the first connection: a fleet with no WebSocket server never loads it.
    // Its default export, the WebSocket class: a bundle split in chunks gives CommonJS `ws` as that alone.
    const { default: WS } = yield* Effect.promise(() => import("ws"))
    const socket = yield* Socket.fromWebSocket(
      Effect.acquireRelease(
        // `ws` rather than the global WebSocket: only it can send headers with the upgrade.
        Effect.sync(() =>
          new WS(options.url, ["mcp"], { headers, maxPayload: maxBytes }) as unknown as globalThis.WebSocket
        ),
        (ws) => Effect.sync(() => ws.close(1000))
      ),
      { openTimeout: options.openTimeout ?? "10 seconds" }
    )
    const write = yield* socket.writer
    const inbox = new Inbox(server)
    const opened = yield* Deferred.make<void, McpError.McpError>()
    let open = true

    const receive = (data: string | Uint8Array) => {
      const text = typeof data === "string" ? data : Buffer.from(data).toString("utf8")
      const messages: Array<JsonRpc.Message> = []
      const bad: Array<JsonRpc.BadLine> = []
      JsonRpc.parseLine(text, messages, bad)
      for (const message of messages) inbox.deliver(message)
      if (bad.length === 0) return
      deliverBroken(bad, (incoming) => inbox.deliver(incoming))
      return JsonRpc.logSkipped(server, "sent a frame", bad)
    }

    yield* socket.runRaw(receive, { onOpen: Deferred.succeed(opened, undefined) }).pipe(
      Effect.matchEffect({
        onSuccess: () => Effect.succeed(closed(server, "the server closed the WebSocket")),
        onFailure: (error) => Effect.succeed(socketError(server, error, maxBytes))
      }),
      Effect.flatMap((error) =>
        Effect.sync(() => {
          open = false
          inbox.end(error)
        }).pipe(Effect.zipRight(Deferred.fail(opened, error)))
      ),
      Effect.forkScoped
    )
    yield* Deferred.await(opened)
    yield* Effect.addFinalizer(() => Effect.sync(() => open = false))

    return {
      server,
      kind: "ws",
      // The writer waits for the socket to be open: once it has closed, fail instead.
      send: (message) =>
        open
          ? Effect.mapError(write(JSON.stringify(message)), (error) => socketError(server, error, maxBytes))
          : Effect.fail(closed(server, "the connection is closed")),
      listen: inbox.listen,
      info: () => ({ url: safeUrl(options.url) })
    } satisfies Transport
  })

const closed = (server: string, message: string) => McpError.closed(server, { message })

// An upgrade refused with a status (401, 403, ...) becomes an Http error, so that the
// fleet can tell that the server wants credentials.
const socketError = (server: string, error: Socket.SocketError, maxBytes: number): McpError.McpError => {
  if (error.reason === "Close") {
    const close = error as Socket.SocketCloseError
    if (close.code === MESSAGE_TOO_BIG) {
      return McpError.limit(server, { what: "a message", limit: maxBytes })
    }
    return closed(
      server,
      `the WebSocket closed with code ${close.code}${close.closeReason ? ` (${close.closeReason})` : ""}`
    )
  }
  // `ws` reports a frame over maxPayload as an error event before it closes with 1009.
  const cause = (error as Socket.SocketGenericError).cause as
    | { message?: unknown; error?: { code?: unknown } }
    | undefined
  if (cause?.error?.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") {
    return McpError.limit(server, { what: "a message", limit: maxBytes })
  }
  const text = cause instanceof Error ? cause.message : String(cause?.message ?? cause)
  const status = /Unexpected server response: (\d+)/.exec(text)?.[1]
  if (status !== undefined) {
    return McpError.http(
      server,
      { status: Number(status), method: "the WebSocket upgrade", body: "" }
    )
  }
  return McpError.transport(
    server,
    { message: `the WebSocket failed (${error.reason}): ${scrubUrls(text)}` },
    // Its event holds the socket, and the socket the URL with its token: keep the text only.
    scrubCause(error)
  )
}

/**
 * A layer providing a WebSocket Transport.
 *
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<Transport, McpError.McpError> =>
  Layer.scoped(Transport, make(options))
