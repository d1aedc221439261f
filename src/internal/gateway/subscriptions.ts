/**
 * Resource subscriptions of one session, counted across the sessions of a gateway: a
 * server is asked once per URI, and told to stop when the last session lets go (by
 * unsubscribing, or by ending). A `perPrincipal` server's are each principal's own: made at
 * its instance, counted per principal, and only its instance's updates are the session's.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Catalog from "../../Catalog.js"
import type * as McpError from "../../McpError.js"
import { resourceNotFound } from "../../McpServer.js"
import type * as Peer from "../../Peer.js"
import { handlerError } from "./errors.js"
import type { FleetHub } from "./fleetHub.js"
import { ownerOf } from "./resources.js"

/** The subscriptions of one session. */
export interface Subscriptions {
  /** Whether this session subscribes to `uri` at `server` (at `principal`'s instance, if told by one). */
  readonly has: (server: string, uri: string, principal?: string | undefined) => boolean
  /** The handler of resources/subscribe. */
  readonly subscribe: (uri: string) => Effect.Effect<void, Peer.HandlerError>
  /** The handler of resources/unsubscribe. */
  readonly unsubscribe: (uri: string) => Effect.Effect<void, Peer.HandlerError>
  /** Subscribes this session to `uri` at `server` (the management tools' way in). */
  readonly acquire: (server: string, uri: string) => Effect.Effect<void, McpError.McpError>
  /** Lets go of this session's subscription to `uri` at `server`. */
  readonly release: (server: string, uri: string) => Effect.Effect<void, McpError.McpError>
}

const pairOf = (server: string, uri: string) => JSON.stringify([server, uri])

// The key a subscription is counted by: a per-principal server's names the principal.
const keyOf = (server: string, uri: string, principal: string | undefined) =>
  JSON.stringify(principal === undefined ? [server, uri] : [server, uri, principal])

/**
 * The subscriptions of a new session of `principal` (its caller's subject, if any); those it
 * still holds are released when the Scope closes.
 */
export const make = (
  hub: FleetHub,
  catalog: Effect.Effect<Catalog.Catalog>,
  principal?: string | undefined
): Effect.Effect<Subscriptions, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { registry, subscribers } = hub
    // The key of each (server, URI) pair this session holds.
    const held = new Map<string, string>()
    const asked = { principal }

    // Whose subscription it is at `server`: the session's principal's at a per-principal server.
    const ownerAt = (server: string) =>
      Effect.map(
        registry.status,
        (statuses) => statuses.find((status) => status.name === server)?.perPrincipal === true ? principal : undefined
      )

    const acquire = (server: string, uri: string): Effect.Effect<void, McpError.McpError> =>
      Effect.suspend(() =>
        held.has(pairOf(server, uri)) ? Effect.void : Effect.flatMap(ownerAt(server), (owner) => {
          const key = keyOf(server, uri, owner)
          const first = (subscribers.get(key) ?? 0) === 0
            ? registry.withClient(server, (client) => client.subscribeResource(uri), asked)
            : Effect.void
          return Effect.tap(first, () => {
            held.set(pairOf(server, uri), key)
            subscribers.set(key, (subscribers.get(key) ?? 0) + 1)
          })
        })
      )

    const release = (server: string, uri: string): Effect.Effect<void, McpError.McpError> =>
      Effect.suspend(() => {
        const key = held.get(pairOf(server, uri))
        if (key === undefined) return Effect.void
        held.delete(pairOf(server, uri))
        const count = (subscribers.get(key) ?? 1) - 1
        if (count > 0) {
          subscribers.set(key, count)
          return Effect.void
        }
        subscribers.delete(key)
        return registry.withClient(server, (client) => client.unsubscribeResource(uri), asked)
      })

    yield* Effect.addFinalizer(() =>
      Effect.forEach([...held.keys()], (pair) => {
        const [server, uri] = JSON.parse(pair) as [string, string]
        return Effect.ignore(release(server, uri))
      }, { discard: true })
    )

    const handler = (change: typeof acquire) => (uri: string): Effect.Effect<void, Peer.HandlerError> =>
      Effect.flatMap(catalog, (current) => {
        const server = ownerOf(current, uri)
        if (server === undefined) return Effect.fail(resourceNotFound(uri))
        return Effect.mapError(change(server, uri), handlerError)
      })

    // A server that cannot subscribe (no `resources.subscribe`, as a 2026-07-28 server that
    // serves resources but tells no updates): the gateway declares subscriptions for the whole
    // fleet, so the client's subscription is accepted and stays quiet, as such a server's own
    // would, rather than failing a request the client was told it may send.
    const quietly = (server: string, uri: string): Effect.Effect<void, McpError.McpError> =>
      Effect.catchIf(
        acquire(server, uri),
        (error) => error.reason._tag === "Unsupported",
        (error) =>
          Effect.logInfo(`${error.message}; the subscription to ${uri} is accepted and tells nothing`).pipe(
            Effect.annotateLogs({ server })
          )
      )

    return {
      has: (server, uri, principal) => held.get(pairOf(server, uri)) === keyOf(server, uri, principal),
      subscribe: handler(quietly),
      unsubscribe: handler(release),
      acquire,
      release
    }
  })
