/**
 * The gateway's Streamable HTTP server: one endpoint, sessions keyed by Mcp-Session-Id, each
 * a Peer over a transport whose answers go back on the POST that asked (as JSON, or as an SSE
 * stream when the request may produce notifications on the way) and whose other
 * notifications go on the session's standing GET stream. Origin and Host are checked
 * against DNS rebinding, and an optional bearer token guards everything: a static one, or
 * OAuth access tokens checked by a `ResourceServer`, whose metadata is served here too.
 *
 * Requests are served on Node's `request` event, in its callbacks: a POST's body is read, its
 * messages handed to the session's Peer and the answer written from the callback that has
 * it. Only what cannot be done in a callback (opening a session, ending one, the standing
 * stream's keep-alive comments) runs as a fiber, in a FiberSet of the server's Scope.
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
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import * as ResourceServer from "../../ResourceServer.js"
import * as Cors from "./cors.js"
import type { Fleet } from "./fleet.js"
import * as Get from "./get.js"
import * as Guard from "./guard.js"
import * as Post from "./post.js"
import * as Response from "./response.js"
import { SessionTable } from "./sessionTable.js"

/** The HTTP server's settings, resolved. */
export interface HttpOptions {
  readonly port: number
  readonly host: string
  readonly path: string
  readonly token: Redacted.Redacted<string> | undefined
  /** OAuth access tokens required instead of a static token. */
  readonly oauth: ResourceServer.Options | undefined
  readonly allowedOrigins: ReadonlyArray<string>
  readonly maxMessageBytes: number
  readonly maxSessions: number
  /** How long a session may be idle (no request, no open stream) before it ends. */
  readonly sessionIdleTimeout: Duration.DurationInput
}

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
  options: HttpOptions,
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
        return runner.fork(
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
      if (path !== options.path) {
        if (metadata !== undefined && metadataPaths.has(path)) return metadata(request, response, origin)
        return Response.send(response, NOT_FOUND, {})
      }
      if (preflight) return Response.send(response, Cors.preflight(origin), {})
      const cors = Cors.headers(origin)
      const verdict = oauth?.(headers)
      if (verdict instanceof Response.Answer) return Response.send(response, verdict, cors)
      if (Effect.isEffect(verdict)) {
        return runner.fork(
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
    Effect.zipRight(Effect.logError("gateway: a request failed", cause), Effect.sync(() => internalError(response)))
  return {
    fork: (response, effect) => {
      runFork(Effect.interruptible(Effect.catchAllDefect(effect, (defect) => failed(response, Cause.die(defect)))))
    },
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
 * Serves the gateway over HTTP until the Scope closes; returns the endpoint's URL.
 */
export const serve = (fleet: Fleet, options: HttpOptions): Effect.Effect<string, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const table = new SessionTable(fleet, yield* Effect.scope, yield* Effect.clock, options.maxSessions)
    yield* Effect.forkScoped(Effect.interruptible(table.expireIdle(options.sessionIdleTimeout)))
    const runner = yield* makeRunner
    const server = yield* listen(options)
    // Sessions end before the listener closes: their streams end with them.
    yield* Effect.addFinalizer(() => table.closeAll())
    const address = server.address() as { readonly address: string; readonly port: number }
    const host = address.address.includes(":") ? `[${address.address}]` : address.address
    const url = `http://${host}:${address.port}${options.path}`
    const resourceServer = options.oauth === undefined
      ? undefined
      : yield* ResourceServer.make({ ...options.oauth, resource: options.oauth.resource ?? url })
    server.on("request", makeHandler(table, options, runner, resourceServer))
    return url
  })
