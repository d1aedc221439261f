/**
 * The registry's servers kept equal to a desired set (internal to the registry): a new spec
 * gets an actor whose supervision fiber runs in the registry's Scope (a lazy one is a record
 * until its first use, Idle with its cached lists: `parked.ts`, so a hundred lazy servers
 * cost no actor or fiber at start), a removed server is
 * stopped (its lists cleared, so the catalog loses them), and a changed one is replaced —
 * its process ended before its successor starts, its lists carried over so only real
 * differences are published. One reconcile at a time.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import { identity } from "effect/Function"
import type * as Scope from "effect/Scope"
import type * as Catalog from "../../Catalog.js"
import type { ReconcileResult, Requirements } from "../../ServerRegistry.js"
import type * as ServerSpec from "../../ServerSpec.js"
import * as Parked from "./parked.js"
import { plan } from "./reconcilePlan.js"
import * as ServerActor from "./serverActor.js"

// How many lazy servers read their cached lists at once, and how many are restored into the
// first rebuild of the catalog; each later batch is twice the one before. Few rebuilds (a
// hundred servers take three, each costing as much as the catalog is big), yet a slow
// cache (a settle window passing) still lists the servers restored so far.
const RESTORES_AT_ONCE = 16
const FIRST_REBUILD = 32

// `items` in batches of FIRST_REBUILD, then twice as many each time.
const growingBatches = <A>(items: ReadonlyArray<A>): Array<ReadonlyArray<A>> => {
  const batches: Array<ReadonlyArray<A>> = []
  for (let at = 0, size = FIRST_REBUILD; at < items.length; at += size, size *= 2) {
    batches.push(items.slice(at, at + size))
  }
  return batches
}

/**
 * Makes the reconcile of a registry whose running actors are `actors` (kept current here);
 * each actor is made with `actorOptions`; `ended` ends what else runs of a server removed or
 * replaced (its per-principal instances); `together` runs the restores of a reconcile with
 * one catalog rebuild (`FleetCatalog.together`). Every server stops when the Scope closes.
 */
export const make = (
  actors: Map<string, ServerActor.ServerActor>,
  actorOptions: Omit<ServerActor.Options, "spec" | "initialLists">,
  ended: (server: string) => Effect.Effect<void>,
  together: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
): Effect.Effect<
  (desired: ReadonlyArray<ServerSpec.ServerSpec>) => Effect.Effect<ReconcileResult>,
  never,
  Scope.Scope | Requirements
> =>
  Effect.gen(function*() {
    const fibers = yield* FiberMap.make<string>()
    const scope = yield* Effect.scope
    const lock = yield* Effect.makeSemaphore(1)
    const context = yield* Effect.context<Requirements>()

    // Makes the actor of `spec` (`listed` in the map: itself, or the parked record it takes
    // over from) and returns how it starts (`ServerActor.park`): its loop is forked as
    // FiberMap.run would from here, now or at a parked one's first control, unless another
    // actor has taken its name by then.
    const makeActor = (
      options: Pick<ServerActor.Options, "spec" | "initialLists" | "parked">,
      listed?: ServerActor.ServerActor
    ) =>
      Effect.gen(function*() {
        const actor = yield* ServerActor.make({ ...actorOptions, ...options })
        const name = options.spec.name
        const self = listed ?? actor
        if (listed === undefined) actors.set(name, actor)
        const runFork = yield* FiberMap.runtime(fibers)<never>()
        const park = actor.park(Effect.sync(() => {
          if (actors.get(name) === self) runFork(name, Effect.provide(actor.run, context))
        }))
        return { actor, park }
      })

    // A lazy server is parked as a record (`parked.ts`) until its first use, which makes its
    // actor; any other gets its actor now.
    const start = (
      spec: ServerSpec.ServerSpec,
      initialLists?: Catalog.ServerLists
    ): Effect.Effect<Effect.Effect<Effect.Effect<void>>> =>
      Parked.parks(spec)
        ? Effect.map(
          Parked.make({ ...actorOptions, spec, initialLists }, (parked, record) =>
            Effect.flatMap(makeActor({ spec, parked }, record), ({ actor, park }) =>
              // Restored, the actor shows Idle at once; else it fills the cache.
              Effect.as(Effect.flatten(park), actor))),
          (parked) => {
            actors.set(spec.name, parked.actor)
            return parked.restore
          }
        )
        : Effect.map(makeActor({ spec, initialLists }), ({ park }) => park)

    const stop = (name: string) =>
      Effect.gen(function*() {
        const actor = actors.get(name)
        if (actor) yield* actor.stopParked
        yield* FiberMap.remove(fibers, name)
        yield* ended(name)
        actors.delete(name)
        if (actor) yield* actor.clear
      })

    const replace = (spec: ServerSpec.ServerSpec) =>
      Effect.gen(function*() {
        const actor = actors.get(spec.name)!
        yield* actor.stopParked
        yield* FiberMap.remove(fibers, spec.name)
        yield* ended(spec.name)
        return yield* start(spec, actor.lists())
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
        const [, replaced, fresh] = yield* Effect.all([
          Effect.forEach(removed, stop, { concurrency: "unbounded", discard: true }),
          Effect.forEach(changed, replace, { concurrency: "unbounded" }),
          Effect.forEach(added, (spec) => start(spec))
        ], { concurrency: "unbounded" })
        // The starts go on in the background; lazy servers restore their cached lists a few
        // files at a time, a batch into one catalog rebuild, and only then show Idle: a client
        // that waits for the fleet to settle finds them in the catalog.
        yield* Effect.forkIn(
          Effect.forEach(
            growingBatches([...replaced, ...fresh]),
            (batch) =>
              together(Effect.forEach(batch, identity, { concurrency: RESTORES_AT_ONCE })).pipe(
                Effect.flatMap((shows) => Effect.forEach(shows, identity, { discard: true }))
              ),
            { discard: true }
          ),
          scope
        )
        return {
          added: added.map((spec) => spec.name),
          removed,
          restarted: changed.map((spec) => spec.name),
          unchanged
        }
      }))
  })
