/**
 * The HttpWire service: the HTTP exchange the HTTP transports (StreamableHttp, LegacySse) are
 * written on, one request with its answer handed to callbacks as it arrives, so a transport
 * completes a request from the I/O callback that read its answer.
 *
 * It is optional. With an HttpWire in context the transports dispatch through it with no
 * fiber, Stream or promise per exchange: `HttpClientUndici.layer` (`mcp-fleet/node`) provides
 * one on the same undici Agent as its `HttpClient`. Without one they carry each exchange
 * through the `HttpClient` in context (a fiber per exchange, reading the body as a Stream),
 * which works on any runtime (`FetchHttpClient.layer` on Workers, Deno, Bun, the browser).
 *
 * A wire stands for one `HttpClient` (its `client`), and the transports take it only while
 * that very client is the one in context: a client derived from it (`HttpClient.mapRequest`
 * for a header, a proxy, tracing middleware) is a different one, so it is used as given,
 * through `execute`, and never bypassed.
 *
 * @since 0.4.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"

/**
 * One request, as it goes on the wire.
 *
 * @since 0.4.0
 * @category models
 */
export interface WireRequest {
  readonly method: "GET" | "POST" | "DELETE"
  readonly url: string
  /** Every header, lower-cased names; a POST body's content type among them. */
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | undefined
}

/**
 * Response headers, names lower-cased.
 *
 * @since 0.4.0
 * @category models
 */
export type WireHeaders = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * Where an exchange reports; after `onEnd` or `onError` nothing more is called. Its
 * functions are called as methods, so a class can be the handler.
 *
 * @since 0.4.0
 * @category models
 */
export interface WireHandler {
  /** The status and headers; called once, before any data. */
  readonly onHeaders: (status: number, headers: WireHeaders) => void
  readonly onData: (chunk: Uint8Array) => void
  readonly onEnd: () => void
  /** The request could not be sent, or (after `onHeaders`) its body broke. */
  readonly onError: (cause: unknown) => void
}

/**
 * An exchange under way.
 *
 * @since 0.4.0
 * @category models
 */
export interface Abortable {
  /** Stops it: its connection is dropped and its handler hears nothing more. */
  abort(): void
}

/**
 * Starts one exchange.
 *
 * @since 0.4.0
 * @category models
 */
export type Wire = (request: WireRequest, handler: WireHandler) => Abortable

/**
 * A fast HTTP wire, used by the HTTP transports instead of the `HttpClient` when present.
 *
 * @since 0.4.0
 * @category models
 */
export interface HttpWire {
  /** The client this wire stands for: the transports use the wire only while it is the HttpClient in context. */
  readonly client: HttpClient.HttpClient
  readonly exchange: Wire
}

/**
 * The HttpWire service.
 *
 * @since 0.4.0
 * @category tags
 */
export const HttpWire = Context.GenericTag<HttpWire>("mcp-fleet/HttpWire")
