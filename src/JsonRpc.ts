/**
 * JSON-RPC 2.0 as MCP uses it: message schemas, error codes, and newline-delimited JSON
 * framing with a size cap.
 *
 * The validator of incoming messages is written by hand, since it runs on every message; NDJSON
 * lines are split by `LineDecoder`. A bad line is reported with the server's name and an
 * excerpt and skipped. A line that tries to answer a request (no `method`, a usable `id`) but
 * is broken (a result and an error, no `jsonrpc`, a bad error object) reaches the Peer as a
 * `BrokenAnswer`, which fails that request at once with a Protocol error quoting it; only that
 * branch costs more. An oversize message ends the connection with a Limit error.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/**
 * A request id: a string or an integer, never null.
 *
 * @since 0.1.0
 */
export const RequestId = Schema.Union(Schema.String, Schema.Int)

/**
 * @since 0.1.0
 */
export type RequestId = typeof RequestId.Type

const Params = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const Version = Schema.Literal("2.0")

/**
 * A request: expects a response with the same id.
 *
 * @since 0.1.0
 */
export const Request = Schema.Struct({
  jsonrpc: Version,
  id: RequestId,
  method: Schema.String,
  params: Schema.optional(Params)
}).annotations({ identifier: "JsonRpcRequest" })

/**
 * @since 0.1.0
 */
export interface Request extends Schema.Schema.Type<typeof Request> {}

/**
 * A notification: no id, no response.
 *
 * @since 0.1.0
 */
export const Notification = Schema.Struct({
  jsonrpc: Version,
  // A notification has no id at all; one with `"id": null` is a broken request.
  id: Schema.optional(Schema.Never),
  method: Schema.String,
  params: Schema.optional(Params)
}).annotations({ identifier: "JsonRpcNotification" })

/**
 * @since 0.1.0
 */
export interface Notification extends Schema.Schema.Type<typeof Notification> {}

/**
 * A successful response.
 *
 * @since 0.1.0
 */
export const Success = Schema.Struct({
  jsonrpc: Version,
  id: RequestId,
  result: Params
}).annotations({ identifier: "JsonRpcSuccess" })

/**
 * @since 0.1.0
 */
export interface Success extends Schema.Schema.Type<typeof Success> {}

/**
 * The error object of an error response.
 *
 * @since 0.1.0
 */
export const ErrorObject = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "JsonRpcErrorObject" })

/**
 * @since 0.1.0
 */
export interface ErrorObject extends Schema.Schema.Type<typeof ErrorObject> {}

/**
 * An error response. The id is null only when the request's id could not be read.
 *
 * @since 0.1.0
 */
export const Failure = Schema.Struct({
  jsonrpc: Version,
  id: Schema.NullOr(RequestId),
  error: ErrorObject
}).annotations({ identifier: "JsonRpcFailure" })

/**
 * @since 0.1.0
 */
export interface Failure extends Schema.Schema.Type<typeof Failure> {}

/**
 * Any JSON-RPC message.
 *
 * @since 0.1.0
 */
export const Message = Schema.Union(Request, Notification, Success, Failure)

/**
 * @since 0.1.0
 */
export type Message = Request | Notification | Success | Failure

/**
 * Standard JSON-RPC error codes, and the ones MCP adds.
 *
 * @since 0.1.0
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP: a resource was not found. */
  ResourceNotFound: -32002
} as const

/**
 * Is this message a request?
 *
 * @since 0.1.0
 */
export const isRequest = (message: Message): message is Request => "method" in message && "id" in message

/**
 * Is this message a notification?
 *
 * @since 0.1.0
 */
export const isNotification = (message: Message): message is Notification => "method" in message && !("id" in message)

/**
 * Is this message a response (success or error)?
 *
 * @since 0.1.0
 */
export const isResponse = (message: Message): message is Success | Failure => !("method" in message)

// The schema's Int is a safe integer: an id or code past 2^53 cannot be told from its neighbours.
const isId = (u: unknown): u is RequestId => typeof u === "string" || Number.isSafeInteger(u)
const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const isErrorObject = (u: unknown): boolean =>
  isObject(u) && Number.isSafeInteger(u.code) && typeof u.message === "string"

/**
 * Checks one parsed JSON value against {@link Message}. It accepts exactly what the schema
 * accepts, read as the schema's union reads it (the first of request, notification,
 * success, failure that fits, other keys ignored); it is written out by hand because it
 * runs for every message on the hot path. A message that fits as one kind but carries the
 * keys of another (a failure with a `method`) comes back without them, so that
 * {@link isRequest} and the like read it right. Returns the message, or why it is not one.
 *
 * @since 0.1.0
 */
export const validateMessage = (u: unknown): Either.Either<Message, string> => {
  const checked = check(u)
  return typeof checked === "string" ? Either.left(checked) : Either.right(checked)
}

// The message `u` is, or why it is none: no Either made per message read.
const check = (u: unknown): Message | string => {
  if (!isObject(u)) return "not a JSON object"
  if (u.jsonrpc !== "2.0") return `"jsonrpc" must be "2.0"`
  const id = u.id
  if (typeof u.method === "string" && (u.params === undefined || isObject(u.params))) {
    if (isId(id)) return u as unknown as Request
    // JSON has no undefined: the id is absent.
    if (id === undefined) return u as unknown as Notification
  }
  if (isId(id) && isObject(u.result)) {
    return ("method" in u ? { jsonrpc: "2.0", id, result: u.result } : u) as unknown as Success
  }
  if ((id === null || isId(id)) && isErrorObject(u.error)) {
    return ("method" in u || "result" in u ? { jsonrpc: "2.0", id, error: u.error } : u) as unknown as Failure
  }
  return problemOf(u)
}

// Why a JSON-RPC-like object is no message, judged by the kind it tries to be.
const problemOf = (u: Record<string, unknown>): string => {
  const idProblem = `"id" must be a string or a safe integer`
  if ("method" in u) {
    if (typeof u.method !== "string") return `"method" must be a string`
    return u.params === undefined || isObject(u.params) ? idProblem : `"params" must be an object`
  }
  if ("result" in u) return isId(u.id) ? `"result" must be an object` : idProblem
  if ("error" in u) {
    return u.id !== null && !isId(u.id)
      ? `"id" must be a string, a safe integer or null`
      : `"error" must have an integer "code" and a string "message"`
  }
  return `neither a request, a notification nor a response`
}

/**
 * The id of the request an invalid message tries to answer: an object without a `method`
 * whose `id` is one a request could have. Such a broken answer fails its request at once
 * rather than leaving it to time out.
 *
 * @since 0.1.0
 */
export const answeredId = (u: unknown): RequestId | undefined =>
  isObject(u) && !("method" in u) && isId(u.id) ? u.id : undefined

/**
 * A problem with one line of input: it was skipped, the connection goes on.
 *
 * @since 0.1.0
 */
export interface BadLine {
  readonly reason: string
  readonly excerpt: string
  /** Set when it tries to answer the request with this id (see {@link answeredId}). */
  readonly id?: RequestId | undefined
}

/**
 * Logs each skipped piece of input as a warning that names the server, says what the
 * server did (`source`: "wrote a line", "sent a frame") and shows the excerpt.
 *
 * @since 0.1.0
 */
export const logSkipped = (server: string, source: string, bad: ReadonlyArray<BadLine>): Effect.Effect<void> =>
  Effect.forEach(
    bad,
    (line) =>
      Effect.logWarning(`server '${server}' ${source} that is ${line.reason}; skipped: ${line.excerpt}`).pipe(
        Effect.annotateLogs({ server })
      ),
    { discard: true }
  )

/**
 * The first characters of a bad line, for a log message.
 *
 * @since 0.1.0
 */
export const excerpt = (text: string, max = 200): string =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`

/**
 * Parses one line of text into messages (one, or several for a batch), collecting what
 * could not be used instead of failing.
 *
 * @since 0.1.0
 */
export const parseLine = (line: string, messages: Array<Message>, bad: Array<BadLine>): void => {
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch {
    bad.push({ reason: "not JSON", excerpt: excerpt(line) })
    return
  }
  if (Array.isArray(json)) {
    if (json.length === 0) bad.push({ reason: "an empty batch", excerpt: excerpt(line) })
    for (const item of json) pushValidated(item, line, messages, bad)
    return
  }
  pushValidated(json, line, messages, bad)
}

const pushValidated = (json: unknown, line: string, messages: Array<Message>, bad: Array<BadLine>) => {
  const checked = check(json)
  if (typeof checked !== "string") return void messages.push(checked)
  const reason = `not a JSON-RPC message: ${checked}`
  const id = answeredId(json)
  bad.push(id === undefined ? { reason, excerpt: excerpt(line) } : { reason, excerpt: excerpt(line), id })
}

/**
 * The default maximum size of one message: 16 MiB.
 *
 * @since 0.1.0
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

const NEWLINE = 0x0a
const EMPTY = Buffer.alloc(0)

/**
 * Splits a byte stream into lines. Each chunk is scanned once and a line's chunks are
 * joined once, so the cost is linear in the input. A line longer than `maxBytes` makes
 * `push` return `{ oversize }` with the size seen so far.
 *
 * @since 0.1.0
 */
export class LineDecoder {
  private parts: Array<Uint8Array> = []
  private buffered = 0
  constructor(readonly maxBytes: number = DEFAULT_MAX_MESSAGE_BYTES) {}

  /**
   * Feeds a chunk; complete lines are appended to `lines` (without the newline or a
   * trailing carriage return; empty lines dropped).
   */
  push(chunk: Uint8Array, lines: Array<string>): { readonly oversize: number } | undefined {
    // One Buffer view per chunk, and each line decoded from its range of it: no view per line.
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length)
    let start = 0
    let newline = bytes.indexOf(NEWLINE)
    while (newline !== -1) {
      const size = this.buffered + newline - start
      if (size > this.maxBytes) return { oversize: size }
      this.emit(bytes, start, newline, lines)
      start = newline + 1
      newline = bytes.indexOf(NEWLINE, start)
    }
    if (start < bytes.length) {
      const rest = bytes.subarray(start)
      this.buffered += rest.length
      if (this.buffered > this.maxBytes) return { oversize: this.buffered }
      this.parts.push(rest)
    }
    return undefined
  }

  /**
   * Feeds a batch of chunks, as `push` does each; stops at the first line that is too long.
   */
  pushAll(chunks: Iterable<Uint8Array>, lines: Array<string>): { readonly oversize: number } | undefined {
    for (const chunk of chunks) {
      const oversize = this.push(chunk, lines)
      if (oversize) return oversize
    }
    return undefined
  }

  /**
   * Whatever is left after the stream ended without a final newline.
   */
  flush(lines: Array<string>): void {
    if (this.buffered > 0) this.emit(EMPTY, 0, 0, lines)
  }

  // The line ending at `end` of `chunk`, after the parts of it earlier chunks held.
  private emit(chunk: Buffer, start: number, end: number, lines: Array<string>) {
    let bytes = chunk
    if (this.parts.length > 0) {
      this.parts.push(chunk.subarray(start, end))
      bytes = Buffer.concat(this.parts, this.buffered + end - start)
      start = 0
      end = bytes.length
      this.parts = []
      this.buffered = 0
    }
    if (end > start && bytes[end - 1] === 0x0d) end--
    if (end > start) lines.push(bytes.toString("utf8", start, end))
  }
}

/**
 * Encodes a message as one line of NDJSON.
 *
 * @since 0.1.0
 */
export const encodeLine = (message: Message): string => JSON.stringify(message) + "\n"

/**
 * A copy of `object` (a message's params, their `_meta`) with `key` set to `value`: what
 * `{ ...object, [key]: value }` makes, for paths taken per message. V8 (Node 20 and 22)
 * takes a slow path for an object spread followed by a property, about 2 µs a time against
 * 0.15 µs for this copy key by key. Own enumerable string keys are copied, and `__proto__`
 * (JSON.parse makes one; so may `key`) is set as a field; anything but an object copies nothing.
 *
 * @since 0.1.0
 */
export const withField = (object: unknown, key: string, value: unknown): Record<string, unknown> => {
  const copy: Record<string, unknown> = {}
  if (typeof object === "object" && object !== null) {
    for (const name of Object.keys(object)) setField(copy, name, (object as Record<string, unknown>)[name])
  }
  setField(copy, key, value)
  return copy
}

// An assignment to `__proto__` would set the prototype (or be ignored for a non-object),
// where a spread or JSON.parse makes a field of that name.
const setField = (target: Record<string, unknown>, name: string, value: unknown): void => {
  if (name === "__proto__") {
    Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true })
  } else target[name] = value
}
