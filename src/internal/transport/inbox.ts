/**
 * The receiving half every transport shares: it holds what arrives before the Peer listens,
 * then hands each message straight to the receiver, and ends the connection once.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "../../JsonRpc.js"
import type { McpError } from "../../McpError.js"
import type { Incoming, Receiver } from "../../Transport.js"

/** Delivery to one receiver, with what came before it listened kept in order. */
export class Inbox {
  private receiver: Receiver | undefined
  private early: Array<Incoming> | undefined = []
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
    for (const message of early) receiver.message(message)
    if (this.endedWith !== undefined) receiver.closed(this.endedWith)
  }

  /** Delivers one message; nothing is delivered after the end. */
  deliver(message: Incoming): void {
    if (this.endedWith !== undefined) return
    if (this.receiver === undefined) this.early!.push(message)
    else this.receiver.message(message)
  }

  /** Ends the connection with `error`; later calls do nothing. */
  end(error: McpError): void {
    if (this.endedWith !== undefined) return
    this.endedWith = error
    this.receiver?.closed(error)
  }
}

/** The Transport's `send`, for a transport whose `sendNow` does the work. */
export const sendWith = (sendNow: (message: JsonRpc.Message) => McpError | undefined) =>
(message: JsonRpc.Message): Effect.Effect<void, McpError> =>
  Effect.suspend(() => {
    const refused = sendNow(message)
    return refused === undefined ? Effect.void : Effect.fail(refused)
  })

/**
 * Delivers a stream of messages to the inbox in a fiber of the current Scope, and ends the
 * inbox when the stream ends (with `ended`) or fails (with its error). For transports whose
 * source is already a stream or queue; hot paths deliver from their callbacks instead.
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
