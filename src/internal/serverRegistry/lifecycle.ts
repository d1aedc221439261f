/**
 * The registry's servers kept equal to a desired set (internal to the registry): a new spec
 * gets an actor whose supervision fiber runs in the registry's Scope, a removed server is
 * stopped (its lists cleared, so the catalog loses them), and a changed one is replaced —
 * its process ended before its successor starts, its lists carried over so only real
 * differences are published. One reconcile at a time.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import type * as Scope from "effect/Scope"
import type * as Catalog from "../../Catalog.js"
import type { ReconcileResult, Requirements } from "../../ServerRegistry.js"
import type * as ServerSpec from "../../ServerSpec.js"
import { plan } from "./reconcilePlan.js"
import * as ServerActor from "./serverActor.js"

/**
 * Makes the reconcile of a registry whose running actors are `actors` (kept current here);
 * each actor is made with `actorOptions`; `ended` ends what else runs of a server removed or
 * replaced (its per-principal instances). Every server stops when the Scope closes.
 */
export const make = (
  actors: Map<string, ServerActor.ServerActor>,
  actorOptions: Omit<ServerActor.Options, "spec" | "initialLists">,
  ended: (server: string) => Effect.Effect<void>
): Effect.Effect<
  (desired: ReadonlyArray<ServerSpec.ServerSpec>) => Effect.Effect<ReconcileResult>,
  never,
  Scope.Scope | Requirements
> =>
  Effect.gen(function*() {
    const fibers = yield* FiberMap.make<string>()
    const lock = yield* Effect.makeSemaphore(1)
    const context = yield* Effect.context<Requirements>()

    const start = (spec: ServerSpec.ServerSpec, initialLists?: Catalog.ServerLists) =>
      Effect.gen(function*() {
        const actor = yield* ServerActor.make({ ...actorOptions, spec, initialLists })
        actors.set(spec.name, actor)
        yield* FiberMap.run(fibers, spec.name, Effect.provide(actor.run, context))
      })

    const stop = (name: string) =>
      Effect.gen(function*() {
        const actor = actors.get(name)
        yield* FiberMap.remove(fibers, name)
        yield* ended(name)
        actors.delete(name)
        if (actor) yield* actor.clear
      })

    const replace = (spec: ServerSpec.ServerSpec) =>
      Effect.gen(function*() {
        const previous = actors.get(spec.name)!.lists()
        yield* FiberMap.remove(fibers, spec.name)
        yield* ended(spec.name)
        yield* start(spec, previous)
      })

    return (desired: ReadonlyArray<ServerSpec.ServerSpec>) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const { added, changed, duplicates, removed, unchanged } = plan(
          new Map([...actors].map(([name, actor]) => [name, actor.hash])),
          desired
        )
        for (const name of duplicates) {
          yield* Effect.logWarning(`server '${name}' is configured twice; the last one is used`)
        }
        yield* Effect.all([
          Effect.forEach(removed, stop, { concurrency: "unbounded", discard: true }),
          Effect.forEach(changed, replace, { concurrency: "unbounded", discard: true }),
          Effect.forEach(added, (spec) => start(spec), { discard: true })
        ], { concurrency: "unbounded", discard: true })
        return {
          added: added.map((spec) => spec.name),
          removed,
          restarted: changed.map((spec) => spec.name),
          unchanged
        }
      }))
  })
