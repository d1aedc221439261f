/**
 * One modern (2026-07-28) request answered on its own, with no session around it: no Peer,
 * no Inbox, no Scope of its own beyond what its handlers need (`modern.ts`). Each request
 * gets a plain `Session` object over the `Outbound` its transport gives (where its
 * notifications go), and its answer as a JSON-RPC response. Interrupting the effect cancels
 * the request. This is `McpServer.answerModern`, what a Streamable HTTP POST without a
 * session runs (`http/modern.ts`): a session per request cost more than the request. A
 * server without it (made otherwise) is answered by that session per request (`answerer`).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import type { McpServer, Options } from "../../McpServer.js"
import * as Memory from "../../Memory.js"
import type * as Peer from "../../Peer.js"
import { Transport } from "../../Transport.js"
import { networkAttributes } from "../telemetry.js"
import type { Era } from "./era.js"
import { tooDeep } from "./errors.js"
import { Session } from "./session.js"
import { served } from "./telemetry.js"

// What a request alone has for a Peer: nobody to send a request to outside its MRTR round,
// no notifications from the client, and no end of its own.
const detached = (name: string): Peer.Peer => {
  const closed = McpError.closed(name, { message: "a modern request has no session" })
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

/** How a server answers one modern request with no session of the transport's. */
export type AnswerModern = NonNullable<McpServer["answerModern"]>

const failure = (id: JsonRpc.RequestId, message: string): JsonRpc.Failure => ({
  jsonrpc: "2.0",
  id,
  error: { code: JsonRpc.ErrorCode.InternalError, message }
})

// Without `answerModern`: the request in a session of its own over Memory, ended once it is
// answered; its notifications go to `outbound.notify` all the same.
const inSession = (server: McpServer): AnswerModern => (request, outbound) =>
  Effect.scoped(Effect.gen(function*() {
    const [client, end] = yield* Memory.makePair({ server: "modern request", client: "client" })
    const answered = yield* Deferred.make<JsonRpc.Success | JsonRpc.Failure>()
    client.listen({
      message: (message) => {
        if (!("_tag" in message) && JsonRpc.isResponse(message) && message.id === request.id) {
          Deferred.unsafeDone(answered, Exit.succeed(message))
        }
      },
      closed: (error) => Deferred.unsafeDone(answered, Exit.succeed(failure(request.id, error.message)))
    })
    yield* Effect.provideService(server.connect(outbound), Transport, end)
    const sent = yield* Effect.either(client.send(request))
    return sent._tag === "Left" ? failure(request.id, sent.left.message) : yield* Deferred.await(answered)
  }))

/**
 * How `server` answers a modern request outside any session of the transport's: its
 * `answerModern`, else in a session made for the request; none when it answers no modern
 * requests.
 */
export const answerer = (server: McpServer): AnswerModern | undefined =>
  !server.modern ? undefined : server.answerModern ?? inSession(server)

/** The answering of modern requests alone by the `modern` era of a server with `options`, in its `scope`. */
export const make = (
  options: Options,
  modern: Era,
  scope: Scope.Scope
): AnswerModern => {
  const peer = detached(options.serverInfo.name)
  // A modern request names its revision itself; over HTTP, the only transport that runs this.
  const serve = served(options.serverInfo.name, () => networkAttributes("http", undefined))
  return (request, outbound) => {
    const session = new Session(options, scope, outbound)
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
    const refused = tooDeep(request)
    return Effect.map(
      Effect.exit(serve(request, refused === undefined ? modern.answer(session, request) : Effect.fail(refused))),
      (exit): JsonRpc.Success | JsonRpc.Failure =>
        Exit.isSuccess(exit)
          ? { jsonrpc: "2.0", id: request.id, result: exit.value }
          : { jsonrpc: "2.0", id: request.id, error: errorObject(exit.cause) }
    )
  }
}
