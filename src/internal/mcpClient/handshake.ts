/**
 * The initialize handshake: ask for a revision, check the one the server chose, then send
 * notifications/initialized.
 *
 * @internal
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import { decode } from "./decode.js"

/**
 * What we say about ourselves in initialize.
 */
export interface Hello {
  readonly clientInfo?: McpSchema.Implementation | undefined
  readonly protocolVersion?: McpSchema.ProtocolVersion | undefined
  readonly capabilities?: McpSchema.ClientCapabilities | undefined
  readonly initializeTimeout?: Duration.DurationInput | undefined
}

/**
 * The server's answer, with a revision mcp-fleet speaks.
 */
export interface Initialized extends McpSchema.InitializeResult {
  readonly protocolVersion: McpSchema.ProtocolVersion
}

const defaultClientInfo: McpSchema.Implementation = { name: "mcp-fleet", version: "0.1.0" }

const isSupported = (version: string): version is McpSchema.ProtocolVersion =>
  (McpSchema.SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(version)

/**
 * Initializes the session; fails with Unsupported when the server chose a revision
 * mcp-fleet does not speak (and then sends nothing more).
 */
export const initialize = (peer: Peer.Peer, hello: Hello): Effect.Effect<Initialized, McpError.McpError> =>
  Effect.gen(function*() {
    const answer = yield* peer.request(
      McpSchema.Method.Initialize,
      {
        protocolVersion: hello.protocolVersion ?? McpSchema.LATEST_PROTOCOL_VERSION,
        capabilities: hello.capabilities ?? {},
        clientInfo: hello.clientInfo ?? defaultClientInfo
      },
      { timeout: hello.initializeTimeout ?? "30 seconds" }
    )
    const initialized = yield* decode(peer.server, McpSchema.Method.Initialize, McpSchema.InitializeResult, answer)
    const protocolVersion = initialized.protocolVersion
    if (!isSupported(protocolVersion)) {
      return yield* Effect.fail(McpError.make(
        peer.server,
        new McpError.UnsupportedReason({
          message: `the server chose protocol revision ${protocolVersion}; mcp-fleet speaks ${
            McpSchema.SUPPORTED_PROTOCOL_VERSIONS.join(", ")
          }`
        })
      ))
    }
    yield* peer.notify(McpSchema.Method.Initialized)
    return { ...initialized, protocolVersion }
  })
