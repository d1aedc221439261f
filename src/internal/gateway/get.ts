/**
 * GET on the gateway's HTTP endpoint: with a Last-Event-ID naming a POST stream the session
 * still keeps, the rest of that stream; otherwise the session's standing stream of the
 * notifications not tied to a request (one at a time), with a comment now and then so idle
 * connections are not dropped on the way.
 *
 * @internal
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../JsonRpc.js"
import { checkGet, jsonRpcError } from "./guard.js"
import type * as HttpSession from "./httpSession.js"
import * as Response from "./response.js"
import type { SessionTable } from "./sessionTable.js"

/** How often an idle standing stream gets a comment. */
export const KEEP_ALIVE = Duration.seconds(25)

/**
 * Serves the standing stream of `session` until it ends (with the session) or the client
 * goes away; the session is active again when it does.
 */
export const standing = (
  request: HttpServerRequest.HttpServerRequest,
  session: HttpSession.HttpSession,
  headers: Record<string, string>
): Effect.Effect<void> =>
  Effect.flatMap(Effect.clock, (clock) => {
    let sink: HttpSession.HttpSession["standing"]
    const stream = Response.eventStream(request, headers, (response) => {
      let ended = false
      const reader = {
        write: response.write,
        end: () => {
          if (ended) return
          ended = true
          if (session.standing === reader) session.standing = undefined
          session.lastActive = clock.unsafeCurrentTimeMillis()
          response.end()
        }
      }
      session.standing = sink = reader
      // A comment first, so the client sees the stream open at once.
      reader.write(": stream open\n\n")
      return reader
    })
    const comments = Effect.forever(
      Effect.zipRight(Clock.sleep(KEEP_ALIVE), Effect.sync(() => sink?.write(": keep-alive\n\n")))
    )
    return Effect.interruptible(Effect.raceFirst(stream, comments))
  })

/** Handles a GET. */
export const handle = (
  request: HttpServerRequest.HttpServerRequest,
  table: SessionTable,
  headers: Record<string, string>
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const refused = checkGet(request.headers)
  if (refused !== undefined) return Effect.succeed(refused)
  const session = table.lookup(request.headers)
  if (HttpServerResponse.isServerResponse(session)) return Effect.succeed(session)
  const resumed = session.logs.resume(request.headers["last-event-id"])
  if (resumed !== undefined) {
    return Effect.as(
      Response.eventStream(request, headers, (sink) => session.logs.read(resumed.log, resumed.from, sink)),
      HttpServerResponse.empty()
    )
  }
  if (session.standing !== undefined) {
    return Effect.succeed(jsonRpcError(409, JsonRpc.ErrorCode.InvalidRequest, "Conflict: this session already has a GET stream"))
  }
  return Effect.as(standing(request, session, headers), HttpServerResponse.empty())
}
