/**
 * What a fleet runs on in tests that use real processes and sockets: NodeFleet.layer, Node's
 * file system and commands, mcp-fleet's HTTP client for remote servers and the launcher of
 * stdio and WebSocket servers.
 */
import * as NodeFleet from "../../src/NodeFleet.js"

export const Platform = NodeFleet.layer
