/**
 * The gateway's Streamable HTTP on node:http (part of `mcp-fleet/node`): the fleet served on
 * a listener of its own (`serveHttp`, `layerHttp`) or mounted in the app's own node:http
 * server (`toNodeHandler`). The endpoint is `Gateway.toWebHandler`'s, served by
 * `NodeMcpServer` without fetch's objects. And stdio, for hosts that spawn the gateway:
 * `serveStdio` and `layerStdio` serve it on the process's stdin and stdout.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Readable, Writable } from "node:stream"
import * as Gateway from "./Gateway.js"
import { traced } from "./internal/traced.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as McpError from "./McpError.js"
import * as NodeMcpServer from "./NodeMcpServer.js"
import * as Stdio from "./Stdio.js"
import { Transport } from "./Transport.js"

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

/**
 * Options of the stdio mode.
 *
 * @since 0.3.0
 */
export interface StdioOptions extends Gateway.Options {
  /** Where messages come from. Default: `process.stdin`. */
  readonly input?: Readable | undefined
  /** Where messages go; nothing else is ever written to it. Default: `process.stdout`. */
  readonly output?: Writable | undefined
  /** The largest message accepted. Default: 16 MiB. */
  readonly maxMessageBytes?: number | undefined
}

/**
 * Serves the fleet on this process's stdin and stdout (newline-delimited JSON-RPC), for a
 * host that spawns the gateway. Returns when stdin ends. Its own logs go to stderr; provide
 * `Gateway.stdioLogger` around the whole program so the fleet's logs do as well.
 *
 * @since 0.3.0
 */
export const serveStdio: (options?: StdioOptions) => Effect.Effect<void, never, Gateway.Requirements> = traced(
  "NodeGateway.serveStdio"
)((options: StdioOptions = {}) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* Gateway.make(options)
    const transport = yield* Stdio.makeServer(
      options.input ?? process.stdin,
      options.output ?? process.stdout,
      options.maxMessageBytes ?? JsonRpc.DEFAULT_MAX_MESSAGE_BYTES
    )
    yield* server.serve.pipe(Effect.provideService(Transport, transport))
  })).pipe(Effect.provide(Gateway.stdioLogger))
)

/**
 * A layer that serves the fleet on stdio in the background for as long as it lives (or
 * until stdin ends). To run until stdin ends, use `serveStdio` instead.
 *
 * @since 0.3.0
 */
export const layerStdio = (options: StdioOptions = {}): Layer.Layer<never, never, Gateway.Requirements> =>
  Layer.scopedDiscard(Effect.forkScoped(serveStdio(options)))
