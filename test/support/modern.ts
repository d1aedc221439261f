/**
 * A raw `server/discover` handler for a FakeServer, so that the client connects to it in
 * revision 2026-07-28 (no initialize, `_meta` on every request).
 */
import * as Effect from "effect/Effect"
import type * as Peer from "../../src/Peer.js"

export const discover = (name: string, capabilities: Record<string, unknown>): Peer.Handler => () =>
  Effect.succeed({
    resultType: "complete",
    supportedVersions: ["2026-07-28"],
    capabilities,
    serverInfo: { name, version: "1" }
  })
