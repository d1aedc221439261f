/**
 * A Peer on one end of a memory pair, the test playing the server on the other end by hand:
 * what the server received (`next`, `nextRequest`) and its answers (`reply`). `transport`
 * may change the client end the Peer is given (a `sendNow`, say).
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as JsonRpc from "../../src/JsonRpc.js"
import * as Memory from "../../src/Memory.js"
import * as Peer from "../../src/Peer.js"
import { Transport } from "../../src/Transport.js"

export const peerPair = (options?: Peer.Options, transport: (client: Transport) => Transport = (client) => client) =>
  Effect.gen(function*() {
    const [client, server] = yield* Memory.makePair({ server: "srv" })
    const peer = yield* Peer.make(options).pipe(Effect.provideService(Transport, transport(client)))
    const inbox = yield* Queue.unbounded<JsonRpc.Message>()
    server.listen({ message: (message) => void inbox.unsafeOffer(message as JsonRpc.Message), closed: () => {} })
    const next = Queue.take(inbox)
    const nextRequest = Effect.map(next, (message) => message as JsonRpc.Request)
    const reply = (id: JsonRpc.RequestId, result: Record<string, unknown>) =>
      server.send({ jsonrpc: "2.0", id, result })
    return { peer, server, client, next, nextRequest, reply, inbox }
  })
