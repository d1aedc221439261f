/**
 * What a fleet runs on in tests that use real processes and sockets: Node's process
 * executor and file system, and an HTTP client for remote servers.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Layer from "effect/Layer"

export const Platform = Layer.merge(NodeContext.layer, NodeHttpClient.layerUndici)
