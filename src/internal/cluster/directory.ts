/**
 * What every replica knows of the whole fleet: each server's runner, status and lists, read
 * from `mcp_fleet_servers`, turned into the catalog, the status list and the events a
 * `ServerRegistry` offers, with each per-principal server's instances. A notification on the `mcp_fleet` channel makes it read the rows
 * again; so does a slow timer, because a listener goes silent after a lost connection (sql-pg
 * 0.53) and a notification sent meanwhile is lost.
 *
 * @since 0.3.0
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import { RegistryEvent } from "../../RegistryEvent.js"
import * as ServerRegistry from "../../ServerRegistry.js"
import * as Store from "./store.js"
import * as Wire from "./wire.js"

/** One server as a replica sees it. */
export interface Entry {
  readonly runner: string | undefined
  readonly status: ServerRegistry.ServerStatus
  readonly lists: Catalog.ServerLists
}

/** The fleet as read from PostgreSQL, kept current. */
export interface Directory {
  readonly entries: () => ReadonlyMap<string, Entry>
  readonly catalog: SubscriptionRef.SubscriptionRef<Catalog.Catalog>
  readonly pubsub: PubSub.PubSub<RegistryEvent>
  /** Reads the rows now (after a write of this process, so its own reads see it). */
  readonly refresh: Effect.Effect<void>
}

const eventsBetween = (before: Entry | undefined, name: string, after: Entry | undefined): Array<RegistryEvent> => {
  const empty = Wire.statusIn(name, undefined)
  const previous = before?.status.state ?? empty.state
  const next = after?.status.state ?? empty.state
  const events: Array<RegistryEvent> = previous._tag === next._tag
    ? []
    : [RegistryEvent.ServerStateChanged({ server: name, state: next, previous })]
  return [
    ...events,
    ...ServerRegistry.listChanges(name, before?.lists ?? Catalog.emptyLists, after?.lists ?? Catalog.emptyLists)
  ]
}

/**
 * Makes the directory and keeps it current until the Scope closes: each notification, and
 * every `refreshInterval`, reads the rows again.
 */
export const make = (options: {
  readonly naming: Catalog.Naming
  readonly refreshInterval: Duration.DurationInput
}): Effect.Effect<Directory, never, Scope.Scope | SqlClient.SqlClient | PgClient.PgClient> =>
  Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    const context = yield* Effect.context<SqlClient.SqlClient>()
    const catalog = yield* SubscriptionRef.make(Catalog.empty)
    const pubsub = yield* PubSub.sliding<RegistryEvent>(1024)
    yield* Effect.addFinalizer(() => PubSub.shutdown(pubsub))
    let entries: ReadonlyMap<string, Entry> = new Map()
    const lock = yield* Effect.makeSemaphore(1)
    const read = lock.withPermits(1)(Effect.gen(function*() {
      const rows = yield* Store.readRows
      const instances = Wire.instancesIn(yield* Store.readInstances)
      const next = new Map<string, Entry>()
      for (const row of rows) {
        next.set(row.name, {
          runner: row.runner ?? undefined,
          status: {
            ...Wire.statusIn(row.name, row.status),
            runner: row.runner ?? undefined,
            instances: instances.get(row.name)
          },
          lists: Wire.listsIn(row.lists)
        })
      }
      const names = new Set([...entries.keys(), ...next.keys()])
      const events = [...names].flatMap((name) => eventsBetween(entries.get(name), name, next.get(name)))
      entries = next
      yield* SubscriptionRef.set(
        catalog,
        Catalog.make(new Map([...next].map(([name, entry]) => [name, entry.lists])), options.naming)
      )
      yield* PubSub.publishAll(pubsub, events)
    }))
    const refresh = Effect.ignoreLogged(Effect.provide(read, context))
    const wake = yield* Queue.sliding<void>(1)
    yield* refresh
    // The listener is started again when it fails; each start reads the rows, for what it missed.
    yield* pg.listen(Store.channel).pipe(
      Stream.runForEach(() => Queue.offer(wake, undefined)),
      Effect.zipRight(Effect.fail("listen ended" as const)),
      Effect.tapError(() => Queue.offer(wake, undefined)),
      Effect.retry(Schedule.spaced("1 second")),
      Effect.forkScoped
    )
    yield* Queue.take(wake).pipe(Effect.zipRight(refresh), Effect.forever, Effect.forkScoped)
    yield* Queue.offer(wake, undefined).pipe(
      Effect.repeat(Schedule.spaced(options.refreshInterval)),
      Effect.forkScoped
    )
    return { entries: () => entries, catalog, pubsub, refresh }
  })
