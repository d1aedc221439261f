/**
 * The gateway's Streamable HTTP server: one endpoint, sessions keyed by Mcp-Session-Id, each
 * a Peer over a transport whose answers go back on the POST that asked (as JSON, or as an SSE
 * stream when the request may produce notifications on the way) and whose other
 * notifications go on the session's standing GET stream. Origin and Host are checked
 * against DNS rebinding, and an optional bearer token guards everything.
 *
 * The parts: `guard` (the checks), `cors`, `sessionTable` and `httpSession` (the sessions),
 * `post` and `get` (the methods), `streamLog` (POST streams kept for resumption) and
 * `response` (answers written from the callbacks that have them).
 *
 * @internal
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as http from "node:http"
import * as McpError from "../../McpError.js"
import * as Cors from "./cors.js"
import type { Fleet } from "./fleet.js"
import * as Get from "./get.js"
import * as Guard from "./guard.js"
import * as Post from "./post.js"
import { SessionTable } from "./sessionTable.js"

/** The HTTP server's settings, resolved. */
export interface HttpOptions {
  readonly port: number
  readonly host: string
  readonly path: string
  readonly token: Redacted.Redacted<string> | undefined
  readonly allowedOrigins: ReadonlyArray<string>
  readonly maxMessageBytes: number
  readonly maxSessions: number
  /** How long a session may be idle (no request, no open stream) before it ends. */
  readonly sessionIdleTimeout: Duration.DurationInput
}

/** The endpoint's handler of every request, over the sessions of `table`. */
export const makeApp = (table: SessionTable, options: HttpOptions) => {
  const guard = Guard.make(options)
  const route = (request: HttpServerRequest.HttpServerRequest, cors: Record<string, string>) => {
    switch (request.method) {
      case "POST":
        return Post.handle(request, table, options.maxMessageBytes, cors)
      case "GET":
        return Get.handle(request, table, cors)
      case "DELETE": {
        const session = table.lookup(request.headers)
        if (HttpServerResponse.isServerResponse(session)) return Effect.succeed(session)
        return Effect.as(table.close(session), HttpServerResponse.empty({ status: 200 }))
      }
      default:
        return Effect.succeed(HttpServerResponse.text("Method Not Allowed", { status: 405, headers: { allow: "GET, POST, DELETE" } }))
    }
  }
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const preflight = request.method === "OPTIONS"
    const refused = guard(request.headers, preflight)
    if (refused !== undefined) return Effect.succeed(refused)
    if (request.url.split("?")[0] !== options.path) return Effect.succeed(HttpServerResponse.text("Not Found", { status: 404 }))
    const origin = request.headers["origin"]
    if (preflight) return Effect.succeed(Cors.preflight(origin))
    const cors = Cors.headers(origin)
    const response = route(request, cors)
    return origin === undefined ? response : Effect.map(response, (answer) => HttpServerResponse.setHeaders(answer, cors))
  })
}

/**
 * Serves the gateway over HTTP until the Scope closes; returns the endpoint's URL.
 */
export const serve = (fleet: Fleet, options: HttpOptions): Effect.Effect<string, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const table = new SessionTable(fleet, yield* Effect.scope, yield* Effect.clock, options.maxSessions)
    yield* Effect.forkScoped(Effect.interruptible(table.expireIdle(options.sessionIdleTimeout)))
    const node = http.createServer()
    const server = yield* NodeHttpServer.make(() => node, { host: options.host, port: options.port }).pipe(
      Effect.mapError((error) =>
        McpError.make(
          "gateway",
          new McpError.TransportReason({ message: `could not listen on ${options.host}:${options.port}: ${String(error.cause ?? error)}` }),
          error
        )
      )
    )
    // Open SSE streams would keep the server from closing: sessions end first, then sockets.
    yield* Effect.addFinalizer(() => Effect.zipRight(table.closeAll(), Effect.sync(() => node.closeAllConnections())))
    yield* server.serve(makeApp(table, options))
    const address = server.address as HttpServer.TcpAddress
    const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname
    return `http://${host}:${address.port}${options.path}`
  })
