/**
 * `mcp-fleet/node`: what needs Node, beside the neutral main entry (as `@effect/platform-node`
 * sits beside `@effect/platform`): stdio servers as child processes and their process-tree
 * guardian, WebSocket on `ws`, the undici HTTP client, serving MCP on `node:http`
 * (NodeMcpServer, NodeGateway, and stdio: `serveStdio`), OAuth's file token store and loopback
 * authorizer (NodeOAuth), and `NodeFleet.layer`, which gives a Node program's fleet all
 * of them at once.
 *
 * @since 0.4.0
 */

/** Everything a fleet runs on in Node, in one Layer; the launcher of stdio and WebSocket servers. */
export * as NodeFleet from "../NodeFleet.js"

/** McpServer served on node:http and stdio: toNodeHandler, serveHttp, serveStdio. */
export * as NodeMcpServer from "../NodeMcpServer.js"

/** The gateway served on node:http and stdio: serveHttp, toNodeHandler, layerHttp, serveStdio, layerStdio. */
export * as NodeGateway from "../NodeGateway.js"

/** OAuth on Node: the token store in files, the loopback authorizer. */
export * as NodeOAuth from "../NodeOAuth.js"

/** Roots for the Host made from local paths. */
export * as NodeHost from "../NodeHost.js"

/** The stdio transport: a server as a child process, its process tree ended with the Scope. */
export * as Stdio from "../Stdio.js"

/** The WebSocket transport, on `ws` (custom headers on the upgrade request). */
export * as WebSocket from "../WebSocket.js"

/** A lean HttpClient on undici, with the fast wire the HTTP transports use. */
export * as HttpClientUndici from "../HttpClientUndici.js"

/** The default Embedder for tool search (a model shipped in npm packages, optional) and a file cache. */
export * as NodeEmbedder from "../NodeEmbedder.js"
