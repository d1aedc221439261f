/**
 * Lazy servers and the catalog cache (internal to the registry): each actor saves the lists
 * its server sends (`remember`, written only when they differ from the entry it holds), and a
 * lazy one restores them before it ever runs (`restore`). A lazy server the cache has no entry
 * of is filled once the servers that are not lazy have settled, a few at a time across the
 * fleet (`FillSlots`), so filling never holds up the rest or spawns a hundred processes at once.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Catalog from "../../Catalog.js"
import * as CatalogCache from "../../CatalogCache.js"
import type * as ServerSpec from "../../ServerSpec.js"
import type * as ToolPins from "../../ToolPins.js"

/**
 * One server's side of the cache.
 */
export interface CacheLink {
  /** The cached lists of the spec (same digest), held as saved; undefined when there are none. */
  readonly restore: Effect.Effect<Catalog.ServerLists | undefined>
  /** Saves the lists the server sent, unless the entry holds them already. */
  readonly remember: (lists: Catalog.ServerLists) => Effect.Effect<void>
}

const textOf = (lists: Catalog.ServerLists) =>
  JSON.stringify([lists.tools, lists.resources, lists.templates, lists.prompts])

/**
 * The link of a server to `cache`, under its `identity` (`ToolPins.identity(spec)`, taken
 * once per actor: a digest each).
 */
export const link = (
  spec: ServerSpec.ServerSpec,
  identity: ToolPins.Identity,
  cache: CatalogCache.CatalogCache
): CacheLink => {
  const digest = CatalogCache.digest(spec)
  let held: string | undefined
  return {
    // As CatalogCache.lookup, with the identity and digest at hand.
    restore: Effect.map(cache.load(identity), (entry) => {
      if (entry === undefined || entry.digest !== digest) return undefined
      held = textOf(entry.lists)
      return entry.lists
    }),
    remember: (lists) =>
      Effect.suspend(() => {
        const text = textOf(lists)
        if (text === held) return Effect.void
        held = text
        const { hidden: _, ...raw } = lists
        return Effect.flatMap(
          Clock.currentTimeMillis,
          (savedAt) => cache.save(identity, { digest, savedAt, lists: raw })
        )
      })
  }
}

/**
 * What a lazy actor waits on before it fills the cache, and the slots fills run in.
 */
export interface FillSlots {
  /** Completes once the servers that are not lazy have settled (ready, or failed once). */
  readonly othersSettled: Effect.Effect<void>
  /** Runs one fill, a few at a time across the fleet. */
  readonly run: <A, E, R>(fill: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

// How many lazy servers fill the cache at once.
const FILLS_AT_ONCE = 4

/**
 * The fleet's fill slots: `othersSettled` waits for the actors that are not lazy (as read when
 * it runs), within `settle`.
 */
export const makeFillSlots = (
  othersSettled: (isOther: (spec: ServerSpec.ServerSpec) => boolean) => Effect.Effect<void>
): Effect.Effect<FillSlots> =>
  Effect.map(Effect.makeSemaphore(FILLS_AT_ONCE), (slots) => ({
    othersSettled: othersSettled((spec) => spec.lazy !== true && spec.disabled !== true),
    run: (fill) => slots.withPermits(1)(fill)
  }))

/**
 * The catalog cache in context, else one in memory for the registry's life.
 */
export const cacheInContext: Effect.Effect<CatalogCache.CatalogCache> = Effect.flatMap(
  Effect.serviceOption(CatalogCache.CatalogCache),
  Option.match({ onNone: () => CatalogCache.makeMemory, onSome: Effect.succeed })
)
