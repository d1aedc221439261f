/**
 * What the HTTP transports share: exchanges on the wire with redirects kept to one origin,
 * answers read by sinks fed from the wire's callbacks (a size-capped text body, the start
 * of an error body), error statuses turned into McpErrors, and an Effect face for the
 * exchanges that are not on the per-call path (streams opened, notifications accepted).
 *
 * @internal
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import { revealAll } from "../reveal.js"
import * as HttpWire from "./httpWire.js"
import { type Abort, header, type Wire, type WireHeaders, type WireRequest } from "./httpWire.js"
import type { Event as SseEvent, SseDecoder } from "./sseDecoder.js"

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
}

/** The options every HTTP transport takes. */
export interface Options {
  readonly name: string
  readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  readonly maxMessageBytes?: number | undefined
  readonly redirects?: Redirects | undefined
}

/** The Context of a transport owned by the current Scope, on the HttpClient of its context. */
export const makeContext = (options: Options): Effect.Effect<Context, never, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const runtime = yield* Effect.runtime<never>()
    return {
      server: options.name,
      wire: HttpWire.of(client, runtime),
      headers: revealAll(options.headers),
      maxMessageBytes: options.maxMessageBytes ?? JsonRpc.DEFAULT_MAX_MESSAGE_BYTES,
      redirects: options.redirects ?? "same-origin",
      fork: yield* FiberSet.makeRuntime<never, void, never>()
    }
  })

const MAX_REDIRECTS = 5

/** The URL without its query or fragment, which may carry tokens: safe for messages. */
export const safeUrl = (url: string | URL): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return "(an invalid URL)"
  }
}

/** A Transport error: the server could not be reached, or an answer broke off. */
export const transportError = (ctx: Context, message: string, cause?: unknown) =>
  McpError.make(ctx.server, new McpError.TransportReason({ message }), cause)

/** A Closed error. */
export const closedError = (ctx: Context, message: string) =>
  McpError.make(ctx.server, new McpError.ClosedReason({ message }))

/** Why an exchange failed, for a message. */
export const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause
    return inner instanceof Error ? `${cause.message} (${inner.message})` : cause.message
  }
  return String(cause)
}

/** An answer's status and headers, after redirects. */
export class Response {
  constructor(readonly status: number, readonly headers: WireHeaders, readonly abort: Abort) {}

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

/** Where a body goes, chunk by chunk. After `onEnd` or `onError` nothing more comes. */
export interface Sink {
  readonly onData: (chunk: Uint8Array) => void
  readonly onEnd: () => void
  /** The body broke off; `cause` is the wire's. */
  readonly onError: (cause: unknown) => void
}

/** What an exchange reports to. */
export interface Handler {
  /** The answer arrived: the sink for its body. */
  readonly onResponse: (response: Response) => Sink
  /** No answer: the server could not be reached, or a redirect was refused (Transport errors). */
  readonly onFailure: (error: McpError.McpError) => void
}

/** Reads a body to its end and drops it, so its connection can be reused. */
export const IGNORE: Sink = { onData: () => {}, onEnd: () => {}, onError: () => {} }

/**
 * Sends a request and follows redirects as `ctx.redirects` allows; a POST follows only 307
 * and 308, which keep the method and body. `what` names the exchange in errors.
 */
export const exchange = (ctx: Context, request: WireRequest, what: string, handler: Handler): Abort => {
  let abort: Abort = () => {}
  let stopped = false
  const send = (current: WireRequest, hop: number): void => {
    let sink: Sink | undefined
    const thisAbort = ctx.wire(current, {
      onHeaders: (status, headers) => {
        const location = header(headers, "location")
        if (location === undefined || !isRedirect(status, current.method) || ctx.redirects === "none") {
          sink = handler.onResponse(new Response(status, headers, () => abort()))
          return
        }
        sink = IGNORE
        thisAbort()
        const to = new URL(location, current.url)
        if (ctx.redirects === "same-origin" && to.origin !== new URL(current.url).origin) {
          return handler.onFailure(transportError(
            ctx,
            `${what} was redirected to another origin (${to.origin}); set redirects: "any" to allow it`
          ))
        }
        if (hop >= MAX_REDIRECTS) return handler.onFailure(transportError(ctx, `${what} was redirected more than ${MAX_REDIRECTS} times`))
        if (!stopped) send({ ...current, url: to.toString() }, hop + 1)
      },
      onData: (chunk) => sink!.onData(chunk),
      onEnd: () => sink!.onEnd(),
      onError: (cause) =>
        sink === undefined
          ? handler.onFailure(transportError(ctx, `could not send ${what} to ${safeUrl(current.url)}: ${describeCause(cause)}`, cause))
          : sink.onError(cause)
    })
    abort = thisAbort
  }
  send(request, 0)
  return () => {
    stopped = true
    abort()
  }
}

const isRedirect = (status: number, method: string) =>
  status === 307 || status === 308 || (method === "GET" && (status === 301 || status === 302 || status === 303))

/**
 * Reads a body as text, failing with a Limit error past `ctx.maxMessageBytes` (at once when
 * the declared length is past it) and with a Transport error when it breaks off.
 */
export const textSink = (
  ctx: Context,
  response: Response,
  what: string,
  onText: (text: string) => void,
  onError: (error: McpError.McpError) => void
): Sink => {
  const limit = ctx.maxMessageBytes
  const tooLarge = (size: number) => {
    response.abort()
    onError(McpError.make(ctx.server, new McpError.LimitReason({ what, size, limit })))
  }
  const declared = Number(response.header("content-length"))
  if (declared > limit) {
    tooLarge(declared)
    return IGNORE
  }
  let first: Uint8Array | undefined
  let rest: Array<Uint8Array> | undefined
  let size = 0
  let failed = false
  return {
    onData: (chunk) => {
      if (failed) return
      size += chunk.length
      if (size > limit) {
        failed = true
        return tooLarge(size)
      }
      if (first === undefined) first = chunk
      else (rest ??= [first]).push(chunk)
    },
    onEnd: () => {
      if (failed) return
      onText(
        rest !== undefined
          ? Buffer.concat(rest).toString("utf8")
          : first === undefined
          ? ""
          : Buffer.from(first.buffer, first.byteOffset, first.byteLength).toString("utf8")
      )
    },
    onError: (cause) => {
      if (!failed) onError(transportError(ctx, `reading the answer to ${what} failed: ${describeCause(cause)}`, cause))
    }
  }
}

const EXCERPT_BYTES = 1024

/** An Http error for a response with an error status, with the start of its body. */
export const statusErrorSink = (
  ctx: Context,
  response: Response,
  method: string,
  onError: (error: McpError.McpError) => void
): Sink => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  let done = false
  const finish = () => {
    if (done) return
    done = true
    const body = JsonRpc.excerpt(Buffer.concat(chunks).toString("utf8"), 300).replace(/\s+/g, " ")
    const challenge = response.header("www-authenticate")
    onError(McpError.make(
      ctx.server,
      new McpError.HttpReason({
        status: response.status,
        method,
        body,
        ...(challenge === undefined ? {} : { wwwAuthenticate: challenge })
      })
    ))
  }
  return {
    onData: (chunk) => {
      if (done) return
      chunks.push(chunk)
      size += chunk.length
      if (size < EXCERPT_BYTES) return
      response.abort()
      finish()
    },
    onEnd: finish,
    onError: finish
  }
}

/**
 * Reads an SSE body with `decoder`, handing each event to `onEvent` in the callback that
 * decoded it. `onEnd` comes once: with nothing when the body ends, a Transport error when it
 * breaks off, a Limit error (and the exchange aborted) when an event exceeds the size cap.
 */
export const eventSink = (
  ctx: Context,
  response: Response,
  what: string,
  decoder: SseDecoder,
  onEvent: (event: SseEvent) => void,
  onEnd: (error: McpError.McpError | undefined) => void
): Sink => {
  const text = new TextDecoder()
  const events: Array<SseEvent> = []
  let done = false
  decoder.reset()
  return {
    onData: (chunk) => {
      if (done) return
      const fits = decoder.push(text.decode(chunk, { stream: true }), events)
      for (const event of events) {
        // An oversize event is never handed on, even when it arrived whole.
        if (fits || event.data.length <= ctx.maxMessageBytes) onEvent(event)
      }
      events.length = 0
      if (fits) return
      done = true
      response.abort()
      onEnd(McpError.make(ctx.server, new McpError.LimitReason({ what: `an event of ${what}`, limit: ctx.maxMessageBytes })))
    },
    onEnd: () => {
      if (done) return
      done = true
      onEnd(undefined)
    },
    onError: (cause) => {
      if (done) return
      done = true
      onEnd(transportError(ctx, `the event stream of ${what} broke: ${describeCause(cause)}`, cause))
    }
  }
}

/**
 * Parses a JSON body or an event's data into messages for `deliver`; what cannot be used
 * is logged with the server's name and skipped.
 */
export const parseMessages = (
  ctx: Context,
  text: string,
  where: string,
  deliver: (message: JsonRpc.Message) => void
): void => {
  const messages: Array<JsonRpc.Message> = []
  const bad: Array<JsonRpc.BadLine> = []
  JsonRpc.parseLine(text, messages, bad)
  for (const message of messages) deliver(message)
  if (bad.length > 0) ctx.fork(JsonRpc.logSkipped(ctx.server, `sent ${where}`, bad))
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
    onError: (cause) => this.sink === undefined ? void (this.ended = { cause: cause ?? "broken" }) : this.sink.onError(cause)
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
    const abort = exchange(ctx, request, what, {
      onResponse: (response) => {
        const opened = new Opened(response)
        resume(Effect.succeed(opened))
        return opened.collector
      },
      onFailure: (error) => resume(Effect.fail(error))
    })
    return Effect.sync(abort)
  })

/** Drops an answer's body. */
export const discard = (opened: Opened): Effect.Effect<void> => Effect.sync(() => opened.read(IGNORE))

/** The Http error for an answer with an error status. */
export const statusError = (ctx: Context, opened: Opened, method: string): Effect.Effect<McpError.McpError> =>
  Effect.async((resume) => opened.read(statusErrorSink(ctx, opened.response, method, (error) => resume(Effect.succeed(error)))))
