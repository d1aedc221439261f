/**
 * A stateful session beside a server's 2026-07-28 HTTP connection, for the calls of stateful
 * callers (the gateway's clients that keep a session and answer sampling or elicitation). A
 * server may speak 2026-07-28 yet be unable to ask anything on that path (the conformance
 * suite's reference server answers "sampling not supported" there); the gateway in front of
 * it must pass what it passes alone, so such a caller's calls go where that server would have
 * taken them: a session of the newest stateful revision.
 *
 * The twin opens at its first call (a server that is never called so pays nothing) and again
 * after it closes; it lists nothing (the connection owns the lists) but reports its log
 * messages and resource updates as the connection's are. When it cannot open (a server that
 * speaks 2026-07-28 only), its connection serves those calls, and no twin is tried again for
 * that connection. Only HTTP servers get one: a second session there is a header, where a
 * stdio server's would be a second process.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Scope from "effect/Scope"
import * as McpClient from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type { Requirements } from "../../ServerRegistry.js"
import type * as ServerSpec from "../../ServerSpec.js"
import { Transport } from "../../Transport.js"
import { watch, type Watcher } from "./listing.js"
import type { Core } from "./session.js"

/**
 * A connection's stateful twin.
 */
export interface StatefulTwin {
  /** The twin, opened if it is not; undefined when it cannot be. */
  readonly client: Effect.Effect<McpClient.McpClient | undefined>
}

/**
 * Whether a ready connection of `spec` speaking `version` gets a twin.
 */
export const wanted = (spec: ServerSpec.ServerSpec, version: string): boolean =>
  spec.transport.type === "http" && McpSchema.isModernVersion(version)

/**
 * The twin of one connection, opened in `scope` (the connection's) when first asked for, on a
 * transport from `connect`.
 */
export const make = (
  core: Core,
  watcher: Watcher,
  scope: Scope.Scope,
  connect: Effect.Effect<Transport, McpError.McpError, Scope.Scope | Requirements>
): Effect.Effect<StatefulTwin, never, Requirements> =>
  Effect.map(Effect.context<Requirements>(), (context) => {
    let current: Deferred.Deferred<McpClient.McpClient | undefined> | undefined
    let unable = false

    const open = Effect.gen(function*() {
      const own = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      const c = yield* Scope.extend(
        Effect.gen(function*() {
          const transport = yield* connect
          const twin = yield* McpClient.make({
            ...core.client,
            protocolVersion: McpSchema.LATEST_PROTOCOL_VERSION,
            host: core.spec.host,
            initializeTimeout: core.spec.initializeTimeout,
            requestTimeout: core.spec.requestTimeout
          }).pipe(Effect.provideService(Transport, transport))
          yield* watch(watcher, twin, false)
          return twin
        }),
        own
      ).pipe(Effect.tapErrorCause(() => Scope.close(own, Exit.void)))
      // A closed twin is forgotten: the next stateful call opens another.
      yield* c.closed.pipe(
        Effect.zipRight(Effect.sync(() => current = undefined)),
        Effect.zipRight(Scope.close(own, Exit.void)),
        Effect.forkIn(scope)
      )
      return c
    }).pipe(
      Effect.catchAll((error) =>
        Effect.logWarning(
          `server '${core.spec.name}': no stateful session beside its 2026-07-28 connection ` +
            `(${error.message}); stateful callers use that connection`
        ).pipe(
          Effect.annotateLogs({ server: core.spec.name }),
          Effect.as(undefined),
          Effect.zipLeft(Effect.sync(() => unable = true))
        )
      ),
      Effect.provide(context)
    )

    return {
      // Made and set at once, so concurrent first calls share one opening; the opening runs
      // in the connection's scope, so a caller interrupted meanwhile leaves no one waiting.
      client: Effect.suspend(() => {
        if (unable) return Effect.succeed(undefined)
        if (current !== undefined) return Deferred.await(current)
        const opening = Deferred.unsafeMake<McpClient.McpClient | undefined>(FiberId.none)
        current = opening
        return Effect.zipRight(
          Effect.forkIn(Effect.flatMap(open, (c) => Deferred.succeed(opening, c)), scope),
          Deferred.await(opening)
        )
      })
    }
  })
