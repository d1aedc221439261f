/**
 * The fleet's catalog: every server's lists merged into one Catalog, rebuilt whenever one
 * server's lists change, with each new name collision logged once, when it appears; and
 * the step that takes hidden text out of a server's lists before they reach it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import { RegistryEvent } from "../../RegistryEvent.js"

/**
 * The live catalog and the way servers feed it.
 */
export interface FleetCatalog {
  readonly catalog: SubscriptionRef.SubscriptionRef<Catalog.Catalog>
  /** Takes a server's new lists; empty lists take the server out of the catalog. */
  readonly listsChanged: (server: string, lists: Catalog.ServerLists) => Effect.Effect<void>
  /**
   * Runs `effect` with the changes it makes rebuilding the catalog once, when it ends (the
   * restores of a hundred lazy servers: one rebuild, not one per server).
   */
  readonly together: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

const key = (collision: Catalog.Collision) => `${collision.kind}:${collision.name}`

/**
 * Makes an empty fleet catalog.
 */
export const make = (naming: Catalog.Naming): Effect.Effect<FleetCatalog> =>
  Effect.map(SubscriptionRef.make(Catalog.empty), (catalog) => {
    const offered = new Map<string, Catalog.ServerLists>()
    let reported = new Set<string>()
    const reportCollisions = (current: Catalog.Catalog) => {
      const fresh = current.collisions.filter((collision) => !reported.has(key(collision)))
      reported = new Set(current.collisions.map(key))
      return Effect.forEach(fresh, (collision) =>
        Effect.logWarning(
          `the ${collision.kind} name '${collision.name}' is claimed by ${
            collision.entries.map((entry) => `'${entry.original}' of server '${entry.server}' (now '${entry.name}')`)
              .join(", ")
          }`
        ), { discard: true })
    }
    // The catalog is rebuilt under the ref's lock, from the lists as they are at that moment.
    const rebuild = Effect.flatMap(
      SubscriptionRef.updateAndGet(catalog, () => Catalog.make(offered, naming)),
      reportCollisions
    )
    // Changes that come together share a rebuild: one rebuild at a time, and a change a
    // rebuild already took in returns without another.
    const rebuilding = Effect.unsafeMakeSemaphore(1)
    let changes = 0
    let built = 0
    const rebuildFor = (change: number) =>
      rebuilding.withPermits(1)(Effect.suspend(() => {
        if (change <= built) return Effect.void
        built = changes
        return rebuild
      }))
    // While a `together` runs, changes wait for its end.
    let holding = 0
    return {
      catalog,
      listsChanged: (server, lists) =>
        Effect.suspend(() => {
          // A server with nothing to offer has no entry, so removed servers leave none behind.
          const empty = lists.tools.length + lists.resources.length + lists.templates.length + lists.prompts.length +
              (lists.skills?.length ?? 0) === 0
          if (empty) offered.delete(server)
          else offered.set(server, lists)
          const change = ++changes
          return holding > 0 ? Effect.void : rebuildFor(change)
        }),
      together: (effect) =>
        Effect.acquireUseRelease(
          Effect.sync(() => holding++),
          () => effect,
          () => Effect.suspend(() => --holding > 0 ? Effect.void : rebuildFor(changes))
        )
    }
  })

/**
 * The sanitising of one server's lists (see `Catalog.sanitizeLists`): each item found to
 * hold hidden text is logged and published (`ToolFlagged`) once per finding.
 */
export const sanitizer = (
  server: string,
  mode: Catalog.SanitizeMode,
  publish: (event: RegistryEvent) => Effect.Effect<void>
) => {
  const reported = new Set<string>()
  return (lists: Catalog.ServerLists): Effect.Effect<Catalog.ServerLists> =>
    Effect.suspend(() => {
      const result = Catalog.sanitizeLists(lists, mode)
      const fresh = result.flagged.filter((flagged) => {
        const key = JSON.stringify([flagged.kind, flagged.name, flagged.fields, flagged.found])
        return reported.has(key) ? false : Boolean(reported.add(key))
      })
      const action = mode === "strip" ? "stripped" : "flagged"
      return Effect.as(
        Effect.forEach(fresh, (flagged) =>
          Effect.zipRight(
            Effect.logWarning(
              `server '${server}': the ${flagged.kind} '${flagged.name}' hides text (${flagged.found.join(", ")} in ${
                flagged.fields.join(", ")
              }); ${action === "stripped" ? "it was stripped" : "it was made visible"} before the catalog shows it`
            ),
            publish(RegistryEvent.ToolFlagged({ server, ...flagged, action }))
          ), { discard: true }),
        result.lists
      )
    })
}
