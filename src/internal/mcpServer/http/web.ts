/**
 * The Streamable HTTP endpoint as a web-standard handler, `(Request) => Promise<Response>`,
 * for runtimes and frameworks built on fetch's types: each Request is an exchange of its
 * own (`WebExchange`), its body read from its stream within the size limit, and its answer
 * the Response the promise resolves with — whole, or with a streamed body whose events are
 * enqueued as they come. A client that cancels the body has gone away.
 *
 * Only Web-standard APIs: this is the endpoint of the neutral entry.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../../JsonRpc.js"
import type * as McpServer from "../../../McpServer.js"
import type { BodyLimits, Exchange } from "./exchange.js"
import * as Guard from "./guard.js"
import * as Http from "./http.js"
import { type Answer, SSE_HEADERS } from "./response.js"
import type { EventSink } from "./streamLog.js"

/** One Request and the Response it is answered with. */
class WebExchange {
  readonly path: string
  readonly headers: Record<string, string> = {}
  /** Whether the Response was given (whole, or with its stream). */
  answered = false
  /** Whether the answer is complete or the client cancelled it. */
  closed = false
  /** The streamed body, once the answer is an event stream. */
  body: ReadableStreamDefaultController<Uint8Array> | undefined = undefined
  private readonly listeners: Array<() => void> = []

  constructor(readonly request: Request, private readonly resolve: (response: Response) => void) {
    const url = new URL(request.url)
    this.path = url.pathname
    request.headers.forEach((value, key) => {
      this.headers[key] = value
    })
    // fetch never sends Host itself: the URL says it.
    this.headers["host"] ??= url.host
  }

  answer(response: Response): void {
    this.answered = true
    this.resolve(response)
  }

  onClose(listener: () => void): void {
    this.listeners.push(listener)
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    for (const listener of this.listeners.splice(0)) listener()
  }
}

// Connection-level headers are the server's to set, not a Response's (HTTP/2 refuses them).
const responseHeaders = (headers: Readonly<Record<string, string>>, own: Readonly<Record<string, string>>) => {
  const all: Record<string, string> = { ...headers, ...own }
  if (all["connection"] !== undefined) delete all["connection"]
  return all
}

const send = (exchange: WebExchange, answer: Answer, headers: Readonly<Record<string, string>>): void => {
  if (exchange.closed) return
  exchange.answer(
    new Response(answer.body ?? null, { status: answer.status, headers: responseHeaders(headers, answer.headers) })
  )
  exchange.close()
}

const encoder = new TextEncoder()

const stream = (exchange: WebExchange, headers: Readonly<Record<string, string>>): EventSink => {
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => {
      exchange.body = controller
    },
    cancel: () => exchange.close()
  })
  exchange.answer(new Response(body, { status: 200, headers: responseHeaders(headers, SSE_HEADERS) }))
  return {
    write: (text) => {
      if (!exchange.closed) exchange.body!.enqueue(encoder.encode(text))
    },
    end: () => {
      if (exchange.closed) return
      exchange.body!.close()
      exchange.close()
    }
  }
}

const decoder = new TextDecoder()

// The body's bytes as text, or the refusal: 413 past `maxBytes`, 408 when it has not all
// come within `timeoutMs` (the rest is not read).
const readText = async (body: ReadableStream<Uint8Array>, limits: BodyLimits): Promise<string | Answer> => {
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  let late = false
  const timer = setTimeout(() => {
    late = true
    reader.cancel().catch(() => undefined)
  }, limits.timeoutMs)
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      size += read.value.byteLength
      if (size > limits.maxBytes) {
        reader.cancel().catch(() => undefined)
        return Guard.tooLarge(limits.maxBytes)
      }
      chunks.push(read.value)
    }
  } catch {
    return late ? Guard.tooSlow(limits.timeoutMs) : Guard.unreadable
  } finally {
    clearTimeout(timer)
  }
  if (late) return Guard.tooSlow(limits.timeoutMs)
  if (chunks.length === 1) return decoder.decode(chunks[0])
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return decoder.decode(bytes)
}

const INTERNAL_ERROR = Guard.jsonRpcError(500, JsonRpc.ErrorCode.InternalError, "Internal error")

/** fetch's exchanges. */
export const exchange: Exchange<WebExchange> = {
  method: (exchange) => exchange.request.method,
  path: (exchange) => exchange.path,
  headers: (exchange) => exchange.headers,
  readBody: (exchange, limits, done) => {
    const body = exchange.request.body
    if (body === null) return done("")
    void readText(body, limits).then(done)
  },
  // fetch's Request does not say.
  address: () => undefined,
  send,
  stream,
  isGone: (exchange) => exchange.closed,
  onClose: (exchange, listener) => exchange.onClose(listener),
  fail: (exchange) => {
    if (!exchange.answered) return send(exchange, INTERNAL_ERROR, {})
    if (exchange.closed) return
    exchange.body?.error(new Error("the answer was cut"))
    exchange.close()
  }
}

/** The endpoint of `server` as `(Request) => Promise<Response>` (see `Http.endpoint`). */
export const endpoint = (
  server: McpServer.McpServer,
  options: Http.EndpointOptions
): Effect.Effect<(request: Request) => Promise<Response>, never, Scope.Scope> =>
  Effect.map(
    Http.endpoint(server, options, exchange),
    (handle) => (request: Request) => new Promise<Response>((resolve) => handle(new WebExchange(request, resolve)))
  )
