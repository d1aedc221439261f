/**
 * In-memory transports: two linked ends, for tests and for servers that run in-process.
 * Messages are copied through JSON on the way, as on a real wire, so neither end can see
 * the other's objects.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "./JsonRpc.js"
import * as McpError from "./McpError.js"
import { deliverStream, Inbox, type Transport } from "./Transport.js"

/**
 * One end of a linked pair.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryTransport extends Transport {
  /** Hangs up: the other end's receiver is closed with a Closed error, and sends fail. */
  readonly close: Effect.Effect<void>
}

const End = Symbol.for("mcp-fleet/Memory/End")
type Item = JsonRpc.Message | typeof End

/**
 * Makes two linked transports: what one sends, the other receives. Both close with the
 * Scope. `names` are the server names each end reports in its errors. Delivery goes
 * through a queue and a fiber, so that, as on a real wire, a message arrives after its
 * send returns.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makePair = (names?: {
  readonly client?: string | undefined
  readonly server?: string | undefined
}): Effect.Effect<readonly [client: MemoryTransport, server: MemoryTransport], never, Scope.Scope> =>
  Effect.gen(function*() {
    const toServer = yield* Queue.unbounded<Item>()
    const toClient = yield* Queue.unbounded<Item>()
    let open = true
    const close = Effect.sync(() => {
      if (!open) return
      open = false
      toServer.unsafeOffer(End)
      toClient.unsafeOffer(End)
    })
    const end = (name: string, queue: Queue.Queue<Item>, outbox: Queue.Queue<Item>) =>
      Effect.gen(function*() {
        const closed = McpError.closed(name, { message: "the peer closed the connection" })
        const inbox = new Inbox(name)
        yield* deliverStream(
          inbox,
          Stream.takeWhile(Stream.fromQueue(queue), (item): item is JsonRpc.Message => item !== End),
          () => closed
        )
        return {
          server: name,
          kind: "memory",
          send: (message) =>
            Effect.suspend(() => {
              if (!open) return Effect.fail(closed)
              outbox.unsafeOffer(JSON.parse(JSON.stringify(message)))
              return Effect.void
            }),
          listen: inbox.listen,
          info: () => ({}),
          close
        } satisfies MemoryTransport
      })
    yield* Effect.addFinalizer(() => close)
    const server = names?.server ?? "memory"
    return [yield* end(server, toClient, toServer), yield* end(names?.client ?? "client", toServer, toClient)] as const
  })
