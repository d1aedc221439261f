/**
 * Streamable HTTP serving for any McpServer, on no platform in particular: one endpoint,
 * sessions keyed by Mcp-Session-Id, each a session of the server (`McpServer.connect`) over
 * a transport whose answers go back on the POST that asked (as JSON, or as an SSE stream
 * when the request may produce notifications on the way) and whose other notifications go
 * on the session's standing GET stream. Origin and Host are checked against DNS rebinding,
 * and an optional bearer token guards everything: a static one, or OAuth access tokens
 * checked by a `ResourceServer`, whose metadata is served here too.
 *
 * The core works on exchanges (`exchange.ts`), which a platform's adapter reads and writes:
 * `web.ts` (fetch's Request and Response) and `node.ts` (node:http, and a listener of its
 * own). Requests are served in the platform's callbacks: a POST's body is read, its
 * messages handed to the session's Peer and the answer written from the callback that has
 * it. Only what cannot be done in a callback (opening a session, ending one, the standing
 * stream's keep-alive comments) runs as a fiber, in a FiberSet of the endpoint's Scope.
 *
 * The parts: `guard` (the checks), `cors`, `sessionTable` and `httpSession` (the sessions),
 * `post` and `get` (the methods), `modern` (a modern request outside any session),
 * `streamLog` (POST streams kept for resumption) and `response` (answers).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../../JsonRpc.js"
import type * as McpServer from "../../../McpServer.js"
import * as ResourceServer from "../../../ResourceServer.js"
import * as Cors from "./cors.js"
import type { Exchange, Io } from "./exchange.js"
import * as Get from "./get.js"
import * as Guard from "./guard.js"
import * as Post from "./post.js"
import * as Response from "./response.js"
import { type Limits, SessionTable } from "./sessionTable.js"

/** The endpoint's settings, resolved. */
export interface EndpointOptions extends Limits {
  /** The address the app is bound to: on loopback, a request's Host must name loopback too. */
  readonly host: string
  /** The endpoint's path; any other is 404. Undefined: every path (the app routes to it). */
  readonly path: string | undefined
  readonly token: Redacted.Redacted<string> | undefined
  /** OAuth access tokens required instead of a static token. */
  readonly oauth: ResourceServer.Options | undefined
  readonly allowedOrigins: ReadonlyArray<string>
  readonly maxMessageBytes: number
  /** How long a request's body may take to arrive whole (slow clients are cut: 408). */
  readonly bodyTimeout: Duration.DurationInput
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
  maxSessionsPerPrincipal: options.maxSessionsPerPrincipal ?? 100,
  maxSessionsPerAddress: options.maxSessionsPerAddress ?? 100,
  initializeTimeout: options.initializeTimeout ?? "10 seconds",
  sessionIdleTimeout: options.sessionIdleTimeout ?? "30 minutes",
  bodyTimeout: options.bodyTimeout ?? "30 seconds"
})

const NOT_FOUND = Response.text(404, "Not Found")
const NOT_ALLOWED = Response.text(405, "Method Not Allowed", { allow: "GET, POST, DELETE" })
const CLOSED = new Response.Answer(200)

// The resource server's metadata, at its well-known paths.
const serveMetadata = <X>(io: Io<X>, server: ResourceServer.ResourceServer) => {
  const answer = Guard.metadata(server)
  return (exchange: X, method: string | undefined, origin: string | undefined): void => {
    if (method === "OPTIONS") return io.send(exchange, Cors.preflight(origin), {})
    if (method !== "GET") return io.send(exchange, NOT_ALLOWED, {})
    io.send(exchange, answer, Cors.headers(origin))
  }
}

// The methods of the endpoint, once the guards let a request through.
const makeRoute = <X>(io: Io<X>, table: SessionTable, options: EndpointOptions) =>
(
  exchange: X,
  method: string | undefined,
  cors: Record<string, string>,
  caller: Guard.Caller | undefined
): void => {
  switch (method) {
    case "POST":
      return Post.handle(io, exchange, table, options, cors, caller)
    case "GET":
      return Get.handle(io, exchange, table, cors, caller)
    case "DELETE": {
      const session = table.lookup(io.headers(exchange), caller)
      if (session instanceof Response.Answer) return io.send(exchange, session, cors)
      return void io.fork(
        exchange,
        Effect.zipRight(table.close(session), Effect.sync(() => io.send(exchange, CLOSED, cors)))
      )
    }
    default:
      return io.send(exchange, NOT_ALLOWED, cors)
  }
}

/**
 * The endpoint's handler of an exchange, over the sessions of `table`; with a resource
 * server, OAuth guards the endpoint and the metadata is served.
 */
export const makeHandler = <X>(
  io: Io<X>,
  table: SessionTable,
  options: EndpointOptions,
  resourceServer: ResourceServer.ResourceServer | undefined
) => {
  const guard = Guard.make(options)
  const oauth = resourceServer === undefined ? undefined : Guard.oauth(resourceServer)
  const metadata = resourceServer === undefined ? undefined : serveMetadata(io, resourceServer)
  const metadataPaths = new Set(resourceServer?.metadataPaths)
  const route = makeRoute(io, table, options)
  return (exchange: X): void => {
    try {
      const headers = io.headers(exchange)
      const method = io.method(exchange)
      const preflight = method === "OPTIONS"
      const refused = guard(headers, preflight)
      if (refused !== undefined) return io.send(exchange, refused, {})
      const path = io.path(exchange)
      const origin = headers["origin"]
      if (metadata !== undefined && metadataPaths.has(path)) return metadata(exchange, method, origin)
      if (options.path !== undefined && path !== options.path) return io.send(exchange, NOT_FOUND, {})
      if (preflight) return io.send(exchange, Cors.preflight(origin), {})
      const cors = Cors.headers(origin)
      const verdict = oauth?.(headers)
      if (verdict instanceof Response.Answer) return io.send(exchange, verdict, cors)
      if (Effect.isEffect(verdict)) {
        return void io.fork(
          exchange,
          Effect.map(verdict, (caller) =>
            caller instanceof Response.Answer
              ? io.send(exchange, caller, cors)
              : route(exchange, method, cors, caller))
        )
      }
      route(exchange, method, cors, verdict)
    } catch (defect) {
      io.failed(exchange, defect)
    }
  }
}

// Fibers for what the callbacks cannot do, interrupted when the Scope closes: interruptible
// even when the server was started in an uninterruptible region, or closing would wait on
// a standing stream for ever (sessions' fibers inherit this too).
const makeIo = <X>(exchange: Exchange<X>) =>
  Effect.map(FiberSet.makeRuntime<never>(), (runFork): Io<X> => {
    const failed = (x: X, cause: Cause.Cause<unknown>) =>
      Effect.zipRight(
        Effect.logError("MCP server: an HTTP request failed", cause),
        Effect.sync(() => exchange.fail(x))
      )
    return {
      ...exchange,
      fork: (x, effect) =>
        runFork(Effect.interruptible(Effect.catchAllDefect(effect, (defect) => failed(x, Cause.die(defect))))),
      failed: (x, defect) => {
        runFork(failed(x, Cause.die(defect)))
      }
    }
  })

/**
 * The endpoint of `server` as a handler of `exchange`'s exchanges, serving until the Scope
 * closes, when its sessions end (their streams with them). With `oauth`, its resource is
 * `resource` unless the options name one.
 */
export const endpoint = <X>(
  server: McpServer.McpServer,
  options: EndpointOptions,
  exchange: Exchange<X>,
  resource?: string | undefined
): Effect.Effect<(exchange: X) => void, never, Scope.Scope> =>
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
    const table = new SessionTable(
      server,
      yield* Effect.scope,
      yield* Effect.clock,
      options,
      options.token !== undefined
    )
    yield* Effect.forkScoped(Effect.interruptible(table.expireIdle()))
    const io = yield* makeIo(exchange)
    yield* Effect.addFinalizer(() => table.closeAll())
    return makeHandler(io, table, options, resourceServer)
  })
