/**
 * One session of a Streamable HTTP endpoint: an McpServer session over a transport that
 * sends each answer to the POST that asked for it (its sink) and every other message to the
 * session's standing GET stream, if one is open.
 *
 * A session opened with an access token is that caller's (`HttpSession.caller`): another caller
 * naming it gets 404, and its handlers see the caller as `McpServer.Session.caller`. Its
 * `owner` (principal, address) is what the session table's caps count.
 *
 * @internal
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as FiberRef from "effect/FiberRef"
import * as Scope from "effect/Scope"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpError from "../../../McpError.js"
import type * as McpServer from "../../../McpServer.js"
import { Inbox, Transport } from "../../../Transport.js"
import type { Caller } from "./guard.js"
import { type EventSink, sseEvent, StreamLogs } from "./streamLog.js"

// The client's request that a request sent to the client belongs to, while it is sent.
const relatedRequest = FiberRef.unsafeMake<JsonRpc.RequestId | undefined>(undefined)

/** Where a POST's answers go: its SSE stream as they come, or its JSON body once all are in. */
export interface Sink {
  readonly sse: boolean
  /** The ids of the POST's requests not answered yet. */
  readonly waiting: Set<JsonRpc.RequestId>
  readonly push: (message: JsonRpc.Message) => void
}

/** One HTTP session. */
export interface HttpSession {
  readonly id: string
  readonly scope: Scope.CloseableScope
  readonly inbox: Inbox
  /** The POST waiting for each request's answer. */
  readonly sinks: Map<JsonRpc.RequestId, Sink>
  readonly logs: StreamLogs
  /** The standing GET stream, if one is open. */
  standing: EventSink | undefined
  /** Requests to the client made while no stream was open to carry them: sent when one opens. */
  readonly held: Array<JsonRpc.Request>
  /** When the client last sent something, or an open stream of it ended. */
  lastActive: number
  /** Who opened the session, by the access token of its initialize (with OAuth). */
  readonly caller: Caller | undefined
  /** Whom the session counts against: its principal and the client's address, when known. */
  readonly owner: Owner
  /** Whether the client came back after initialize (any later request naming the session). */
  established: boolean
}

/** Whom a session counts against in the table's caps. */
export interface Owner {
  /** The OAuth subject (issuer and `sub`), or the static token's holder; undefined without one. */
  readonly principal: string | undefined
  /** The client's network address, where the platform says. */
  readonly address: string | undefined
}

/** Whether a session is idle: no request waiting, no stream open, and quiet for `idleMs`. */
export const isIdle = (session: HttpSession, now: number, idleMs: number): boolean =>
  session.standing === undefined && session.logs.readers.size === 0 && session.sinks.size === 0 &&
  now - session.lastActive >= idleMs

/** Hands the client's messages to the session's Peer, and each request's answer to `sink`. */
export const deliver = (
  session: HttpSession,
  messages: ReadonlyArray<JsonRpc.Message>,
  sink: Sink | undefined
): void => {
  if (sink !== undefined) { for (const id of sink.waiting) session.sinks.set(id, sink) }
  for (const message of messages) session.inbox.deliver(message)
}

/**
 * Opens a session in a Scope forked from `parent`. Closing that Scope ends it: requests
 * still waiting get an error, and open streams end.
 */
export const open = (
  server: McpServer.McpServer,
  parent: Scope.Scope,
  clock: Clock.Clock,
  caller: Caller | undefined,
  owner: Owner
): Effect.Effect<HttpSession> =>
  Effect.gen(function*() {
    const id = globalThis.crypto.randomUUID()
    const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
    const inbox = new Inbox(`http client ${id.slice(0, 8)}`)
    const touch = () => {
      session.lastActive = clock.unsafeCurrentTimeMillis()
    }
    const session: HttpSession = {
      id,
      scope,
      inbox,
      sinks: new Map(),
      logs: new StreamLogs(touch),
      standing: undefined,
      held: [],
      lastActive: clock.unsafeCurrentTimeMillis(),
      caller,
      owner,
      established: false
    }
    // With no stream open the message has nowhere to go: the client is not listening.
    const toStanding = (message: JsonRpc.Message) => session.standing?.write(sseEvent(message))
    const answer = (message: JsonRpc.Message): void => {
      const sink = "method" in message || message.id === null ? undefined : session.sinks.get(message.id)
      if (sink === undefined) return void toStanding(message)
      session.sinks.delete(message.id!)
      sink.waiting.delete(message.id!)
      sink.push(message)
    }
    // A request to the client goes on the stream of the call it belongs to, when that is one.
    const toClient = (message: JsonRpc.Request) =>
      Effect.map(FiberRef.get(relatedRequest), (related) => {
        const sink = related === undefined ? undefined : session.sinks.get(related)
        if (sink?.sse) sink.push(message)
        else if (session.standing !== undefined) toStanding(message)
        else session.held.push(message)
      })
    const transport: Transport = {
      server: inbox.server,
      kind: "http",
      send: (message) => JsonRpc.isRequest(message) ? toClient(message) : Effect.sync(() => answer(message)),
      listen: inbox.listen,
      info: () => ({ sessionId: id })
    }
    yield* server.connect({
      notify: (method, params, related) =>
        Effect.sync(() => {
          const message: JsonRpc.Notification = { jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }
          const sink = related === undefined ? undefined : session.sinks.get(related)
          if (sink?.sse) sink.push(message)
          else toStanding(message)
        }),
      within: (related, send) => Effect.locally(send, relatedRequest, related),
      caller
    }).pipe(Effect.provideService(Transport, transport), Scope.extend(scope))
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => {
        inbox.end(McpError.closed(inbox.server, { message: "the session ended" }))
        for (const requestId of [...session.sinks.keys()]) {
          answer({
            jsonrpc: "2.0",
            id: requestId,
            error: { code: JsonRpc.ErrorCode.InternalError, message: "the session ended before the answer" }
          })
        }
        session.standing?.end()
        session.logs.endAll()
      })
    )
    return session
  })
