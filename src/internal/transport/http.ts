/**
 * What the HTTP transports share: exchanges on the wire with redirects kept to one origin,
 * answers read by sinks fed from the wire's callbacks (a size-capped text body, an event
 * stream, the start of an error body), error statuses turned into McpErrors, and an Effect face for the
 * exchanges that are not on the per-call path (streams opened, notifications accepted).
 *
 * The per-request auth hook (`RequestAuth`, given as `StreamableHttp.Options.auth` for a
 * DPoP-bound token) is asked for each exchange's headers and shown each answer (a DPoP nonce; a
 * `use_dpop_nonce` refusal is sent once more); a plain bearer token goes as a header made once,
 * so that path costs nothing more.
 *
 * @internal
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import {
  type Abortable,
  HttpWire,
  type Wire,
  type WireHandler,
  type WireHeaders,
  type WireRequest
} from "../../HttpWire.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import { deliverBroken, type Incoming } from "../../Transport.js"
import { revealAll } from "../reveal.js"
import { safeUrl, scrubCause, scrubUrls } from "../secrets.js"
import * as Wires from "./httpWire.js"
import { header } from "./httpWire.js"
import type { Event as SseEvent, SseDecoder } from "./sseDecoder.js"
import { Utf8Text } from "./utf8Text.js"

/**
 * Which redirects are followed: none, only to the same origin (the default), or any.
 */
export type Redirects = "none" | "same-origin" | "any"

/** One server's HTTP settings, fixed for the life of a transport. */
export interface Context {
  readonly server: string
  readonly wire: Wire
  /** The configured headers, with secrets revealed: they only ever go on the wire. */
  readonly headers: Readonly<Record<string, string>>
  readonly maxMessageBytes: number
  readonly redirects: Redirects
  /** Runs an effect started from a callback (a log line, a reconnection) in the transport's Scope. */
  readonly fork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>
  /** Credentials made per request (DPoP); absent, the configured headers are all there is. */
  readonly auth: RequestAuth | undefined
}

/**
 * Credentials made for each request rather than configured once: a DPoP proof is bound to
 * the request's method and URL, and to the nonce the server gave last.
 */
export interface RequestAuth {
  /** The headers to add to one request (`authorization`, `dpop`). */
  readonly headers: (method: string, url: string) => Readonly<Record<string, string>>
  /**
   * Sees every answer's status and headers (a new nonce); true when the request should be
   * sent once more with fresh headers (a `use_dpop_nonce` challenge).
   */
  readonly answered: (status: number, header: (name: string) => string | undefined) => boolean
}

/** The options every HTTP transport takes. */
export interface Options {
  readonly name: string
  readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  readonly maxMessageBytes?: number | undefined
  readonly redirects?: Redirects | undefined
  readonly auth?: RequestAuth | undefined
}

/** The Context of a transport owned by the current Scope, on the HttpWire of its context if any, else its HttpClient. */
export const makeContext = (options: Options): Effect.Effect<Context, never, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const runtime = yield* Effect.runtime<never>()
    return {
      server: options.name,
      wire: Wires.of(yield* Effect.serviceOption(HttpWire), client, runtime),
      headers: revealAll(options.headers),
      maxMessageBytes: options.maxMessageBytes ?? JsonRpc.DEFAULT_MAX_MESSAGE_BYTES,
      redirects: options.redirects ?? "same-origin",
      fork: yield* FiberSet.makeRuntime<never, void, never>(),
      auth: options.auth
    }
  })

const MAX_REDIRECTS = 5

// A Transport error: the server could not be reached, or an answer broke off. The wire's
// cause is kept as text: an HTTP client's error may hold the request, headers in clear.
const transportError = (ctx: Context, message: string, cause?: unknown) =>
  McpError.transport(ctx.server, { message }, scrubCause(cause))

/** A Closed error. */
export const closedError = (ctx: Context, message: string) => McpError.closed(ctx.server, { message })

// Why an exchange failed, for a message. An HTTP client may quote the URL it was given:
// its credentials and query (tokens) are cut out.
const describeCause = (cause: unknown): string => {
  const inner = cause instanceof Error ? (cause as { cause?: unknown }).cause : undefined
  const text = cause instanceof Error
    ? inner instanceof Error ? `${cause.message} (${inner.message})` : cause.message
    : String(cause)
  return scrubUrls(text)
}

/** The Transport error of a body that broke off while the answer to `what` was read. */
export const readFailed = (ctx: Context, what: string, cause: unknown): McpError.McpError =>
  transportError(ctx, `reading the answer to ${what} failed: ${describeCause(cause)}`, cause)

/** An answer's status and headers, after redirects. */
export class Response {
  constructor(readonly status: number, readonly headers: WireHeaders, private readonly exchange: Abortable) {}

  /** Drops the rest of the body, and the connection. */
  abort(): void {
    this.exchange.abort()
  }

  /** One header's value. */
  header(name: string): string | undefined {
    return header(this.headers, name)
  }

  /** The media type, lower-cased, without parameters. */
  get mediaType(): string {
    const type = this.header("content-type")
    if (type === undefined) return ""
    const semicolon = type.indexOf(";")
    return (semicolon === -1 ? type : type.slice(0, semicolon)).trim().toLowerCase()
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300
  }
}

/** Where a body goes, chunk by chunk, called as methods. After `onEnd` or `onError` nothing more comes. */
export interface Sink {
  onData(chunk: Uint8Array): void
  onEnd(): void
  /** The body broke off; `cause` is the wire's. */
  onError(cause: unknown): void
}

/** What an exchange reports to, called as methods. */
export interface Handler {
  /** The answer arrived: the sink for its body. */
  onResponse(response: Response): Sink
  /** No answer: the server could not be reached, or a redirect was refused (Transport errors). */
  onFailure(error: McpError.McpError): void
}

/** Reads a body to its end and drops it, so its connection can be reused. */
export const IGNORE: Sink = { onData: () => {}, onEnd: () => {}, onError: () => {} }

// One exchange, across its redirects: the handler of each hop on the wire.
class Exchange implements WireHandler, Abortable {
  private hop = 0
  private current: Abortable | undefined
  private sink: Sink | undefined
  private stopped = false
  // Whether the request was sent again for a challenge of `ctx.auth` (only once).
  private reauthorized = false

  constructor(
    private readonly ctx: Context,
    private request: WireRequest,
    private readonly what: string,
    private readonly handler: Handler
  ) {}

  send(): this {
    this.sink = undefined
    const { auth } = this.ctx
    const request = this.request
    this.current = this.ctx.wire(
      auth === undefined
        ? request
        : { ...request, headers: { ...request.headers, ...auth.headers(request.method, request.url) } },
      this
    )
    return this
  }

  abort(): void {
    this.stopped = true
    this.current?.abort()
  }

  onHeaders(status: number, headers: WireHeaders): void {
    const { ctx, request, what } = this
    if (ctx.auth?.answered(status, (name) => header(headers, name)) === true && !this.reauthorized) {
      this.reauthorized = true
      this.sink = IGNORE
      this.current!.abort()
      if (!this.stopped) this.send()
      return
    }
    const location = header(headers, "location")
    if (location === undefined || !isRedirect(status, request.method) || ctx.redirects === "none") {
      this.sink = this.handler.onResponse(new Response(status, headers, this))
      return
    }
    this.sink = IGNORE
    this.current!.abort()
    const to = new URL(location, request.url)
    if (ctx.redirects === "same-origin" && to.origin !== new URL(request.url).origin) {
      return this.handler.onFailure(transportError(
        ctx,
        `${what} was redirected to another origin (${to.origin}); set redirects: "any" to allow it`
      ))
    }
    if (this.hop++ >= MAX_REDIRECTS) {
      return this.handler.onFailure(transportError(ctx, `${what} was redirected more than ${MAX_REDIRECTS} times`))
    }
    this.request = { ...request, url: to.toString() }
    if (!this.stopped) this.send()
  }

  onData(chunk: Uint8Array): void {
    this.sink!.onData(chunk)
  }

  onEnd(): void {
    this.sink!.onEnd()
  }

  onError(cause: unknown): void {
    if (this.sink !== undefined) return this.sink.onError(cause)
    this.handler.onFailure(
      transportError(
        this.ctx,
        `could not send ${this.what} to ${safeUrl(this.request.url)}: ${describeCause(cause)}`,
        cause
      )
    )
  }
}

/**
 * Sends a request and follows redirects as `ctx.redirects` allows; a POST follows only 307
 * and 308, which keep the method and body. `what` names the exchange in errors.
 */
export const exchange = (ctx: Context, request: WireRequest, what: string, handler: Handler): Abortable =>
  new Exchange(ctx, request, what, handler).send()

const isRedirect = (status: number, method: string) =>
  status === 307 || status === 308 || (method === "GET" && (status === 301 || status === 302 || status === 303))

/** Where a text body goes. */
export interface TextTarget {
  onText(text: string): void
  onError(error: McpError.McpError): void
}

/**
 * Reads a body as text, failing with a Limit error past `ctx.maxMessageBytes` (at once when
 * the declared length is past it) and with a Transport error when it breaks off.
 */
export class TextSink implements Sink {
  private first: Uint8Array | undefined
  private rest: Array<Uint8Array> | undefined
  private size = 0
  private failed = false

  constructor(
    private readonly ctx: Context,
    private readonly response: Response,
    private readonly what: string,
    private readonly target: TextTarget
  ) {
    const declared = Number(response.header("content-length"))
    if (declared > ctx.maxMessageBytes) this.tooLarge(declared)
  }

  onData(chunk: Uint8Array): void {
    if (this.failed) return
    this.size += chunk.length
    if (this.size > this.ctx.maxMessageBytes) return this.tooLarge(this.size)
    if (this.first === undefined) this.first = chunk
    else (this.rest ??= [this.first]).push(chunk)
  }

  onEnd(): void {
    if (this.failed) return
    const { first, rest } = this
    this.target.onText(
      rest !== undefined
        ? Buffer.concat(rest).toString("utf8")
        : first === undefined
        ? ""
        : Buffer.from(first.buffer, first.byteOffset, first.byteLength).toString("utf8")
    )
  }

  onError(cause: unknown): void {
    if (this.failed) return
    this.target.onError(readFailed(this.ctx, this.what, cause))
  }

  private tooLarge(size: number): void {
    this.failed = true
    this.response.abort()
    this.target.onError(
      McpError.limit(
        this.ctx.server,
        { what: this.what, size, limit: this.ctx.maxMessageBytes }
      )
    )
  }
}

const EXCERPT_BYTES = 1024

/** Reads the start of an error status's body into an Http error, handed to `onError` once. */
class StatusErrorSink implements Sink {
  private readonly chunks: Array<Uint8Array> = []
  private size = 0
  private done = false

  constructor(
    private readonly ctx: Context,
    private readonly response: Response,
    private readonly method: string,
    private readonly report: (error: McpError.McpError) => void
  ) {}

  onData(chunk: Uint8Array): void {
    if (this.done) return
    this.chunks.push(chunk)
    this.size += chunk.length
    if (this.size < EXCERPT_BYTES) return
    this.response.abort()
    this.onEnd()
  }

  onEnd(): void {
    if (this.done) return
    this.done = true
    this.report(this.error())
  }

  onError(): void {
    this.onEnd()
  }

  /** The error, with what came of the body so far. */
  error(): McpError.McpError {
    return httpError(this.ctx, this.response, this.method, Buffer.concat(this.chunks).toString("utf8"))
  }
}

/** The Http error of a response with an error status, with the start of its `body`. */
export const httpError = (ctx: Context, response: Response, method: string, body: string): McpError.McpError => {
  const challenge = response.header("www-authenticate")
  return McpError.http(
    ctx.server,
    {
      status: response.status,
      method,
      body: JsonRpc.excerpt(body, 300).replace(/\s+/g, " "),
      ...(challenge === undefined ? {} : { wwwAuthenticate: challenge })
    }
  )
}

/** An Http error for a response with an error status, with the start of its body. */
export const statusErrorSink = (
  ctx: Context,
  response: Response,
  method: string,
  onError: (error: McpError.McpError) => void
): Sink => new StatusErrorSink(ctx, response, method, onError)

/** Who reads an event stream, called as methods. */
export interface EventReader {
  onEvent(event: SseEvent): void
  /** Once: with nothing when the body ended, else why it did not. */
  onStreamEnd(error: McpError.McpError | undefined): void
}

/**
 * Reads an SSE body with `decoder`, handing each event to the reader in the callback that
 * decoded it. The stream ends once: normally, with a Transport error when it breaks off, or
 * with a Limit error (and the exchange aborted) when an event exceeds the size cap.
 */
export class EventSink implements Sink {
  private readonly text = new Utf8Text()
  private readonly events: Array<SseEvent> = []
  private done = false

  constructor(
    private readonly ctx: Context,
    private readonly response: Response,
    private readonly what: string,
    private readonly decoder: SseDecoder,
    private readonly reader: EventReader
  ) {
    decoder.reset()
  }

  onData(chunk: Uint8Array): void {
    if (this.done) return
    const { ctx, events } = this
    const fits = this.decoder.push(this.text.write(chunk), events)
    for (const event of events) {
      // An oversize event is never handed on, even when it arrived whole.
      if (fits || event.data.length <= ctx.maxMessageBytes) this.reader.onEvent(event)
    }
    events.length = 0
    if (fits) return
    this.done = true
    this.response.abort()
    this.reader.onStreamEnd(
      McpError.limit(
        ctx.server,
        { what: `an event of ${this.what}`, limit: ctx.maxMessageBytes }
      )
    )
  }

  onEnd(): void {
    if (this.done) return
    this.done = true
    this.reader.onStreamEnd(undefined)
  }

  onError(cause: unknown): void {
    if (this.done) return
    this.done = true
    this.reader.onStreamEnd(
      transportError(this.ctx, `the event stream of ${this.what} broke: ${describeCause(cause)}`, cause)
    )
  }
}

/**
 * Parses a JSON body or an event's data into messages; what cannot be used is logged with
 * the server's name and skipped, and a broken answer comes last as a BrokenAnswer.
 */
export const parseMessages = (ctx: Context, text: string, where: string): Array<Incoming> => {
  const messages: Array<Incoming> = []
  const bad: Array<JsonRpc.BadLine> = []
  JsonRpc.parseLine(text, messages as Array<JsonRpc.Message>, bad)
  if (bad.length === 0) return messages
  ctx.fork(JsonRpc.logSkipped(ctx.server, `sent ${where}`, bad))
  deliverBroken(bad, (incoming) => messages.push(incoming))
  return messages
}

// ---- the Effect face, for exchanges off the per-call path ---------------------------------

/** An answer whose body waits, kept, until it is given a sink. */
export class Opened {
  private pending: Array<Uint8Array> = []
  private ended: { readonly cause: unknown } | undefined
  private sink: Sink | undefined

  constructor(readonly response: Response) {}

  /** The sink that collects the body until `read` is called. */
  readonly collector: Sink = {
    onData: (chunk) => this.sink === undefined ? void this.pending.push(chunk) : this.sink.onData(chunk),
    onEnd: () => this.sink === undefined ? void (this.ended = { cause: undefined }) : this.sink.onEnd(),
    onError: (cause) =>
      this.sink === undefined ? void (this.ended = { cause: cause ?? "broken" }) : this.sink.onError(cause)
  }

  /** Hands the body, from its start, to `sink`. */
  read(sink: Sink): void {
    this.sink = sink
    for (const chunk of this.pending) sink.onData(chunk)
    this.pending = []
    if (this.ended === undefined) return
    if (this.ended.cause === undefined) sink.onEnd()
    else sink.onError(this.ended.cause)
  }
}

/** Sends a request; succeeds with the answer once its headers are in. Interruption aborts it. */
export const open = (ctx: Context, request: WireRequest, what: string): Effect.Effect<Opened, McpError.McpError> =>
  Effect.async((resume) => {
    const sent = exchange(ctx, request, what, {
      onResponse: (response) => {
        const opened = new Opened(response)
        resume(Effect.succeed(opened))
        return opened.collector
      },
      onFailure: (error) => resume(Effect.fail(error))
    })
    return Effect.sync(() => sent.abort())
  })

/** Drops an answer's body. */
export const discard = (opened: Opened): Effect.Effect<void> => Effect.sync(() => opened.read(IGNORE))

/**
 * The Http error for an answer with an error status, quoting what came of its body within
 * `timeoutMs`: a body that stalls does not hold the refusal up. The exchange is dropped.
 */
export const statusError = (
  ctx: Context,
  opened: Opened,
  method: string,
  timeoutMs: number
): Effect.Effect<McpError.McpError> =>
  Effect.suspend(() => {
    let sink: StatusErrorSink | undefined
    const read = Effect.async<McpError.McpError>((resume) => {
      sink = new StatusErrorSink(ctx, opened.response, method, (error) => resume(Effect.succeed(error)))
      opened.read(sink)
      return Effect.sync(() => opened.response.abort())
    })
    return Effect.timeoutTo(read, {
      duration: Duration.millis(timeoutMs),
      onSuccess: (error) => error,
      onTimeout: () => sink!.error()
    })
  })
