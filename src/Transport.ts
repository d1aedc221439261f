/**
 * The Transport service: a scoped duplex of JSON-RPC messages between mcp-fleet and one
 * server. Framing, processes and sockets live below it; everything above speaks messages.
 *
 * Delivery is push: a transport hands each decoded message to its one {@link Receiver}
 * synchronously, from the I/O callback that read it, so an answer completes its request
 * with no Stream, Queue or fiber hop in between. Sends are coalesced by the transports that
 * write to a byte stream: what is sent in one tick goes out in one write.
 *
 * A transport that knows which of our requests a message came with tells it alongside the
 * message (`related`): Streamable HTTP, for what arrives on the event stream of the POST
 * that carried the request (the spec has a server send a request's own requests there).
 * Transports with one stream for everything (stdio, HTTP+SSE, WebSocket) know of no relation.
 *
 * The kit for writing one: `Inbox` (keeps what arrives before the Peer listens), `sendWith`,
 * `deliverStream`. A transport that mirrors tool arguments into headers (Streamable HTTP,
 * modern revision) is told the listed tools' annotations (`mirrorToolArguments`). A transport
 * never speaks the handshake, authorizes or retries: a forgotten session or a refused
 * credential ends the connection with a typed error, and its owner decides.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
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
 * An answer to the request with this id that is not a valid JSON-RPC response (a result
 * and an error, no `"jsonrpc"`, a bad error object): the request fails at once with a
 * Protocol error quoting it, rather than waiting out its timeout. `problem` is the input as
 * it was reported, skipped.
 *
 * @since 0.1.0
 */
export class BrokenAnswer {
  readonly _tag = "BrokenAnswer"
  constructor(readonly id: JsonRpc.RequestId, readonly problem: JsonRpc.BadLine) {}
}

/**
 * What a transport delivers: the server's messages, requests that failed on the way, and
 * broken answers.
 *
 * @since 0.1.0
 */
export type Incoming = JsonRpc.Message | RequestFailed | BrokenAnswer

/**
 * Delivers the broken answers among the input a transport skipped (those with an `id`);
 * the rest was only worth reporting.
 *
 * @since 0.1.0
 * @category constructors
 */
export const deliverBroken = (bad: ReadonlyArray<JsonRpc.BadLine>, deliver: (incoming: Incoming) => void): void => {
  for (const problem of bad) if (problem.id !== undefined) deliver(new BrokenAnswer(problem.id, problem))
}

/**
 * Where a transport delivers what it receives. The Peer is the one receiver of a connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface Receiver {
  /**
   * One message, or a request the transport gave up on, in the order received. Called
   * synchronously from the transport's I/O callback; it must not throw or block. `related`
   * is the id of our request whose response stream carried the message, when the transport
   * knows it (Streamable HTTP: a POST's event stream); undefined otherwise.
   */
  readonly message: (message: Incoming, related?: JsonRpc.RequestId) => void
  /**
   * The connection ended, after the last message. Called once. `error` says why: for a
   * process, its exit code or signal and the tail of its stderr.
   */
  readonly closed: (error: McpError) => void
}

/**
 * One open connection. It lives as long as the Scope it was made in.
 *
 * @since 0.1.0
 */
export interface Transport {
  /** The name of the server this connection goes to, used in every error and log line. */
  readonly server: string
  /** What kind of transport this is ("stdio", "http", "sse", "ws", "memory", ...). */
  readonly kind: string
  /**
   * Sends one message. Fails with a Closed or Transport error once the connection is gone; a
   * Closed failure means the message was not sent (the Peer fails such a request `unsent`).
   */
  readonly send: (message: JsonRpc.Message) => Effect.Effect<void, McpError>
  /**
   * `send` without the Effect, for transports whose send never waits (it only queues the
   * message for the next write): returns the error when the connection cannot take it, and
   * the message was then not sent.
   * The Peer sends requests with it when it is there, keeping the per-call path to one
   * suspension.
   */
  readonly sendNow?: ((message: JsonRpc.Message) => McpError | undefined) | undefined
  /**
   * Starts delivering to `receiver` what the server sends; whatever came before is
   * delivered first, in order. Called once per connection (by the Peer); a second call
   * throws.
   */
  readonly listen: (receiver: Receiver) => void
  /** Facts for status and diagnostics, such as a process id. */
  readonly info: () => Record<string, unknown>
  /**
   * Told the tools a 2026-07-28 server listed, by a transport that mirrors tool arguments
   * into headers (Streamable HTTP: `x-mcp-header`): it keeps what to mirror on each call and
   * returns the tools whose annotations are invalid, with why — tools the client must drop.
   */
  readonly mirrorToolArguments?:
    | ((tools: ReadonlyArray<{ readonly name: string; readonly inputSchema: unknown }>) => ReadonlyMap<string, string>)
    | undefined
}

/**
 * The Transport service tag.
 *
 * @since 0.1.0
 */
export const Transport = Context.GenericTag<Transport>("mcp-fleet/Transport")

/**
 * The receiving half of a transport, for those who write one: it keeps what arrives before
 * the Peer listens, then hands each message straight to the receiver, and ends the
 * connection once. A transport's `listen` is its `listen`.
 *
 * @since 0.1.0
 * @category constructors
 */
export class Inbox {
  private receiver: Receiver | undefined
  // What came before `listen`, each with the request it relates to.
  private early: Array<readonly [Incoming, JsonRpc.RequestId | undefined]> | undefined = []
  private endedWith: McpError | undefined

  constructor(readonly server: string) {}

  /** Whether the connection has not ended yet. */
  get open(): boolean {
    return this.endedWith === undefined
  }

  /** The Transport's `listen`. */
  readonly listen = (receiver: Receiver): void => {
    if (this.receiver !== undefined) throw new Error(`the transport of server '${this.server}' already has a receiver`)
    this.receiver = receiver
    const early = this.early!
    this.early = undefined
    for (const [message, related] of early) receiver.message(message, related)
    if (this.endedWith !== undefined) receiver.closed(this.endedWith)
  }

  /**
   * Delivers one message, with the id of our request it came with when known (see
   * `Receiver.message`); nothing is delivered after the end.
   */
  deliver(message: Incoming, related?: JsonRpc.RequestId): void {
    if (this.endedWith !== undefined) return
    if (this.receiver === undefined) this.early!.push([message, related])
    else this.receiver.message(message, related)
  }

  /** Ends the connection with `error`; later calls do nothing. */
  end(error: McpError): void {
    if (this.endedWith !== undefined) return
    this.endedWith = error
    this.receiver?.closed(error)
  }
}

/**
 * A Transport's `send` from its `sendNow`, for a transport whose send never waits.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sendWith =
  (sendNow: (message: JsonRpc.Message) => McpError | undefined) =>
  (message: JsonRpc.Message): Effect.Effect<void, McpError> =>
    Effect.suspend(() => {
      const refused = sendNow(message)
      return refused === undefined ? Effect.void : Effect.fail(refused)
    })

/**
 * Delivers a stream of messages to the inbox in a fiber of the current Scope, and ends the
 * inbox when the stream ends (with `ended`) or fails (with its error). For transports whose
 * source is already a stream or queue; hot paths deliver from their callbacks instead.
 *
 * @since 0.1.0
 * @category constructors
 */
export const deliverStream = <E extends McpError>(
  inbox: Inbox,
  stream: Stream.Stream<Incoming, E>,
  ended: () => McpError
): Effect.Effect<void, never, Scope.Scope> =>
  stream.pipe(
    Stream.runForEachChunk((chunk) =>
      Effect.sync(() => {
        for (const message of chunk) inbox.deliver(message)
      })
    ),
    Effect.matchCause({
      onSuccess: () => inbox.end(ended()),
      onFailure: (cause) => inbox.end(Option.getOrElse(Cause.failureOption(cause), ended))
    }),
    Effect.forkScoped,
    Effect.asVoid
  )
