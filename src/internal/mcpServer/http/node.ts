/**
 * The Streamable HTTP endpoint on node:http: the exchange is Node's own `ServerResponse`
 * (its request is `response.req`), read and written in Node's callbacks, so serving a
 * request costs nothing beyond the core's own work — no Request, Response or promise per
 * request. A whole answer goes out in one write (head and body together, its length known);
 * an event stream is chunked, each event written as it comes. `serve` is the endpoint on a
 * listener of its own.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as http from "node:http"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpError from "../../../McpError.js"
import type * as McpServer from "../../../McpServer.js"
import type { BodyLimits, Exchange } from "./exchange.js"
import * as Guard from "./guard.js"
import * as Http from "./http.js"
import { type Answer, SSE_HEADERS } from "./response.js"

type NodeExchange = http.ServerResponse

// A response of a pipelined request has no socket until the ones before it are written: it
// is not gone.
const isGone = (response: NodeExchange): boolean =>
  response.writableEnded || response.destroyed || response.socket?.destroyed === true

// Head and body in one write: with the length known, Node sends the head with the body.
const send = (response: NodeExchange, answer: Answer, headers: Readonly<Record<string, string>>): void => {
  if (isGone(response)) return
  const head: Record<string, string> = { ...headers, ...answer.headers }
  if (answer.body !== undefined) head["content-length"] = String(Buffer.byteLength(answer.body))
  response.writeHead(answer.status, head)
  response.end(answer.body)
}

const STREAM_HEADERS: Readonly<Record<string, string>> = { ...SSE_HEADERS, connection: "keep-alive" }

// Headers go out with the first event, which the core writes at once.
const stream = (response: NodeExchange, headers: Readonly<Record<string, string>>) => {
  response.writeHead(200, { ...headers, ...STREAM_HEADERS })
  return {
    write: (text: string) => {
      if (!response.writableEnded) response.write(text)
    },
    end: () => {
      if (!response.writableEnded) response.end()
    }
  }
}

const readBody = (response: NodeExchange, limits: BodyLimits, done: (body: string | Answer) => void): void => {
  const request = response.req
  const chunks: Array<Buffer> = []
  let size = 0
  let settled = false
  const settle = (body: string | Answer) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    done(body)
  }
  // The refusal's `connection: close` ends the connection once it is written.
  const timer = setTimeout(() => settle(Guard.tooSlow(limits.timeoutMs)), limits.timeoutMs)
  request.on("data", (chunk: Buffer) => {
    if (settled) return
    size += chunk.length
    if (size > limits.maxBytes) settle(Guard.tooLarge(limits.maxBytes))
    else chunks.push(chunk)
  })
  request.on("end", () => settle((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8")))
  request.on("error", () => settle(Guard.unreadable))
}

const INTERNAL_ERROR = Guard.jsonRpcError(500, JsonRpc.ErrorCode.InternalError, "Internal error")

/** node:http's exchanges: a `ServerResponse` and its `req`. */
export const exchange: Exchange<NodeExchange> = {
  method: (response) => response.req.method,
  path: (response) => {
    const url = response.req.url ?? ""
    const query = url.indexOf("?")
    return query === -1 ? url : url.slice(0, query)
  },
  headers: (response) => response.req.headers as Guard.RequestHeaders,
  readBody,
  address: (response) => response.req.socket.remoteAddress,
  send,
  stream,
  isGone,
  onClose: (response, listener) => void response.once("close", listener),
  fail: (response) => {
    if (response.headersSent) response.destroy()
    else send(response, INTERNAL_ERROR, {})
  }
}

/** The endpoint of `server` as a handler of Node's `request` event (see `Http.endpoint`). */
export const endpoint = (
  server: McpServer.McpServer,
  options: Http.EndpointOptions,
  resource?: string | undefined
): Effect.Effect<(request: http.IncomingMessage, response: http.ServerResponse) => void, never, Scope.Scope> =>
  Effect.map(
    Http.endpoint(server, options, exchange, resource),
    (handle) => (_request: http.IncomingMessage, response: http.ServerResponse) => handle(response)
  )

/** The settings of an endpoint on a listener of its own, resolved. */
export interface HttpOptions extends Http.EndpointOptions {
  readonly port: number
  readonly path: string
  readonly headersTimeout: Duration.DurationInput
}

// Slow clients are cut by node:http itself: headers within `headersTimeout`, the whole request
// within that plus the body's time, checked every second (node's default is 30 s, which let
// a trickled head hold a connection for over 80 s).
const serverOptions = (options: HttpOptions): http.ServerOptions => {
  const headersTimeout = Duration.toMillis(options.headersTimeout)
  return {
    headersTimeout,
    requestTimeout: headersTimeout + Duration.toMillis(options.bodyTimeout),
    connectionsCheckingInterval: Math.min(Math.max(headersTimeout / 4, 50), 1000)
  }
}

// The listener, closed with the Scope: closing ends the connections still open (keep-alive
// ones, and streams of sessions that just ended) so it completes at once.
const listen = (options: HttpOptions): Effect.Effect<http.Server, McpError.McpError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<http.Server, McpError.McpError>((resume) => {
      const server = http.createServer(serverOptions(options))
      const failed = (error: Error) =>
        resume(Effect.fail(McpError.transport(
          undefined,
          { message: `could not listen on ${options.host}:${options.port}: ${String(error)}` },
          error
        )))
      server.once("error", failed)
      server.listen(options.port, options.host, () => {
        server.off("error", failed)
        resume(Effect.succeed(server))
      })
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  )

/** Serves `server` over HTTP until the Scope closes; returns the endpoint's URL. */
export const serve = (
  server: McpServer.McpServer,
  options: HttpOptions
): Effect.Effect<string, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const listener = yield* listen(options)
    const address = listener.address() as { readonly address: string; readonly port: number }
    const host = address.address.includes(":") ? `[${address.address}]` : address.address
    const url = `http://${host}:${address.port}${options.path}`
    // Made after the listener, so its sessions end before the listener closes.
    listener.on("request", yield* endpoint(server, options, url))
    return url
  })
