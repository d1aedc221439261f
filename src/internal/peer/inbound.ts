/**
 * The requests the other side sends a Peer: each runs its handler (told which request of
 * ours it was sent for, when the transport knows) in a fiber of the session's FiberSet and
 * is answered when it ends; `notifications/cancelled` interrupts it.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import type { Handler, HandlerError } from "../../Peer.js"

/** What the Peer needs of the requests it is sent. */
export interface Inbound {
  /**
   * Starts answering a request (sent for our request `related`, when known); returns what
   * must still run, if anything.
   */
  readonly request: (
    message: JsonRpc.Request,
    related: JsonRpc.RequestId | undefined
  ) => Effect.Effect<void> | undefined
  /** The other side gave up on a request: its handler is interrupted. */
  readonly cancelled: (requestId: unknown) => void
}

/** Handles the other side's requests with `handlers` (plus `ping`), answering through `send`. */
export const makeInbound = (options: {
  readonly handlers: Readonly<Record<string, Handler>> | undefined
  readonly run: (effect: Effect.Effect<unknown, unknown>) => Fiber.RuntimeFiber<unknown, unknown>
  readonly send: (message: JsonRpc.Message) => Effect.Effect<void, McpError.McpError>
}): Inbound => {
  // A Map, not an object: a method named after an Object.prototype member must not find one.
  const handlers = new Map<string, Handler>([
    ["ping", () => Effect.succeed({})],
    ...Object.entries(options.handlers ?? {})
  ])
  const running = new Map<JsonRpc.RequestId, Fiber.RuntimeFiber<unknown, unknown>>()

  const respond = (id: JsonRpc.RequestId, exit: Exit.Exit<Record<string, unknown>, HandlerError>) => {
    if (Exit.isInterrupted(exit)) return Effect.void
    return answer(
      Exit.isSuccess(exit)
        ? { jsonrpc: "2.0", id, result: exit.value }
        : { jsonrpc: "2.0", id, error: errorObject(exit.cause) }
    )
  }
  const answer = (message: JsonRpc.Message) => Effect.ignore(options.send(message))

  return {
    request: (message, related) => {
      const handler = handlers.get(message.method)
      if (handler === undefined) {
        return answer({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: JsonRpc.ErrorCode.MethodNotFound, message: `Method not found: ${message.method}` }
        })
      }
      const id = message.id
      const fiber = options.run(
        handler(message, related).pipe(
          Effect.onExit((exit) => Effect.zipRight(Effect.sync(() => running.delete(id)), respond(id, exit)))
        )
      )
      if (fiber.unsafePoll() === null) running.set(id, fiber)
      return undefined
    },
    cancelled: (requestId) => {
      const fiber = typeof requestId === "string" || typeof requestId === "number" ? running.get(requestId) : undefined
      fiber?.unsafeInterruptAsFork(FiberId.none)
    }
  }
}

const errorObject = (cause: Cause.Cause<HandlerError>): JsonRpc.ErrorObject => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const { code, data, message } = failure.value
    return data === undefined ? { code, message } : { code, message, data }
  }
  return { code: JsonRpc.ErrorCode.InternalError, message: Cause.pretty(cause).split("\n")[0] ?? "internal error" }
}
