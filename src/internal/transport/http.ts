/**
 * What the HTTP transports share: sending with redirects kept to one origin, turning error
 * statuses into McpErrors, and reading JSON and SSE bodies under a size cap.
 *
 * @internal
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import type { Event as SseEvent, SseDecoder } from "./sseDecoder.js"

/**
 * Which redirects are followed: none, only to the same origin (the default), or any.
 */
export type Redirects = "none" | "same-origin" | "any"

/** One server's HTTP settings, fixed for the life of a transport. */
export interface Context {
  readonly server: string
  readonly client: HttpClient.HttpClient
  /** The configured headers, with secrets revealed: they only ever go on the wire. */
  readonly headers: Readonly<Record<string, string>>
  readonly maxMessageBytes: number
  readonly redirects: Redirects
}

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

const transportError = (ctx: Context, message: string, cause?: unknown) =>
  McpError.make(ctx.server, new McpError.TransportReason({ message }), cause)

/**
 * Sends a request and follows redirects as `ctx.redirects` allows. A POST follows only
 * 307 and 308, which keep the method and body. `what` names the exchange in errors.
 */
export const execute = (
  ctx: Context,
  request: HttpClientRequest.HttpClientRequest,
  what: string
): Effect.Effect<HttpClientResponse.HttpClientResponse, McpError.McpError> =>
  Effect.gen(function*() {
    let current = request
    for (let hop = 0;; hop++) {
      const response = yield* ctx.client.execute(current).pipe(
        Effect.mapError((error) =>
          transportError(ctx, `could not send ${what} to ${safeUrl(current.url)}: ${describeCause(error.cause ?? error)}`, error)
        )
      )
      const location = response.headers["location"]
      if (!isRedirect(response.status, current.method) || location === undefined || ctx.redirects === "none") {
        return response
      }
      const from = new URL(current.url)
      const to = new URL(location, from)
      if (ctx.redirects === "same-origin" && to.origin !== from.origin) {
        return yield* Effect.fail(transportError(
          ctx,
          `${what} was redirected to another origin (${to.origin}); set redirects: "any" to allow it`
        ))
      }
      if (hop >= MAX_REDIRECTS) return yield* Effect.fail(transportError(ctx, `${what} was redirected more than ${MAX_REDIRECTS} times`))
      yield* discard(response)
      current = HttpClientRequest.setUrl(current, to)
    }
  })

const isRedirect = (status: number, method: string) =>
  status === 307 || status === 308 || (method === "GET" && (status === 301 || status === 302 || status === 303))

const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause
    return inner instanceof Error ? `${cause.message} (${inner.message})` : cause.message
  }
  return String(cause)
}

/** Reads and drops a body we have no use for, so its connection can be reused. */
export const discard = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<void> =>
  Effect.ignore(Stream.runDrain(response.stream))

/** Is this a success status? */
export const isOk = (status: number) => status >= 200 && status < 300

const EXCERPT_BYTES = 1024

/** An Http error for a response with an error status, with the start of its body. */
export const statusError = (
  ctx: Context,
  response: HttpClientResponse.HttpClientResponse,
  method: string
): Effect.Effect<McpError.McpError> =>
  Effect.map(excerptOf(response), (body) => {
    const challenge = response.headers["www-authenticate"]
    return McpError.make(
      ctx.server,
      new McpError.HttpReason({
        status: response.status,
        method,
        body,
        ...(challenge === undefined ? {} : { wwwAuthenticate: challenge })
      })
    )
  })

const excerptOf = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  return response.stream.pipe(
    Stream.takeWhile((chunk) => {
      chunks.push(chunk)
      size += chunk.length
      return size < EXCERPT_BYTES
    }),
    Stream.runDrain,
    Effect.ignore,
    Effect.map(() => JsonRpc.excerpt(Buffer.concat(chunks).toString("utf8"), 300).replace(/\s+/g, " "))
  )
}

/** The body as text, failing with a Limit error past `ctx.maxMessageBytes`. */
export const readText = (
  ctx: Context,
  response: HttpClientResponse.HttpClientResponse,
  what: string
): Effect.Effect<string, McpError.McpError> => {
  const limit = ctx.maxMessageBytes
  const tooLarge = (size: number) => McpError.make(ctx.server, new McpError.LimitReason({ what, size, limit }))
  const declared = Number(response.headers["content-length"])
  if (declared > limit) return Effect.zipRight(discardAbort(response), Effect.fail(tooLarge(declared)))
  // A declared length within the cap: read it whole, the cheapest way.
  if (declared >= 0) {
    return Effect.mapError(
      response.text,
      (error) => transportError(ctx, `reading the answer to ${what} failed: ${describeCause(error.cause)}`, error)
    )
  }
  return Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    return response.stream.pipe(
      Stream.mapError((error) => transportError(ctx, `reading the answer to ${what} failed: ${describeCause(error.cause)}`, error)),
      Stream.runForEach((chunk) => {
        size += chunk.length
        if (size > limit) return Effect.fail(tooLarge(size))
        chunks.push(chunk)
        return Effect.void
      }),
      Effect.map(() => chunks.length === 1 ? Buffer.from(chunks[0]!).toString("utf8") : Buffer.concat(chunks).toString("utf8"))
    )
  })
}

// Ending the stream early aborts the request: nothing more is read.
const discardAbort = (response: HttpClientResponse.HttpClientResponse) => Effect.ignore(Stream.runDrain(Stream.take(response.stream, 1)))

/**
 * Reads an SSE body with `decoder`, handing the events decoded from each chunk to
 * `onEvents`. Ends when the body ends; fails if it breaks or one event exceeds the size cap.
 */
export const readEvents = (
  ctx: Context,
  response: HttpClientResponse.HttpClientResponse,
  what: string,
  decoder: SseDecoder,
  onEvents: (events: ReadonlyArray<SseEvent>) => Effect.Effect<void>
): Effect.Effect<void, McpError.McpError> =>
  Effect.suspend(() => {
    const text = new TextDecoder()
    decoder.reset()
    return response.stream.pipe(
      Stream.mapError((error) =>
        transportError(ctx, `the event stream of ${what} broke: ${describeCause(error.cause)}`, error)
      ),
      Stream.runForEach((chunk) => {
        const events: Array<SseEvent> = []
        const fits = decoder.push(text.decode(chunk, { stream: true }), events)
        // An oversize event is never handed on, even when it arrived whole.
        const usable = fits ? events : events.filter((event) => event.data.length <= ctx.maxMessageBytes)
        const handled = usable.length === 0 ? Effect.void : onEvents(usable)
        if (fits) return handled
        return Effect.zipRight(
          handled,
          Effect.fail(McpError.make(ctx.server, new McpError.LimitReason({ what: `an event of ${what}`, limit: ctx.maxMessageBytes })))
        )
      })
    )
  })

/**
 * Parses a JSON body or an event's data into messages; what cannot be used is logged with
 * the server's name and skipped.
 */
export const parseMessages = (ctx: Context, text: string, where: string): Effect.Effect<Array<JsonRpc.Message>> => {
  const messages: Array<JsonRpc.Message> = []
  const bad: Array<JsonRpc.BadLine> = []
  JsonRpc.parseLine(text, messages, bad)
  return bad.length === 0 ? Effect.succeed(messages) : Effect.as(JsonRpc.logSkipped(ctx.server, `sent ${where}`, bad), messages)
}

/** The media type of a response, lower-cased, without parameters. */
export const mediaType = (response: HttpClientResponse.HttpClientResponse): string =>
  (response.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
