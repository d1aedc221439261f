/**
 * A raw server of revision 2026-07-28 over Memory: a Peer with the given handlers, which
 * answers `server/discover` (so the client connects statelessly: no initialize, `_meta` on
 * every request) and empty lists unless told otherwise, and notes every request it gets.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as JsonRpc from "../../src/JsonRpc.js"
import * as Memory from "../../src/Memory.js"
import * as Peer from "../../src/Peer.js"
import { Transport } from "../../src/Transport.js"

export interface ModernServer {
  /** The client's end. */
  readonly transport: Memory.MemoryTransport
  /** The server's session: notifications to the client go through it. */
  readonly peer: Peer.Peer
  /** Every request received, in order. */
  readonly requests: ReadonlyArray<JsonRpc.Request>
  readonly close: Effect.Effect<void>
}

const complete = (result: Record<string, unknown>): Peer.Handler => () =>
  Effect.succeed({ resultType: "complete", ...result })

export const modernServer = (
  name: string,
  capabilities: Record<string, unknown>,
  handlers: Readonly<Record<string, Peer.Handler>>
): Effect.Effect<ModernServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const [client, end] = yield* Memory.makePair({ server: name, client: "client" })
    const requests: Array<JsonRpc.Request> = []
    const table: Record<string, Peer.Handler> = {}
    const all: Record<string, Peer.Handler> = {
      "server/discover": complete({
        supportedVersions: ["2026-07-28"],
        capabilities,
        serverInfo: { name, version: "1" }
      }),
      "tools/list": complete({ tools: [] }),
      "prompts/list": complete({ prompts: [] }),
      "resources/list": complete({ resources: [] }),
      "resources/templates/list": complete({ resourceTemplates: [] }),
      ...handlers
    }
    for (const [method, handler] of Object.entries(all)) {
      table[method] = (request) => Effect.zipRight(Effect.sync(() => requests.push(request)), handler(request))
    }
    const peer = yield* Peer.make({ handlers: table }).pipe(Effect.provideService(Transport, end))
    return { transport: client, peer, requests, close: client.close }
  })
