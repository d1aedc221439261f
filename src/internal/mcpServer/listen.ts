/**
 * `subscriptions/listen` (2026-07-28): a long-lived request whose stream carries the
 * notifications the client opted in to (list changes, updates of the resources it names),
 * each tagged with the request's id as `subscriptionId`. It is acknowledged first, with the
 * part of the filter the server honours; it ends when the client cancels it. The resources it
 * names are subscribed to at the handlers for its life, as `resources/subscribe` would
 * (the gateway subscribes at the servers behind it).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import * as McpSchema from "../../McpSchema.js"
import type { ListKind, ResourceHandlers } from "../../McpServer.js"
import type { Context } from "./context.js"
import { invalidParams } from "./errors.js"
import type { Method } from "./methods.js"

/** An open listen stream: what it honours, and how to tell it. */
export interface Listener {
  readonly filter: McpSchema.SubscriptionFilter
  readonly tell: (method: string, params: Record<string, unknown> | undefined) => Effect.Effect<void>
}

const LIST_CHANGED: Record<ListKind, keyof McpSchema.SubscriptionFilter> = {
  tools: "toolsListChanged",
  resources: "resourcesListChanged",
  prompts: "promptsListChanged"
}

/** Whether `listener` asked to be told that the `kind` list changed. */
export const wantsList = (listener: Listener, kind: ListKind): boolean => listener.filter[LIST_CHANGED[kind]] === true

/** Whether `listener` asked to be told that `uri` changed. */
export const wantsResource = (listener: Listener, uri: string): boolean =>
  listener.filter.resourceSubscriptions?.includes(uri) === true

// The URIs of `asked` the handlers agree to tell of, each told to `subscribe` (as
// resources/subscribe would be) and to `unsubscribe` when the stream ends; a URI the handler
// refuses is left out of the acknowledgment.
const subscribed = (uris: ReadonlyArray<string>, resources: ResourceHandlers, ctx: Context) =>
  Effect.filter(uris, (uri) => {
    const told = resources.subscribe?.(uri, ctx)
    const release = resources.unsubscribe
    const kept = told === undefined ? Effect.void : told
    return kept.pipe(
      Effect.zipRight(
        release === undefined ? Effect.void : Effect.addFinalizer(() => Effect.ignore(release(uri, ctx)))
      ),
      Effect.as(true),
      Effect.catchAll(() => Effect.succeed(false))
    )
  })

/** The handler of `subscriptions/listen`; `listeners` are the server's open streams. */
export const listen = (listeners: Set<Listener>): Method => (request, ctx) => {
  const asked = request.params?.notifications
  if (!isRecord(asked)) return Effect.fail(invalidParams("subscriptions/listen needs 'notifications'"))
  const handlers = ctx.session.handlers ?? {}
  const resources = handlers.resources
  const uris = Array.isArray(asked.resourceSubscriptions)
    ? asked.resourceSubscriptions.filter((uri): uri is string => typeof uri === "string")
    : []
  return Effect.gen(function*() {
    const kept = resources === undefined ? [] : yield* subscribed(uris, resources, ctx)
    // What is honoured: only what the server serves.
    const filter: McpSchema.SubscriptionFilter = {
      ...(asked.toolsListChanged === true && handlers.tools !== undefined ? { toolsListChanged: true } : {}),
      ...(asked.promptsListChanged === true && handlers.prompts !== undefined ? { promptsListChanged: true } : {}),
      ...(asked.resourcesListChanged === true && resources !== undefined ? { resourcesListChanged: true } : {}),
      ...(kept.length > 0 ? { resourceSubscriptions: kept } : {})
    }
    const meta = { [McpSchema.MetaKey.SubscriptionId]: request.id }
    const listener: Listener = {
      filter,
      tell: (method, params) => ctx.session.notify(method, { ...params, _meta: meta }, request.id)
    }
    yield* listener.tell(McpSchema.ModernMethod.SubscriptionsAcknowledged, { notifications: filter })
    yield* Effect.acquireRelease(
      Effect.sync(() => listeners.add(listener)),
      () => Effect.sync(() => listeners.delete(listener))
    )
    return yield* Effect.never
  }).pipe(Effect.scoped)
}
