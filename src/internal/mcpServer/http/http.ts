/**
 * Streamable HTTP serving for any McpServer: one endpoint, sessions keyed by Mcp-Session-Id,
 * each a session of the server (`McpServer.connect`) over a transport whose answers go back on the POST that asked (as JSON, or as an SSE
 * stream when the request may produce notifications on the way) and whose other
 * notifications go on the session's standing GET stream. Origin and Host are checked
 * against DNS rebinding, and an optional bearer token guards everything: a static one, or
 * OAuth access tokens checked by a `ResourceServer`, whose metadata is served here too.
 *
 * Requests are served on Node's `request` event, in its callbacks: a POST's body is read, its
 * messages handed to the session's Peer and the answer written from the callback that has
 * it. Only what cannot be done in a callback (opening a session, ending one, the standing
 * stream's keep-alive comments) runs as a fiber, in a FiberSet of the endpoint's Scope.
 *
 * The endpoint is a handler of Node's `request` event (`endpoint`), mountable in any
 * node:http app; `serve` is that handler on a listener of its own.
 *
 * The parts: `guard` (the checks), `cors`, `sessionTable` and `httpSession` (the sessions),
 * `post` and `get` (the methods), `streamLog` (POST streams kept for resumption) and
 * `response` (answers written from the callbacks that have them).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as http from "node:http"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpError from "../../../McpError.js"
import type * as McpServer from "../../../McpServer.js"
import * as ResourceServer from "../../../ResourceServer.js"
import * as Cors from "./cors.js"
import * as Get from "./get.js"
import * as Guard from "./guard.js"
import * as Post from "./post.js"
import * as Response from "./response.js"
import { SessionTable } from "./sessionTable.js"

/** The endpoint's settings, resolved. */
export interface EndpointOptions {
  /** The address the app is bound to: on loopback, a request's Host must name loopback too. */
  readonly host: string
  /** The endpoint's path; any other is 404. Undefined: every path (the app routes to it). */
  readonly path: string | undefined
  readonly token: Redacted.Redacted<string> | undefined
  /** OAuth access tokens required instead of a static token. */
  readonly oauth: ResourceServer.Options | undefined
  readonly allowedOrigins: ReadonlyArray<string>
  readonly maxMessageBytes: number
  readonly maxSessions: number
  /** How long a session may be idle (no request, no open stream) before it ends. */
  readonly sessionIdleTimeout: Duration.DurationInput
}

/** The settings of an endpoint on a listener of its own, resolved. */
export interface HttpOptions extends EndpointOptions {
  readonly port: number
  readonly path: string
}

/** The endpoint's settings with their defaults. */
export const resolve = (options: McpServer.HttpHandlerOptions): EndpointOptions => ({
  host: options.host ?? "127.0.0.1",
  path: options.path,
  token: options.token,
  oauth: options.oauth,
  allowedOrigins: options.allowedOrigins ?? [],
  maxMessageBytes: options.maxMessageBytes ?? JsonRpc.DEFAULT_MAX_MESSAGE_BYTES,
  maxSessions: options.maxSessions ?? 1000,
  sessionIdleTimeout: options.sessionIdleTimeout ?? "30 minutes"
})

const NOT_FOUND = Response.text(404, "Not Found")
const NOT_ALLOWED = Response.text(405, "Method Not Allowed", { allow: "GET, POST, DELETE" })
const CLOSED = new Response.Answer(200)

// The resource server's metadata, at its well-known paths.
const serveMetadata = (server: ResourceServer.ResourceServer) => {
  const answer = Guard.metadata(server)
  return (request: http.IncomingMessage, response: http.ServerResponse, origin: string | undefined): void => {
    if (request.method === "OPTIONS") return Response.send(response, Cors.preflight(origin), {})
    if (request.method !== "GET") return Response.send(response, NOT_ALLOWED, {})
    Response.send(response, answer, Cors.headers(origin))
  }
}

/**
 * The endpoint's handler of Node's `request` event, over the sessions of `table`; with a
 * resource server, OAuth guards the endpoint and the metadata is served.
 */
export const makeHandler = (
  table: SessionTable,
  options: EndpointOptions,
  runner: Response.Runner,
  resourceServer: ResourceServer.ResourceServer | undefined
) => {
  const guard = Guard.make(options)
  const oauth = resourceServer === undefined ? undefined : Guard.oauth(resourceServer)
  const metadata = resourceServer === undefined ? undefined : serveMetadata(resourceServer)
  const metadataPaths = new Set(resourceServer?.metadataPaths)
  const route = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
    cors: Record<string, string>,
    caller: Guard.Caller | undefined
  ): void => {
    switch (request.method) {
      case "POST":
        return Post.handle(request, response, table, options.maxMessageBytes, cors, runner, caller)
      case "GET":
        return Get.handle(request, response, table, cors, runner, caller)
      case "DELETE": {
        const session = table.lookup(request.headers as Guard.RequestHeaders, caller)
        if (session instanceof Response.Answer) return Response.send(response, session, cors)
        return void runner.fork(
          response,
          Effect.zipRight(table.close(session), Effect.sync(() => Response.send(response, CLOSED, cors)))
        )
      }
      default:
        return Response.send(response, NOT_ALLOWED, cors)
    }
  }
  return (request: http.IncomingMessage, response: http.ServerResponse): void => {
    try {
      const headers = request.headers as Guard.RequestHeaders
      const preflight = request.method === "OPTIONS"
      const refused = guard(headers, preflight)
      if (refused !== undefined) return Response.send(response, refused, {})
      const path = request.url?.split("?")[0] ?? ""
      const origin = headers["origin"]
      if (metadata !== undefined && metadataPaths.has(path)) return metadata(request, response, origin)
      if (options.path !== undefined && path !== options.path) return Response.send(response, NOT_FOUND, {})
      if (preflight) return Response.send(response, Cors.preflight(origin), {})
      const cors = Cors.headers(origin)
      const verdict = oauth?.(headers)
      if (verdict instanceof Response.Answer) return Response.send(response, verdict, cors)
      if (Effect.isEffect(verdict)) {
        return void runner.fork(
          response,
          Effect.map(verdict, (caller) =>
            caller instanceof Response.Answer
              ? Response.send(response, caller, cors)
              : route(request, response, cors, caller))
        )
      }
      route(request, response, cors, verdict)
    } catch (defect) {
      runner.failed(response, defect)
    }
  }
}

const internalError = (response: http.ServerResponse): void => {
  if (response.headersSent) response.destroy()
  else Response.send(response, Guard.jsonRpcError(500, JsonRpc.ErrorCode.InternalError, "Internal error"), {})
}

// Fibers for what the callbacks cannot do, interrupted when the Scope closes: interruptible
// even when the server was started in an uninterruptible region, or closing would wait on
// a standing stream for ever (sessions' fibers inherit this too).
const makeRunner = Effect.map(FiberSet.makeRuntime<never>(), (runFork): Response.Runner => {
  const failed = (response: http.ServerResponse, cause: Cause.Cause<unknown>) =>
    Effect.zipRight(
      Effect.logError("MCP server: an HTTP request failed", cause),
      Effect.sync(() => internalError(response))
    )
  return {
    fork: (response, effect) =>
      runFork(Effect.interruptible(Effect.catchAllDefect(effect, (defect) => failed(response, Cause.die(defect))))),
    failed: (response, defect) => {
      runFork(failed(response, Cause.die(defect)))
    }
  }
})

// The listener, closed with the Scope: closing ends the connections still open (keep-alive
// ones, and streams of sessions that just ended) so it completes at once.
const listen = (options: HttpOptions): Effect.Effect<http.Server, McpError.McpError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<http.Server, McpError.McpError>((resume) => {
      const server = http.createServer()
      const failed = (error: Error) =>
        resume(Effect.fail(McpError.make(
          undefined,
          new McpError.TransportReason({
            message: `could not listen on ${options.host}:${options.port}: ${String(error)}`
          }),
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

/**
 * The endpoint of `server` as a handler of Node's `request` event, serving until the Scope
 * closes, when its sessions end (their streams with them). With `oauth`, its resource is
 * `resource` unless the options name one.
 */
export const endpoint = (
  server: McpServer.McpServer,
  options: EndpointOptions,
  resource?: string | undefined
): Effect.Effect<(request: http.IncomingMessage, response: http.ServerResponse) => void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const oauth = options.oauth
    const url = oauth?.resource ?? resource
    if (oauth !== undefined && options.token !== undefined) {
      return yield* Effect.dieMessage("MCP server over HTTP: give either token or oauth, not both")
    }
    if (oauth !== undefined && url === undefined) {
      return yield* Effect.dieMessage("MCP server over HTTP: oauth.resource names the endpoint's public URL")
    }
    const resourceServer = oauth === undefined ? undefined : yield* ResourceServer.make({ ...oauth, resource: url! })
    const table = new SessionTable(server, yield* Effect.scope, yield* Effect.clock, options.maxSessions)
    yield* Effect.forkScoped(Effect.interruptible(table.expireIdle(options.sessionIdleTimeout)))
    const runner = yield* makeRunner
    yield* Effect.addFinalizer(() => table.closeAll())
    return makeHandler(table, options, runner, resourceServer)
  })

/**
 * Serves `server` over HTTP until the Scope closes; returns the endpoint's URL.
 */
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
