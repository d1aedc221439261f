/**
 * The Transport service: a scoped duplex of JSON-RPC messages between mcp-fleet and one
 * server. Framing, processes and sockets live below it; everything above speaks messages.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type * as JsonRpc from "./JsonRpc.js"
import type { McpError } from "./McpError.js"

/**
 * A request the transport could not get an answer to, while the connection itself goes on:
 * an HTTP server refused that one POST, or its response stream was lost for good. The
 * request with this id fails with `error`.
 *
 * @since 0.1.0
 */
export class RequestFailed {
  readonly _tag = "RequestFailed"
  constructor(readonly id: JsonRpc.RequestId, readonly error: McpError) {}
}

/**
 * What a transport delivers: the server's messages, and requests that failed on the way.
 *
 * @since 0.1.0
 */
export type Incoming = JsonRpc.Message | RequestFailed

/**
 * One open connection. It lives as long as the Scope it was made in.
 *
 * @since 0.1.0
 */
export interface TransportService {
  /** The name of the server this connection goes to, used in every error and log line. */
  readonly server: string
  /** What kind of transport this is ("stdio", "http", "sse", "ws", "memory", ...). */
  readonly kind: string
  /** Sends one message. Fails with a Closed or Transport error once the connection is gone. */
  readonly send: (message: JsonRpc.Message) => Effect.Effect<void, McpError>
  /**
   * The messages the server sends, in order, and any request the transport gave up on.
   * Read it once. It ends or fails when the connection closes; a failure is an McpError
   * whose reason says why (for a process: its exit code or signal and the tail of its stderr).
   */
  readonly incoming: Stream.Stream<Incoming, McpError>
  /** Facts for status and diagnostics, such as a process id. */
  readonly info: () => Record<string, unknown>
}

/**
 * The Transport service tag.
 *
 * @since 0.1.0
 */
export class Transport extends Context.Tag("mcp-fleet/Transport")<Transport, TransportService>() {}
