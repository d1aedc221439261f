/**
 * The Node side of the fleet: the Launcher that starts stdio servers (`Stdio`, on
 * `node:child_process`, with its process-tree guardian) and opens WebSockets (`WebSocket`, on
 * `ws`), and `layer`, everything a Node program's fleet runs on in one Layer: Node's file
 * system, path and command services (`NodeContext`, for config files, their watching and the
 * stores), mcp-fleet's undici HTTP client and its fast wire (`HttpClientUndici`), and the
 * launcher.
 *
 * @since 0.4.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Layer from "effect/Layer"
import * as HttpClientUndici from "./HttpClientUndici.js"
import type * as HttpWire from "./HttpWire.js"
import * as Launcher from "./Launcher.js"
import * as Stdio from "./Stdio.js"
import * as WebSocket from "./WebSocket.js"

/**
 * The Node launcher: stdio servers as child processes (`Stdio.make`), WebSockets on `ws`
 * (`WebSocket.make`).
 *
 * @since 0.4.0
 * @category constructors
 */
export const launcher: Launcher.Launcher = { stdio: Stdio.make, webSocket: WebSocket.make }

/**
 * The Node launcher as a Layer.
 *
 * @since 0.4.0
 * @category layers
 */
export const layerLauncher: Layer.Layer<Launcher.Launcher> = Layer.succeed(Launcher.Launcher, launcher)

/**
 * What a fleet needs on Node, in one Layer: `NodeContext` (file system, path, commands,
 * terminal), the undici `HttpClient` with its wire, and the launcher.
 *
 * @since 0.4.0
 * @category layers
 * @example
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { FleetConfig, ServerRegistry } from "mcp-fleet"
 * import { NodeFleet } from "mcp-fleet/node"
 *
 * const Fleet = FleetConfig.layer({ paths: [".mcp.json"] }).pipe(
 *   Layer.provideMerge(ServerRegistry.layer()),
 *   Layer.provide(NodeFleet.layer)
 * )
 */
export const layer: Layer.Layer<
  NodeContext.NodeContext | HttpClient.HttpClient | HttpWire.HttpWire | Launcher.Launcher
> = Layer.mergeAll(NodeContext.layer, HttpClientUndici.layer, layerLauncher)
