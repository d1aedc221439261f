/**
 * The POST exchange of Streamable HTTP: a request's answer is one JSON body, an event
 * stream carrying the answer (and what the server sends meanwhile), or nothing (202 for
 * notifications and responses). The answer is read in the response's callbacks and
 * delivered from there: no fiber, Stream or timer per request. An error status fails the
 * request with an Http error; a 404 on a request that carried a session id means the server
 * forgot the session, which ends the connection, as a 401 or 403 does (the owner decides).
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Abortable, WireRequest } from "../../HttpWire.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import * as Http from "./http.js"
import { JsonValues } from "./jsonValues.js"
import { modernVersion } from "./mcpHeaders.js"
import type { Connection } from "./streamableHttpConnection.js"
import { EventStream, type Reader, type Reading } from "./streamableHttpStream.js"
import { Utf8Text } from "./utf8Text.js"

// A JSON answer. The spec's is one message, but some servers put several in one body (a
// notification, a newline, the answer; or a `subscriptions/listen` body held open with one
// per line): every complete JSON-RPC message in it is taken, each as soon as it is complete
// (`jsonValues.ts`). A body that ends without the answer to its request (nothing, text
// that is no message, only notifications) fails the request at once with a Protocol error
// quoting it, rather than leaving it to time out.
class JsonAnswer implements Http.Sink {
  private readonly text = new Utf8Text()
  private readonly values = new JsonValues()
  private head = ""
  private answered = false
  private failed = false

  constructor(
    private readonly conn: Connection,
    private readonly response: Http.Response,
    private readonly reading: Reading,
    private readonly reader: Reader
  ) {
    const declared = Number(response.header("content-length"))
    if (declared > conn.ctx.maxMessageBytes) this.tooLarge(declared)
  }

  onData(chunk: Uint8Array): void {
    if (this.failed) return
    const piece = this.text.write(chunk)
    if (this.head.length < QUOTED_CHARS) this.head += piece.slice(0, QUOTED_CHARS - this.head.length)
    for (const value of this.values.push(piece)) this.take(value)
    if (this.values.pending > this.conn.ctx.maxMessageBytes) this.tooLarge(this.values.pending)
  }

  onEnd(): void {
    if (this.failed) return
    const rest = this.values.rest()
    if (rest !== "") this.take(rest)
    const { awaiting, method } = this.reading
    if (this.answered || awaiting === undefined) return this.reader.ended(undefined)
    const body = this.head.trim()
    this.reader.ended(McpError.protocol(this.conn.ctx.server, {
      method,
      code: JsonRpc.ErrorCode.InvalidRequest,
      message: body === ""
        ? "the server's JSON answer was empty"
        : `the server's JSON answer holds no answer to the request: ${JsonRpc.excerpt(body, 300)}`
    }))
  }

  onError(cause: unknown): void {
    if (this.failed) return
    this.failed = true
    this.reader.ended(Http.readFailed(this.conn.ctx, this.reading.method, cause))
  }

  private take(value: string): void {
    for (const message of Http.parseMessages(this.conn.ctx, value, "a body")) {
      if (!("method" in message) && message.id === this.reading.awaiting) this.answered = true
      // What comes before the answer belongs to the request, as on its event stream.
      this.conn.deliver(message, this.reading.awaiting)
    }
  }

  private tooLarge(size: number): void {
    this.failed = true
    this.response.abort()
    this.reader.ended(McpError.limit(
      this.conn.ctx.server,
      { what: `the answer to ${this.reading.method}`, size, limit: this.conn.ctx.maxMessageBytes }
    ))
  }
}

// How much of a JSON body a Protocol error quotes.
const QUOTED_CHARS = 300

// Reads the answer to a POST: a JSON body, an event stream (returned too, to be stopped),
// or nothing (202).
const readAnswer = (
  conn: Connection,
  response: Http.Response,
  reading: Reading,
  reader: Reader
): { readonly sink: Http.Sink; readonly stream: EventStream | undefined } => {
  const type = response.mediaType
  if (type === "text/event-stream") {
    const stream = new EventStream(conn, reading, reader)
    return { sink: stream.sink(response), stream }
  }
  if (type === "application/json") return { sink: new JsonAnswer(conn, response, reading, reader), stream: undefined }
  if (response.status === 202 || response.header("content-length") === "0" || type === "") reader.ended(undefined)
  else {
    reader.ended(McpError.validation(
      conn.ctx.server,
      {
        message: `answered with content type '${type}', neither JSON nor an event stream`,
        method: reading.method
      }
    ))
  }
  return { sink: Http.IGNORE, stream: undefined }
}

// A refusal (400, 404) of a 2026-07-28 request: a JSON-RPC error in its body is the
// request's answer (an unsupported revision, a header mismatch, an unknown method), which
// also tells the client the server speaks 2026-07-28; any other body is an Http error.
class Refusal implements Http.TextTarget {
  constructor(
    private readonly conn: Connection,
    private readonly response: Http.Response,
    private readonly request: JsonRpc.Request,
    private readonly reader: Reader
  ) {}

  onText(text: string): void {
    const error = errorOf(text, this.request.id)
    if (error === undefined) {
      this.reader.ended(Http.httpError(this.conn.ctx, this.response, this.request.method, text))
      return
    }
    this.conn.deliver({ jsonrpc: "2.0", id: this.request.id, error })
    this.reader.ended(undefined)
  }

  onError(error: McpError.McpError): void {
    this.reader.ended(error)
  }
}

// The JSON-RPC error of a body that answers request `id` (or no request), if it is one.
const errorOf = (text: string, id: JsonRpc.RequestId): JsonRpc.ErrorObject | undefined => {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof body !== "object" || body === null) return undefined
  const { error, id: answered } = body as { readonly error?: unknown; readonly id?: unknown }
  if (answered !== id && answered !== null && answered !== undefined) return undefined
  if (typeof error !== "object" || error === null) return undefined
  const { code, message } = error as { readonly code?: unknown; readonly message?: unknown }
  return typeof code === "number" && typeof message === "string" ? error as JsonRpc.ErrorObject : undefined
}

const postOf = (
  conn: Connection,
  message: JsonRpc.Message,
  headers: Readonly<Record<string, string>> = conn.post
): WireRequest => ({
  method: "POST",
  url: conn.url,
  headers,
  body: JSON.stringify(message)
})

/** Who sent a request: hears once how it ended, and may take over a refused one. */
export interface Owner {
  /** The request's answer was delivered (`error` undefined), or it failed with `error`. */
  done(id: JsonRpc.RequestId, error: McpError.McpError | undefined): void
  /** An error status: true when the owner takes the exchange over (the fallback). */
  refused(request: JsonRpc.Request, status: number): boolean
}

/**
 * One request POSTed and its answer read; the owner hears once how it ended. A 404 on a
 * request sent in a session fails it with the session-expired error. The exchange is one
 * object: the handler of its answer, its body's reader and its stream's.
 */
export class PostedRequest implements Http.Handler, Reader {
  private readonly sentIn: string | undefined
  private readonly exchange: Abortable
  private stream: EventStream | undefined
  /** Whether the owner has heard how it ended (a client may fail an exchange at once). */
  finished = false
  /** Whether the request is of 2026-07-28 (its revision in `_meta`): no session, no notifications. */
  readonly modern: boolean

  constructor(
    private readonly conn: Connection,
    private readonly message: JsonRpc.Request,
    private readonly owner: Owner
  ) {
    this.sentIn = conn.sessionId
    const version = modernVersion(message)
    this.modern = version !== undefined
    const headers = conn.requestHeaders(message, version)
    this.exchange = Http.exchange(conn.ctx, postOf(conn, message, headers), message.method, this)
  }

  /** Abandons the exchange (the request was cancelled); the owner is not told. */
  stop(): void {
    if (this.stream !== undefined) this.stream.stop()
    else this.exchange.abort()
  }

  onResponse(response: Http.Response): Http.Sink {
    const { conn, message } = this
    if (response.ok) {
      if (message.method === "initialize") conn.setSession(response.header("mcp-session-id"), conn.protocolVersion)
      const answer = readAnswer(conn, response, { method: message.method, awaiting: message.id }, this)
      this.stream = answer.stream
      return answer.sink
    }
    if (response.status === 404 && this.sentIn !== undefined) {
      this.ended(conn.sessionExpired(message.method))
      return Http.IGNORE
    }
    if (this.owner.refused(message, response.status)) return Http.IGNORE
    if ((response.status === 400 || response.status === 404) && this.modern) {
      return new Http.TextSink(conn.ctx, response, message.method, new Refusal(conn, response, message, this))
    }
    return Http.statusErrorSink(conn.ctx, response, message.method, (error) => this.ended(error))
  }

  onFailure(error: McpError.McpError): void {
    this.ended(error)
  }

  ended(error: McpError.McpError | undefined): void {
    this.finished = true
    this.owner.done(this.message.id, error)
  }
}

/**
 * POSTs a message that expects no answer, and succeeds once the server accepted it, within
 * the HTTP timeout. A body that comes back anyway (an event stream) is read in the
 * background; what fails there is logged.
 */
export const notify = (
  conn: Connection,
  message: JsonRpc.Message,
  what: string
): Effect.Effect<void, McpError.McpError> =>
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
    if (!response.ok) {
      return yield* Effect.fail(yield* Http.statusError(conn.ctx, opened, what, conn.settings.httpTimeoutMs))
    }
    const server = conn.ctx.server
    const logLost: Reader = {
      ended: (error) => {
        if (error === undefined) return
        conn.ctx.fork(
          Effect.logWarning(`server '${server}': reading what came back for ${what} failed: ${error.message}`).pipe(
            Effect.annotateLogs({ server })
          )
        )
      }
    }
    opened.read(readAnswer(conn, response, { method: what, awaiting: undefined }, logLost).sink)
  })
