/**
 * What a fleet runs on in tests that use real processes and sockets: Node's process
 * executor and file system, and mcp-fleet's HTTP client for remote servers.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Layer from "effect/Layer"
import * as HttpClientUndici from "../../src/HttpClientUndici.js"

export const Platform = Layer.merge(NodeContext.layer, HttpClientUndici.layer)
