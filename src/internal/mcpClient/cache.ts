/**
 * The cache of a 2026-07-28 connection: a list page or a resource read whose result carried a
 * positive `ttlMs` is answered from here until it expires (on the Clock), so nothing — the
 * fleet's refreshes included — lists again before expiry. A change notification invalidates
 * at once what it concerns (`list_changed` the pages of that list, `resources/updated` the
 * reads of that URI). The key is the method with the parameter that selects the result (the
 * cursor of a page, the URI of a read). The cache belongs to one connection, so one
 * authorization context: `cacheScope: "private"` results are never shared.
 *
 * Notifications are applied by a fiber and, before every lookup, from the same queue: the Peer
 * offers each one to its subscribers as it arrives, so a lookup that follows a notification
 * never finds what it invalidated.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"

const CACHEABLE: ReadonlySet<string> = new Set([
  McpSchema.Method.ToolsList,
  McpSchema.Method.PromptsList,
  McpSchema.Method.ResourcesList,
  McpSchema.Method.ResourcesTemplatesList,
  McpSchema.Method.ResourcesRead
])

// The list methods each list_changed notification makes stale.
const STALE_BY: ReadonlyMap<string, ReadonlyArray<string>> = new Map([
  [McpSchema.Method.ToolsListChanged, [McpSchema.Method.ToolsList]],
  [McpSchema.Method.PromptsListChanged, [McpSchema.Method.PromptsList]],
  [McpSchema.Method.ResourcesListChanged, [McpSchema.Method.ResourcesList, McpSchema.Method.ResourcesTemplatesList]]
])

interface Entry {
  readonly method: string
  readonly value: unknown
  readonly until: number
}

const keyOf = (method: string, params: Record<string, unknown> | undefined): string => {
  const selector = method === McpSchema.Method.ResourcesRead ? params?.uri : params?.cursor
  return typeof selector === "string" ? `${method} ${selector}` : method
}

/**
 * A connection's cache: `through` answers a cacheable request from it while fresh, and
 * stores what the server answers.
 */
export interface Cache {
  readonly through: <A, E>(
    method: string,
    params: Record<string, unknown> | undefined,
    fetch: Effect.Effect<A, E>
  ) => Effect.Effect<A, E>
  /** Drops every cached result of `method` (a reason to think it changed). */
  readonly forget: (method: string) => void
}

/**
 * Makes the cache of a connection; its fiber ends with the Scope.
 */
export const makeCache = (peer: Peer.Peer): Effect.Effect<Cache, never, Scope.Scope> =>
  Effect.gen(function*() {
    const entries = new Map<string, Entry>()
    const feed = yield* peer.subscribe
    const forget = (method: string) => {
      for (const [key, entry] of entries) if (entry.method === method) entries.delete(key)
    }

    const apply = (notification: JsonRpc.Notification) => {
      const stale = STALE_BY.get(notification.method)
      if (stale !== undefined) {
        for (const method of stale) forget(method)
      } else if (notification.method === McpSchema.Method.ResourcesUpdated) {
        entries.delete(keyOf(McpSchema.Method.ResourcesRead, notification.params))
      }
    }
    yield* Queue.take(feed).pipe(Effect.map(apply), Effect.forever, Effect.forkScoped)
    const catchUp = Effect.map(Queue.takeAll(feed), (pending) => {
      for (const notification of pending) apply(notification)
    })

    const through: Cache["through"] = (method, params, fetch) => {
      if (!CACHEABLE.has(method)) return fetch
      const key = keyOf(method, params)
      return Effect.flatMap(Effect.zipRight(catchUp, Clock.currentTimeMillis), (now) => {
        const hit = entries.get(key)
        if (hit !== undefined && now < hit.until) return Effect.succeed(hit.value as any)
        return Effect.tap(fetch, (value) =>
          Effect.map(Clock.currentTimeMillis, (received) => {
            const ttl = McpSchema.ttlOf(value)
            if (ttl > 0) entries.set(key, { method, value, until: received + ttl })
            else entries.delete(key)
          }))
      })
    }
    return { through, forget }
  })
