/**
 * mcp-fleet: an Effect-native runtime for MCP servers. This entry is neutral: it runs on any
 * Web-standard runtime (Node, Deno, Bun, Workers, the browser; `npm run check:neutral` holds it
 * to that). What needs Node (stdio servers, WebSocket on ws, the undici client) is in
 * `mcp-fleet/node`.
 *
 * @since 0.1.0
 */

/** JSON-RPC 2.0 messages, error codes and NDJSON framing. */
export * as JsonRpc from "./JsonRpc.js"

/** MCP message schemas for every stateful revision mcp-fleet speaks. */
export * as McpSchema from "./McpSchema.js"

/** The one error type, with a `reason` and the server's name. */
export * as McpError from "./McpError.js"

/** The Schemas of McpError and its reasons, to send an error over a wire and read it back. */
export * as McpErrorSchema from "./McpErrorSchema.js"

/** OpenTelemetry MCP conventions: attribute keys, metrics, `_meta` trace context. */
export * as Telemetry from "./Telemetry.js"

/** The Transport service: a scoped duplex of JSON-RPC messages. */
export * as Transport from "./Transport.js"

/** How the fleet starts stdio servers and opens WebSockets: the platform provides it (mcp-fleet/node on Node). */
export * as Launcher from "./Launcher.js"

/** Linked in-memory transports. */
export * as Memory from "./Memory.js"

/** The Streamable HTTP transport, falling back to HTTP+SSE for servers that predate it. */
export * as StreamableHttp from "./StreamableHttp.js"

/** The optional fast HTTP exchange the HTTP transports use instead of the HttpClient (HttpClientUndici provides one). */
export * as HttpWire from "./HttpWire.js"

/** The 2024-11-05 HTTP+SSE transport. */
export * as LegacySse from "./LegacySse.js"

/** One JSON-RPC session: requests, notifications, timeouts, cancellation. */
export * as Peer from "./Peer.js"

/** One initialized connection to one MCP server. */
export * as McpClient from "./McpClient.js"

/** The server side: tools, resources, prompts, completion and logging served from Effect handlers. */
export * as McpServer from "./McpServer.js"

/** The host's side: sampling, elicitation and roots services that answer servers. */
export * as Host from "./Host.js"

/** What one server of the fleet should be: transport, supervision, timeouts. */
export * as ServerSpec from "./ServerSpec.js"

/** The lifecycle states of a server of the fleet. */
export * as ServerState from "./ServerState.js"

/** The events the fleet publishes as it changes. */
export * as RegistryEvent from "./RegistryEvent.js"

/** Qualified names and the fleet's catalog of tools, resources and prompts. */
export * as Catalog from "./Catalog.js"

/** Tool pinning: a digest of each tool's definition, drift reports and quarantine, pin stores. */
export * as ToolPins from "./ToolPins.js"

/** Each server's lists of the last time it ran, which lazy servers are listed from. */
export * as CatalogCache from "./CatalogCache.js"

/** The fleet: reconcile, status, events, the live catalog and routed calls. */
export * as ServerRegistry from "./ServerRegistry.js"

/** Config files (mcpServers / servers formats), variables, merging and watching. */
export * as FleetConfig from "./FleetConfig.js"

/** Trust in config files by path and content, for project configs that came with a repository. */
export * as ConfigTrust from "./ConfigTrust.js"

/** Tool policy: allow/deny/ask rules, approval, argument validation, limits and the audit log. */
export * as Policy from "./Policy.js"

/** OAuth for an endpoint of ours: Protected Resource Metadata, bearer challenges, token validation. */
export * as ResourceServer from "./ResourceServer.js"

/** The fleet served as one MCP server, over stdio or Streamable HTTP. */
export * as Gateway from "./Gateway.js"

/** The fleet live on a page: a Web handler with its SSE stream, token guard and API. */
export * as Dashboard from "./Dashboard.js"

/** The fleet's tools for models: policy-filtered, narrowed by a filter, called through the Policy. */
export * as FleetTools from "./FleetTools.js"

/** Search over the fleet's tools: lexical (BM25+), hybrid with an Embedder in context. */
export * as ToolSearch from "./ToolSearch.js"

/** Text embeddings for tool search: the Embedder service and its cache. */
export * as Embedder from "./Embedder.js"

/** Tools an agent host gives its model to list, read, subscribe to and poll the fleet's resources and tools. */
export * as McpManagementTools from "./McpManagementTools.js"
