/**
 * The POST exchange of Streamable HTTP: a request's answer is one JSON body, an event
 * stream carrying the answer (and what the server sends meanwhile), or nothing (202 for
 * notifications and responses). The answer is read in the response's callbacks and
 * delivered from there: no fiber, Stream or timer per request. An error status fails the
 * request with an Http error; a 404 on a request that carried a session id means the server
 * forgot the session, which ends the connection.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import * as Http from "./http.js"
import type { Connection } from "./streamableHttpConnection.js"
import { EventStream, type Reading } from "./streamableHttpStream.js"

/** How an answer turned out, once: nothing when it was read, else why it failed. */
export type Done = (error: McpError.McpError | undefined) => void

/** Reads the answer to a POST; `stop` abandons it. */
export const readAnswer = (
  conn: Connection,
  response: Http.Response,
  reading: Reading,
  done: Done
): { readonly sink: Http.Sink; readonly stop: () => void } => {
  const type = response.mediaType
  if (type === "text/event-stream") {
    const stream = new EventStream(conn, reading, done)
    return { sink: stream.sink(response), stop: () => stream.stop() }
  }
  if (type === "application/json") {
    const onText = (text: string) => {
      if (text.trim() !== "") Http.parseMessages(conn.ctx, text, "a body", conn.deliver)
      done(undefined)
    }
    return { sink: Http.textSink(conn.ctx, response, `the answer to ${reading.method}`, onText, done), stop: response.abort }
  }
  if (response.status === 202 || response.header("content-length") === "0" || type === "") done(undefined)
  else {
    done(McpError.make(conn.ctx.server, new McpError.ValidationReason({
      message: `answered with content type '${type}', neither JSON nor an event stream`,
      method: reading.method
    })))
  }
  return { sink: Http.IGNORE, stop: response.abort }
}

const postOf = (conn: Connection, message: JsonRpc.Message) => ({
  method: "POST" as const,
  url: conn.url,
  headers: conn.post,
  body: JSON.stringify(message)
})

/**
 * POSTs a request and reads its answer, calling `done` once. `refused` is asked first about
 * an error status, and takes the exchange over when it returns true (the fallback to the
 * older transport). Returns what stops the exchange, for a cancellation.
 */
export const request = (
  conn: Connection,
  message: JsonRpc.Request,
  done: Done,
  refused: (status: number) => boolean
): () => void => {
  const reading: Reading = { method: message.method, awaiting: message.id }
  const sentIn = conn.sessionId
  let stop: () => void = () => {}
  const abort = Http.exchange(conn.ctx, postOf(conn, message), message.method, {
    onResponse: (response) => {
      stop = response.abort
      if (response.ok) {
        if (message.method === "initialize") conn.setSession(response.header("mcp-session-id"), conn.protocolVersion)
        const answer = readAnswer(conn, response, reading, done)
        stop = answer.stop
        return answer.sink
      }
      if (response.status === 404 && sentIn !== undefined) {
        done(conn.sessionExpired())
        return Http.IGNORE
      }
      if (refused(response.status)) return Http.IGNORE
      return Http.statusErrorSink(conn.ctx, response, message.method, done)
    },
    onFailure: done
  })
  stop = abort
  return () => stop()
}

/**
 * POSTs a message that expects no answer, and succeeds once the server accepted it, within
 * the HTTP timeout. A body that comes back anyway (an event stream) is read in the
 * background; what fails there is logged.
 */
export const notify = (conn: Connection, message: JsonRpc.Message, what: string): Effect.Effect<void, McpError.McpError> =>
  Effect.gen(function*() {
    const sentIn = conn.sessionId
    const opened = yield* Http.open(conn.ctx, postOf(conn, message), what).pipe(Effect.timeoutFail({
      duration: Duration.millis(conn.settings.httpTimeoutMs),
      onTimeout: () => Http.closedError(conn.ctx, `the server did not accept ${what} within the timeout`)
    }))
    const response = opened.response
    if (response.status === 404 && sentIn !== undefined) {
      yield* Http.discard(opened)
      return yield* Effect.fail(conn.sessionExpired())
    }
    if (!response.ok) return yield* Effect.fail(yield* Http.statusError(conn.ctx, opened, what))
    const server = conn.ctx.server
    const logLost = (error: McpError.McpError | undefined) => {
      if (error === undefined) return
      conn.ctx.fork(
        Effect.logWarning(`server '${server}': reading what came back for ${what} failed: ${error.message}`).pipe(
          Effect.annotateLogs({ server })
        )
      )
    }
    opened.read(readAnswer(conn, response, { method: what, awaiting: undefined }, logLost).sink)
  })
