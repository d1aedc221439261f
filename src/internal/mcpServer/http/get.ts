/**
 * GET on the Streamable HTTP endpoint: with a Last-Event-ID naming a POST stream the session
 * still keeps, the rest of that stream; otherwise the session's standing stream of the
 * notifications not tied to a request (one at a time), with a comment now and then so idle
 * connections are not dropped on the way.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../../JsonRpc.js"
import type { Exchange, Io } from "./exchange.js"
import { type Caller, checkGet, jsonRpcError } from "./guard.js"
import type * as HttpSession from "./httpSession.js"
import * as Response from "./response.js"
import type { SessionTable } from "./sessionTable.js"
import { sseEvent } from "./streamLog.js"

/** How often an idle standing stream gets a comment. */
export const KEEP_ALIVE = Duration.seconds(25)

/**
 * Serves the standing stream of `session` until it ends (with the session) or the client
 * goes away; the session is active again when it does.
 */
export const standing = <X>(
  io: Exchange<X>,
  exchange: X,
  session: HttpSession.HttpSession,
  headers: Record<string, string>
): Effect.Effect<void> =>
  Effect.flatMap(Effect.clock, (clock) => {
    let sink: HttpSession.HttpSession["standing"]
    const stream = Effect.async<void>((resume) => {
      Response.eventStream(io, exchange, headers, (events) => {
        let ended = false
        const reader = {
          write: events.write,
          end: () => {
            if (ended) return
            ended = true
            if (session.standing === reader) session.standing = undefined
            session.lastActive = clock.unsafeCurrentTimeMillis()
            events.end()
            resume(Effect.void)
          }
        }
        session.standing = sink = reader
        // A comment first, so the client sees the stream open at once.
        reader.write(": stream open\n\n")
        for (const request of session.held.splice(0)) reader.write(sseEvent(request))
        return reader
      })
      return Effect.sync(() => sink?.end())
    })
    const comments = Effect.forever(
      Effect.zipRight(Clock.sleep(KEEP_ALIVE), Effect.sync(() => sink?.write(": keep-alive\n\n")))
    )
    return Effect.raceFirst(stream, comments)
  })

const CONFLICT = jsonRpcError(409, JsonRpc.ErrorCode.InvalidRequest, "Conflict: this session already has a GET stream")

/** Handles a GET; the standing stream is served by a fiber, for its keep-alive comments. */
export const handle = <X>(
  io: Io<X>,
  exchange: X,
  table: SessionTable,
  headers: Record<string, string>,
  caller: Caller | undefined
): void => {
  const requestHeaders = io.headers(exchange)
  const refused = checkGet(requestHeaders)
  if (refused !== undefined) return io.send(exchange, refused, headers)
  const session = table.lookup(requestHeaders, caller)
  if (session instanceof Response.Answer) return io.send(exchange, session, headers)
  const resumed = session.logs.resume(requestHeaders["last-event-id"])
  if (resumed !== undefined) {
    return Response.eventStream(io, exchange, headers, (sink) => session.logs.read(resumed.log, resumed.from, sink))
  }
  if (session.standing !== undefined) return io.send(exchange, CONFLICT, headers)
  io.fork(exchange, standing(io, exchange, session, headers))
}
