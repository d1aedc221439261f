/**
 * An McpServer's Streamable HTTP endpoint on node:http (part of `mcp-fleet/node`): the
 * endpoint `McpServer.toWebHandler` serves as `(Request) => Promise<Response>`, here read and
 * written on Node's own `IncomingMessage` and `ServerResponse` in their callbacks, with no
 * fetch objects and no promise per request. `toNodeHandler` mounts it in an app's own
 * node:http server (or Express, Fastify's raw handler) at any path; `serveHttp` listens on a
 * port of its own. `serveStdio` serves one session on the process's own stdin and stdout.
 *
 * Both are thin adapters over one core (`internal/mcpServer/http/`), which owns sessions,
 * SSE streams and their resumption, CORS, the bearer-token and OAuth checks and the limits;
 * the Web adapter is the other one, in the neutral entry.
 *
 * @since 0.3.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as http from "node:http"
import * as Http from "./internal/mcpServer/http/http.js"
import * as Node from "./internal/mcpServer/http/node.js"
import type * as McpError from "./McpError.js"
import type * as McpServer from "./McpServer.js"
import * as Stdio from "./Stdio.js"
import { Transport } from "./Transport.js"

/**
 * Options of `serveHttp`: the endpoint's (`McpServer.HttpHandlerOptions`; its path defaults
 * to `/mcp`), and where to listen.
 *
 * @since 0.3.0
 * @category models
 */
export interface HttpOptions extends McpServer.HttpHandlerOptions {
  /** The port; 0 picks a free one (the returned URL says which). */
  readonly port: number
  /**
   * How long a client may take to send a request's headers: past it the connection gets 408
   * and is closed (node:http's `headersTimeout`; the whole request is bounded by this plus
   * `bodyTimeout`). Default: 30 seconds.
   */
  readonly headersTimeout?: Duration.DurationInput | undefined
}

/**
 * A handler of Node's `request` event (`(req, res) => void`).
 *
 * @since 0.3.0
 * @category models
 */
export type NodeHandler = (request: http.IncomingMessage, response: http.ServerResponse) => void

/**
 * The server as a Streamable HTTP endpoint, mountable in an app's own node:http server (or
 * Express, Fastify's raw handler) at any path: `app.post("/mcp", handler)`, or called from
 * the app's own `request` listener. Sessions start at initialize (the answer carries
 * `Mcp-Session-Id`) and end with DELETE, when idle too long, or with the Scope. A POST
 * holding a tool call or a request with a progress token is answered with JSON when its
 * answer comes at once, else with an SSE stream (resumable with `Last-Event-ID`); GET opens
 * the session's stream of other notifications.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as http from "node:http"
 * import { McpServer } from "mcp-fleet"
 * import { NodeMcpServer } from "mcp-fleet/node"
 *
 * const program = Effect.gen(function*() {
 *   const server = yield* McpServer.fromItems({ serverInfo: { name: "app", version: "1.0.0" } })
 *   const mcp = yield* NodeMcpServer.toNodeHandler(server) // lives as long as the Scope
 *   http.createServer((req, res) => req.url?.startsWith("/mcp") ? mcp(req, res) : res.end()).listen(3000)
 * })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const toNodeHandler = (
  server: McpServer.McpServer,
  options: McpServer.HttpHandlerOptions = {}
): Effect.Effect<NodeHandler, never, Scope.Scope> => Node.endpoint(server, Http.resolve(options))

/**
 * Serves the server over Streamable HTTP on a listener of its own until the Scope closes,
 * and returns the endpoint's URL (`http://127.0.0.1:<port>/mcp`). Fails when it cannot
 * listen. See `toNodeHandler` for what the endpoint answers.
 *
 * @since 0.3.0
 * @category constructors
 */
export const serveHttp = (
  server: McpServer.McpServer,
  options: HttpOptions
): Effect.Effect<string, McpError.McpError, Scope.Scope> =>
  Node.serve(server, {
    ...Http.resolve(options),
    port: options.port,
    path: options.path ?? "/mcp",
    headersTimeout: options.headersTimeout ?? "30 seconds"
  })

/**
 * Serves one session on this process's stdin and stdout until the client hangs up (or the
 * Scope closes); returns why it ended.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serveStdio = (server: McpServer.McpServer): Effect.Effect<McpError.McpError, never, Scope.Scope> =>
  Effect.flatMap(
    Stdio.makeServer(process.stdin, process.stdout),
    (transport) => Effect.provideService(server.serve, Transport, transport)
  )
