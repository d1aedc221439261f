/**
 * A lean `HttpClient` on undici for the HTTP transports. `@effect/platform-node`'s own
 * client wraps every exchange in an AbortController, a FinalizationRegistry entry and
 * interruptible response proxies, which triples the cost of a small MCP POST; this one
 * maps a request straight onto `Dispatcher.request` and lets Effect interruption abort it.
 * The HTTP transports go further: `layer` also provides an `HttpWire` on the same Agent
 * (`makeWire`), and they dispatch through it themselves and read answers in its callbacks.
 * Any other `HttpClient` works with the transports too (without an HttpWire they go through
 * `HttpClient.execute`). Node only: it sits on undici.
 *
 * @since 0.1.0
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Cookies from "@effect/platform/Cookies"
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import type { Agent, Dispatcher } from "undici"
import { HttpWire } from "./HttpWire.js"
import { fromDispatcher } from "./internal/transport/undiciWire.js"
import { loadUndici } from "./internal/undici.js"

// An unread body would keep its connection; its errors are reported when it is read.
const ignore = () => {}

class Response extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId = HttpClientResponse.TypeId

  constructor(readonly request: HttpClientRequest.HttpClientRequest, readonly source: Dispatcher.ResponseData) {
    super()
    source.body.on("error", ignore)
  }

  get status(): number {
    return this.source.statusCode
  }

  // The transports read several headers of each answer: convert them once.
  private converted: Headers.Headers | undefined
  get headers(): Headers.Headers {
    return this.converted ??= Headers.fromInput(this.source.headers as Record<string, string | ReadonlyArray<string>>)
  }

  get cookies(): Cookies.Cookies {
    const header = this.source.headers["set-cookie"]
    return header === undefined ? Cookies.empty : Cookies.fromSetCookie(Array.isArray(header) ? header : [header])
  }

  get remoteAddress(): Option.Option<string> {
    return Option.none()
  }

  private decodeError(cause: unknown) {
    return new HttpClientError.ResponseError({ request: this.request, response: this, reason: "Decode", cause })
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    return NodeStream.fromReadable(() => this.source.body, (cause) => this.decodeError(cause))
  }

  // Giving up on a body (interruption, a timeout) hangs up: a body that never ends would
  // otherwise keep its socket open for as long as the server likes.
  private read<A>(read: (body: Dispatcher.ResponseData["body"]) => Promise<A>) {
    return Effect.tryPromise({
      try: (signal) => {
        const body = this.source.body
        signal.addEventListener("abort", () => body.destroy(), { once: true })
        return read(body)
      },
      catch: (cause) => this.decodeError(cause)
    })
  }

  get text(): Effect.Effect<string, HttpClientError.ResponseError> {
    return this.read((body) => body.text())
  }

  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    return Effect.flatMap(
      this.text,
      (text) =>
        Effect.try({
          try: () => text === "" ? null : JSON.parse(text) as unknown,
          catch: (cause) => this.decodeError(cause)
        })
    )
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.ResponseError> {
    return this.read((body) => body.arrayBuffer())
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    return Effect.map(this.text, (text) => UrlParams.fromInput(new URLSearchParams(text)))
  }

  get formData(): Effect.Effect<FormData, HttpClientError.ResponseError> {
    return Effect.fail(this.decodeError(new Error("form data bodies are not read by this client")))
  }

  toJSON(): unknown {
    return { _id: "HttpClientResponse", request: this.request.toJSON(), status: this.status, headers: this.headers }
  }
}

const bodyOf = (request: HttpClientRequest.HttpClientRequest): Either.Either<Uint8Array | string | null, string> => {
  const body = request.body
  switch (body._tag) {
    case "Empty":
      return Either.right(null)
    case "Uint8Array":
      return Either.right(body.body)
    case "Raw":
      return typeof body.body === "string" || body.body instanceof Uint8Array
        ? Either.right(body.body)
        : Either.left("a raw body that is neither text nor bytes")
    default:
      return Either.left(`a ${body._tag} body`)
  }
}

/**
 * The HttpWire of `client`, sending through `dispatcher` (the undici Agent or Pool `client`
 * was made on): one `dispatch` per exchange, its answer read in the dispatcher's callbacks.
 *
 * @since 0.4.0
 * @category constructors
 */
export const makeWire = (client: HttpClient.HttpClient, dispatcher: Dispatcher): HttpWire => ({
  client,
  exchange: fromDispatcher(dispatcher)
})

/**
 * An HttpClient sending through `dispatcher` (an undici Agent or Pool).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (dispatcher: Dispatcher): HttpClient.HttpClient =>
  HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
    (effect) =>
      Effect.flatMap(effect, (request) => {
        const url = UrlParams.makeUrl(request.url, request.urlParams, request.hash)
        if (Either.isLeft(url)) {
          return Effect.fail(new HttpClientError.RequestError({ request, reason: "InvalidUrl", cause: url.left }))
        }
        const body = bodyOf(request)
        if (Either.isLeft(body)) {
          return Effect.fail(
            new HttpClientError.RequestError({
              request,
              reason: "Encode",
              cause: new Error(`cannot send ${body.left}`)
            })
          )
        }
        // Interruption aborts the exchange through the signal Effect.async provides.
        return Effect.async<HttpClientResponse.HttpClientResponse, HttpClientError.RequestError>((resume, signal) => {
          dispatcher.request({
            origin: url.right.origin,
            path: url.right.pathname + url.right.search,
            method: request.method as Dispatcher.HttpMethod,
            headers: request.headers,
            body: body.right,
            signal,
            // Deadlines are the caller's (Effect timeouts); a stream may stay open for hours.
            headersTimeout: 0,
            bodyTimeout: 0
          }).then(
            (source) => resume(Effect.succeed(new Response(request, source))),
            (cause) => resume(Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", cause })))
          )
        })
      }),
    Effect.succeed
  )

// undici is a quarter of the CLI's code: the Agent is made on the first exchange, so a command
// that reaches no HTTP server (a stdio fleet) never loads it. Until then, exchanges wait for it.
const lazyAgent = () => {
  let agent: Agent | undefined
  let loading: Promise<Agent> | undefined
  const load = () => loading ??= loadUndici().then(({ Agent }) => agent = new Agent())
  const dispatcher = {
    request: (options: Dispatcher.RequestOptions) => load().then((ready) => ready.request(options)),
    dispatch: (options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => {
      if (agent !== undefined) return agent.dispatch(options, handler)
      load().then((ready) => ready.dispatch(options, handler))
      return true
    }
    // The two methods `make` and the wire call: nothing else of a Dispatcher is reached.
  } as Dispatcher
  return { dispatcher, close: () => loading?.then((ready) => ready.destroy()) ?? Promise.resolve() }
}

/**
 * An HttpClient and the HttpWire the HTTP transports use, on one undici Agent of their own
 * (made on the first exchange), closed with the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<HttpClient.HttpClient | HttpWire> = Layer.scopedContext(
  Effect.map(
    Effect.acquireRelease(Effect.sync(lazyAgent), (agent) => Effect.promise(agent.close)),
    ({ dispatcher }) => {
      const client = make(dispatcher)
      return Context.make(HttpClient.HttpClient, client).pipe(Context.add(HttpWire, makeWire(client, dispatcher)))
    }
  )
)
