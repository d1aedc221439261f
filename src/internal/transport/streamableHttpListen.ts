/**
 * The standing GET stream of a Streamable HTTP connection, for what the server sends
 * unasked. 405 means the server has none; another 4xx (a server that only half implements
 * the spec) is taken the same way, with a warning, since its requests and notifications can
 * still come on answers. A 401 or 403 is a refusal of our credentials, as on a POST: the
 * connection ends with it, and its owner refreshes or waits for new ones (NeedsAuth). When
 * the stream is lost for good, the connection ends.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as McpError from "../../McpError.js"
import * as Http from "./http.js"
import type { Connection } from "./streamableHttpConnection.js"
import { EventStream, openGet } from "./streamableHttpStream.js"

const WHAT = "the server message stream (GET)"

/**
 * Opens the stream, and completes once the server has answered the GET; the stream is then
 * read in its callbacks. `onEnd` gets why it ended (not when closing). Returns what stops
 * it; fails too when the server refused our credentials, so that the message that opened
 * it (`notifications/initialized`) fails with that refusal rather than what follows it.
 */
export const listen = (
  conn: Connection,
  onEnd: (error: McpError.McpError) => void
): Effect.Effect<() => void, McpError.McpError> =>
  Effect.gen(function*() {
    const server = conn.ctx.server
    const sentIn = conn.sessionId
    const opened = yield* openGet(conn, WHAT, undefined)
    const response = opened.response
    if (response.status === 404 && sentIn !== undefined) {
      yield* Http.discard(opened)
      return yield* Effect.fail(conn.sessionExpired())
    }
    if (response.status >= 400 && response.status < 500 && response.status !== 401 && response.status !== 403) {
      if (response.status !== 405) {
        yield* Effect.logWarning(
          `server '${server}' refused ${WHAT} with HTTP ${response.status}; it can only send messages on answers`
        ).pipe(Effect.annotateLogs({ server }))
      }
      yield* Http.discard(opened)
      return () => {}
    }
    if (!response.ok) {
      return yield* Effect.fail(yield* Http.statusError(conn.ctx, opened, WHAT, conn.settings.httpTimeoutMs))
    }
    const stream = new EventStream(conn, { method: WHAT, awaiting: undefined }, {
      ended: (error) => {
        if (error !== undefined && !conn.closing) onEnd(error)
      }
    })
    opened.read(stream.sink(response))
    return () => stream.stop()
  }).pipe(Effect.catchAll((error) => {
    if (!conn.closing) onEnd(error)
    return error.needsAuth ? Effect.fail(error) : Effect.succeed(() => {})
  }))
