/**
 * Per-principal instances (`perPrincipal: true`): each principal (the OAuth subject a call
 * comes with) gets an instance of the server of its own — its own actor, process and
 * connection, with its own credentials (`Credentials`, keyed by server and principal) — made
 * on its first call. An instance stops its process after `idleTimeout` without calls (5 min
 * when the spec says none) and starts again on the next; it ends with its server (removed,
 * replaced) or the registry. The server's own actor (the template) lists the tools the
 * catalog shows; no call (nor read, prompt, completion or task followed: `routing.ts`) is
 * ever routed to it, and an instance is reached only through its
 * key, (server, principal), so no principal reaches another's. An instance's events and lists
 * stay its own (the catalog and the status are the template's), but for its resource updates,
 * published with its principal: those of a subscription the principal made at its instance.
 *
 * An instance's spec carries its `principal`; a cluster keys the entity by (name, principal).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as McpError from "../../McpError.js"
import { RegistryEvent } from "../../RegistryEvent.js"
import type { PrincipalCredentials, Requirements } from "../../ServerRegistry.js"
import type * as ServerSpec from "../../ServerSpec.js"
import * as ServerActor from "./serverActor.js"

/** An instance's idle timeout when its spec sets none. */
const DEFAULT_IDLE = "5 minutes"

/**
 * The instances of a registry's per-principal servers.
 */
export interface Principals {
  /** The instance of `template`'s server for `principal`, made (and started) on first use. */
  readonly instanceOf: (
    template: ServerActor.ServerActor,
    principal: string | undefined
  ) => Effect.Effect<ServerActor.ServerActor, McpError.McpError>
  /** Ends every instance of `server` (removed or replaced). */
  readonly end: (server: string) => Effect.Effect<void>
}

const keyOf = (server: string, principal: string) => `${server}\u0000${principal}`

/**
 * The template's spec as `principal`'s: its credentials added to the env of a stdio server
 * or the headers of a remote one, as secrets (a cluster's instances too).
 */
export const specFor = (
  spec: ServerSpec.ServerSpec,
  principal: string,
  credentials: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
): ServerSpec.ServerSpec => {
  const secrets = credentials === undefined ? undefined : Object.fromEntries(
    Object.entries(credentials).map(([key, value]) => [key, Redacted.isRedacted(value) ? value : Redacted.make(value)])
  )
  const transport = secrets === undefined || spec.transport.type === "custom"
    ? spec.transport
    : spec.transport.type === "stdio"
    ? { ...spec.transport, env: { ...spec.transport.env, ...secrets } }
    : { ...spec.transport, headers: { ...spec.transport.headers, ...secrets } }
  return { ...spec, transport, principal, required: false, idleTimeout: spec.idleTimeout ?? DEFAULT_IDLE }
}

/**
 * Makes the instances, each actor made with `actorOptions`; every instance ends with the Scope.
 * `publish` is told the instances' resource updates.
 */
export const make = (
  actorOptions: Omit<ServerActor.Options, "spec" | "initialLists" | "publish" | "listsChanged">,
  credentials: PrincipalCredentials | undefined,
  publish: ServerActor.Options["publish"]
): Effect.Effect<Principals, never, Scope.Scope | Requirements> =>
  Effect.gen(function*() {
    const fibers = yield* FiberMap.make<string>()
    const context = yield* Effect.context<Requirements>()
    const instances = new Map<string, ServerActor.ServerActor>()
    // One start at a time, so two first calls of a principal make one instance.
    const lock = yield* Effect.makeSemaphore(1)

    const start = (template: ServerActor.ServerActor, principal: string) =>
      Effect.gen(function*() {
        const own = credentials === undefined ? undefined : yield* credentials(template.name, principal)
        if (credentials !== undefined && own === undefined) {
          return yield* Effect.fail(McpError.unavailable(template.name, {
            state: "NeedsAuth",
            message: "has no credentials for this principal in the token store"
          }))
        }
        const actor = yield* ServerActor.make({
          ...actorOptions,
          spec: specFor(template.spec, principal, own),
          initialLists: template.lists(),
          publish: (event) =>
            event._tag === "ResourceUpdated"
              ? publish(RegistryEvent.ResourceUpdated({ ...event, principal }))
              : Effect.void,
          listsChanged: () => Effect.void
        })
        instances.set(keyOf(template.name, principal), actor)
        yield* FiberMap.run(fibers, keyOf(template.name, principal), Effect.provide(actor.run, context))
        return actor
      })

    return {
      instanceOf: (template, principal) => {
        if (principal === undefined) {
          return Effect.fail(McpError.unavailable(template.name, {
            state: template.status().state._tag,
            message: "runs one instance per principal: a call needs an authenticated caller (an OAuth subject)"
          }))
        }
        const found = () => instances.get(keyOf(template.name, principal))
        return Effect.suspend(() => {
          const running = found()
          return running !== undefined ? Effect.succeed(running) : lock.withPermits(1)(Effect.suspend(() => {
            const started = found()
            return started !== undefined ? Effect.succeed(started) : start(template, principal)
          }))
        })
      },
      end: (server) =>
        Effect.forEach(
          [...instances.keys()].filter((key) => key.startsWith(`${server}\u0000`)),
          (key) => Effect.zipRight(FiberMap.remove(fibers, key), Effect.sync(() => instances.delete(key))),
          { discard: true }
        )
    }
  })
