/**
 * The gateway's Streamable HTTP on node:http (part of `mcp-fleet/node`): the fleet served on
 * a listener of its own (`serveHttp`, `layerHttp`) or mounted in the app's own node:http
 * server (`toNodeHandler`). The endpoint is `Gateway.toWebHandler`'s, served by
 * `NodeMcpServer` without fetch's objects.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Gateway from "./Gateway.js"
import { traced } from "./internal/traced.js"
import type * as McpError from "./McpError.js"
import * as NodeMcpServer from "./NodeMcpServer.js"

/**
 * Options of the gateway on a listener of its own: the gateway's, and the endpoint's
 * (`NodeMcpServer.HttpOptions`: port, host, path, token, allowed origins, limits).
 *
 * @since 0.3.0
 * @category models
 */
export interface HttpOptions extends Gateway.Options, NodeMcpServer.HttpOptions {}

/**
 * Serves the fleet as a Streamable HTTP MCP server until the Scope closes, and returns the
 * endpoint's URL (`http://127.0.0.1:<port>/mcp`). Fails when it cannot listen. What the
 * endpoint answers: see `Gateway.toWebHandler`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const serveHttp: (
  options: HttpOptions
) => Effect.Effect<string, McpError.McpError, Gateway.Requirements | Scope.Scope> = traced("NodeGateway.serveHttp")(
  (options: HttpOptions) => Effect.flatMap(Gateway.make(options), (server) => NodeMcpServer.serveHttp(server, options))
)

/**
 * The fleet as a Streamable HTTP endpoint mounted in an app's own HTTP server (node:http,
 * Express, ...), at whatever path the app routes to it, until the Scope closes: the
 * handler `serveHttp` listens with. See `NodeMcpServer.toNodeHandler`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const toNodeHandler = (
  options: Gateway.HttpHandlerOptions = {}
): Effect.Effect<NodeMcpServer.NodeHandler, never, Gateway.Requirements | Scope.Scope> =>
  Effect.flatMap(Gateway.make(options), (server) => NodeMcpServer.toNodeHandler(server, options))

/**
 * A layer that serves the fleet over HTTP for as long as it lives.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerHttp = (options: HttpOptions): Layer.Layer<never, McpError.McpError, Gateway.Requirements> =>
  Layer.scopedDiscard(Effect.tap(serveHttp(options), (url) => Effect.logInfo(`gateway listening on ${url}`)))
