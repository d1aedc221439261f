/**
 * One modern (2026-07-28) request answered on its own, with no session around it: no Peer,
 * no Inbox, no Scope of its own beyond what its handlers need (`stateless.ts`). The method
 * table is made once per server; each request gets a plain `Session` object over the
 * `Outbound` its transport gives (where its notifications go), and its answer as a
 * JSON-RPC response. Interrupting the effect cancels the request. This is what a
 * Streamable HTTP POST without a session runs (`http/modern.ts`): a session per request
 * cost more than the request.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import type { Options, Outbound } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import { methodNotFound } from "./errors.js"
import * as Methods from "./methods.js"
import { type Answer, modernMethods, Session, spanned } from "./session.js"
import * as Stateless from "./stateless.js"

/** Answers one modern request; its notifications go to `outbound.notify`. */
export type AnswerAlone = (
  request: JsonRpc.Request,
  outbound: Outbound
) => Effect.Effect<JsonRpc.Success | JsonRpc.Failure>

// What a request alone has for a Peer: nobody to send a request to outside its MRTR round,
// no notifications from the client, and no end of its own.
const detached = (name: string): Peer.Peer => {
  const closed = McpError.make(name, new McpError.ClosedReason({ message: "a modern request has no session" }))
  return {
    server: name,
    request: () => Effect.fail(closed),
    notify: () => Effect.void,
    subscribe: Queue.unbounded<JsonRpc.Notification>(),
    notifications: Stream.empty,
    closed: Effect.never,
    inFlight: () => 0
  }
}

// A handler's failure as a JSON-RPC error object (a defect is -32603; `spanned` logged it).
const errorObject = (cause: Cause.Cause<Peer.HandlerError>): JsonRpc.ErrorObject => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "None") return { code: JsonRpc.ErrorCode.InternalError, message: "internal error" }
  const { code, data, message } = failure.value
  return data === undefined ? { code, message } : { code, message, data }
}

/** The answering of modern requests alone for a server with `options` and `modern` state, in its `scope`. */
export const make = (options: Options, modern: Stateless.Modern, scope: Scope.Scope): AnswerAlone => {
  // Ping is not among them: the modern revision removed it. Each in its span, once.
  const methods = new Map<string, Answer>(
    Object.entries({ ...Methods.builtIn, ...modernMethods(modern), ...options.methods })
      .map(([method, handler]) => [method, spanned(method, handler)])
  )
  const peer = detached(options.serverInfo.name)
  return (request, outbound) => {
    const handler = methods.get(request.method)
    const session = new Session(options, scope, outbound, modern)
    session.peer = peer
    session.alone = true
    session.view = {
      peer,
      client: () => undefined,
      level: () => undefined,
      caller: outbound.caller,
      closed: peer.closed,
      notify: session.notify,
      request: session.send
    }
    const answered = handler === undefined
      ? Effect.fail(methodNotFound(request.method))
      : Stateless.answer(session, modern, request, (ctx) => handler(request, ctx))
    return Effect.map(Effect.exit(answered), (exit): JsonRpc.Success | JsonRpc.Failure =>
      Exit.isSuccess(exit)
        ? { jsonrpc: "2.0", id: request.id, result: exit.value }
        : { jsonrpc: "2.0", id: request.id, error: errorObject(exit.cause) })
  }
}
