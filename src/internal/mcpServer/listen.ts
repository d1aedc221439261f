/**
 * `subscriptions/listen` (2026-07-28): a long-lived request whose stream carries the
 * notifications the client opted in to (list changes, updates of the resources it names),
 * each tagged with the request's id as `subscriptionId`. It is acknowledged first, with the
 * part of the filter the server honours; it ends when the client cancels it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import * as McpSchema from "../../McpSchema.js"
import type { ListKind } from "../../McpServer.js"
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

/** The handler of `subscriptions/listen`; `listeners` are the server's open streams. */
export const listen = (listeners: Set<Listener>): Method => (request, ctx) => {
  const asked = request.params?.notifications
  if (!isRecord(asked)) return Effect.fail(invalidParams("subscriptions/listen needs 'notifications'"))
  const handlers = ctx.session.handlers ?? {}
  const uris = Array.isArray(asked.resourceSubscriptions)
    ? asked.resourceSubscriptions.filter((uri): uri is string => typeof uri === "string")
    : []
  // What is honoured: only what the server serves.
  const filter: McpSchema.SubscriptionFilter = {
    ...(asked.toolsListChanged === true && handlers.tools !== undefined ? { toolsListChanged: true } : {}),
    ...(asked.promptsListChanged === true && handlers.prompts !== undefined ? { promptsListChanged: true } : {}),
    ...(asked.resourcesListChanged === true && handlers.resources !== undefined ? { resourcesListChanged: true } : {}),
    ...(uris.length > 0 && handlers.resources !== undefined ? { resourceSubscriptions: uris } : {})
  }
  const meta = { [McpSchema.MetaKey.SubscriptionId]: request.id }
  const listener: Listener = {
    filter,
    tell: (method, params) => ctx.session.notify(method, { ...params, _meta: meta }, request.id)
  }
  return listener.tell(McpSchema.ModernMethod.SubscriptionsAcknowledged, { notifications: filter }).pipe(
    Effect.zipRight(Effect.acquireRelease(
      Effect.sync(() => listeners.add(listener)),
      () => Effect.sync(() => listeners.delete(listener))
    )),
    Effect.zipRight(Effect.never),
    Effect.scoped
  )
}
