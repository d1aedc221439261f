/**
 * `subscriptions/listen` (2026-07-28): a long-lived request whose answer only comes when the
 * server ends the stream; until then the server sends the notifications the client asked
 * for, each naming the stream by the request's id in `_meta`. One subscription here is one
 * such request, its notifications picked out of the connection's by that id (so several can
 * run at once), after the server's acknowledgment: what it agreed to send, checked against
 * what was asked (anything more is dropped, and so are notifications of kinds it did not
 * agree to).
 *
 * There is no resumption in this revision: when the request ends — the stream dropped, or the
 * server closed it — and the connection still runs, it is sent again with a new id (the
 * server keeps nothing of the old one), after a wait that doubles while no acknowledgment
 * comes. Ending the Scope interrupts the request, which
 * cancels it, closing its stream.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import { isRecord } from "effect/Predicate"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"

/** How long to wait before sending a dropped subscription's request again, the first time. */
export const REOPEN_DELAY = Duration.seconds(1)

/** The longest wait between two tries, when the stream keeps ending unacknowledged. */
export const MAX_REOPEN_DELAY = Duration.seconds(30)

// The wait before try `failures` + 1: doubling from REOPEN_DELAY while no acknowledgment comes.
const reopenDelay = (failures: number): Duration.Duration =>
  Duration.min(Duration.times(REOPEN_DELAY, 2 ** Math.min(failures, 10)), MAX_REOPEN_DELAY)

/**
 * One open subscription.
 */
export interface Subscription {
  /** What the server agreed to send, per its latest acknowledgment. */
  readonly acknowledged: () => McpSchema.SubscriptionFilter
  /** The subscription's notifications (acknowledgments left out), across re-openings. */
  readonly notifications: Queue.Dequeue<JsonRpc.Notification>
}

const decodeAck = McpSchema.decodeUnknown(McpSchema.SubscriptionsAcknowledgedParams)

// The part of `granted` that was asked for.
const within = (
  asked: McpSchema.SubscriptionFilter,
  granted: McpSchema.SubscriptionFilter
): McpSchema.SubscriptionFilter => {
  const uris = (key: "resourceSubscriptions" | "taskIds") => {
    const wanted = new Set(asked[key] ?? [])
    const kept = (granted[key] ?? []).filter((uri) => wanted.has(uri))
    return kept.length === 0 ? {} : { [key]: kept }
  }
  const flag = (key: "toolsListChanged" | "promptsListChanged" | "resourcesListChanged") =>
    asked[key] === true && granted[key] === true ? { [key]: true } : {}
  return {
    ...flag("toolsListChanged"),
    ...flag("promptsListChanged"),
    ...flag("resourcesListChanged"),
    ...uris("resourceSubscriptions"),
    ...uris("taskIds")
  }
}

// Whether a notification is of a kind the acknowledgment covers.
const covered = (filter: McpSchema.SubscriptionFilter, notification: JsonRpc.Notification): boolean => {
  switch (notification.method) {
    case McpSchema.Method.ToolsListChanged:
      return filter.toolsListChanged === true
    case McpSchema.Method.PromptsListChanged:
      return filter.promptsListChanged === true
    case McpSchema.Method.ResourcesListChanged:
      return filter.resourcesListChanged === true
    case McpSchema.Method.ResourcesUpdated:
      return (filter.resourceSubscriptions ?? []).includes(String(notification.params?.uri))
    case McpSchema.Method.TaskNotification:
      return (filter.taskIds ?? []).includes(String(notification.params?.taskId))
    default:
      return false
  }
}

const subscriptionOf = (notification: JsonRpc.Notification): unknown =>
  (notification.params?._meta as Record<string, unknown> | undefined)?.[McpSchema.SUBSCRIPTION_ID_META]

// Whether a notification names the stream of request `id`. Some servers (the conformance
// repo's reference one) give a numeric id back as a string: "7" names request 7 too.
const names = (notification: JsonRpc.Notification, id: JsonRpc.RequestId): boolean => {
  const named = subscriptionOf(notification)
  return named === id || (typeof id === "number" && named === String(id))
}

/**
 * Opens a subscription for `filter` on `peer` for the life of the Scope, once the server
 * acknowledged it (within `ackTimeout`). Fails when the first request fails or no
 * acknowledgment comes.
 */
export const listen = (
  peer: Peer.Peer,
  filter: McpSchema.SubscriptionFilter,
  ackTimeout: Duration.DurationInput
): Effect.Effect<Subscription, McpError.McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const server = peer.server
    const incoming = yield* peer.subscribe
    const notifications = yield* Effect.acquireRelease(Queue.unbounded<JsonRpc.Notification>(), Queue.shutdown)
    const firstAck = yield* Deferred.make<void, McpError.McpError>()
    let current: JsonRpc.RequestId | undefined
    let acknowledged: McpSchema.SubscriptionFilter = {}
    let isAcknowledged = false
    // Tries since the last acknowledgment.
    let failures = 0

    const handle = (notification: JsonRpc.Notification): Effect.Effect<void> => {
      if (current === undefined || !names(notification, current)) return Effect.void
      if (notification.method !== McpSchema.Method.SubscriptionsAcknowledged) {
        return isAcknowledged && covered(acknowledged, notification)
          ? Queue.offer(notifications, notification)
          : Effect.void
      }
      const ack = decodeAck(notification.params)
      if (Either.isLeft(ack)) return Effect.logWarning(`server '${server}' sent a malformed acknowledgment; skipped`)
      acknowledged = within(filter, ack.right.notifications)
      isAcknowledged = true
      failures = 0
      return Deferred.succeed(firstAck, undefined)
    }
    yield* Queue.take(incoming).pipe(Effect.flatMap(handle), Effect.forever, Effect.forkScoped)

    const open = peer.request(McpSchema.Method.SubscriptionsListen, { notifications: filter }, {
      timeout: Duration.infinity,
      onId: (id) => {
        current = id
        isAcknowledged = false
      }
    })
    // Sent again for as long as the connection runs; the first failure before any
    // acknowledgment is the caller's.
    const loop: Effect.Effect<void> = open.pipe(
      Effect.matchEffect({
        onFailure: (error) => Deferred.fail(firstAck, error),
        onSuccess: () =>
          Deferred.fail(
            firstAck,
            McpError.closed(server, {
              method: McpSchema.Method.SubscriptionsListen,
              message: "the server ended the subscription before acknowledging it"
            })
          )
      }),
      Effect.zipRight(Effect.suspend(() => Effect.sleep(reopenDelay(failures++)))),
      Effect.zipRight(Effect.suspend(() => loop))
    )
    const running = yield* Effect.forkScoped(Effect.raceFirst(loop, Effect.asVoid(peer.closed)))
    yield* Deferred.await(firstAck).pipe(
      Effect.timeoutFail({
        duration: ackTimeout,
        onTimeout: () =>
          McpError.timeout(server, {
            method: McpSchema.Method.SubscriptionsListen,
            afterMs: Duration.toMillis(Duration.decode(ackTimeout)),
            kind: "idle"
          })
      }),
      Effect.tapError(() => Fiber.interrupt(running))
    )
    return { acknowledged: () => acknowledged, notifications }
  })

/** The list changes to listen for: those the server says it announces. */
export const listChangesOf = (capabilities: McpSchema.ServerCapabilities): McpSchema.SubscriptionFilter => ({
  ...(capabilities.tools?.listChanged === true ? { toolsListChanged: true } : {}),
  ...(capabilities.prompts?.listChanged === true ? { promptsListChanged: true } : {}),
  ...(capabilities.resources?.listChanged === true ? { resourcesListChanged: true } : {})
})

// The list changes this revision sends only on a listen stream. (A resource update outside
// one is passed on: the gateway's session tells its subscribers of them without a stream id.)
const STREAMED: ReadonlySet<string> = new Set([
  McpSchema.Method.ToolsListChanged,
  McpSchema.Method.PromptsListChanged,
  McpSchema.Method.ResourcesListChanged
])

// A listen stream's notification as a legacy connection would get it: an acknowledgment
// is the stream's own business (none), the stream's id leaves `_meta`, and a list change
// told outside any stream is not one of this revision (none).
const asLegacy = (notification: JsonRpc.Notification): JsonRpc.Notification | undefined => {
  if (notification.method === McpSchema.Method.SubscriptionsAcknowledged) return undefined
  const meta = notification.params?._meta
  if (!isRecord(meta) || !(McpSchema.SUBSCRIPTION_ID_META in meta)) {
    return STREAMED.has(notification.method) ? undefined : notification
  }
  const { [McpSchema.SUBSCRIPTION_ID_META]: _id, ...rest } = meta
  const { _meta: _old, ...params } = notification.params!
  if (Object.keys(rest).length > 0) return { ...notification, params: { ...params, _meta: rest } }
  return Object.keys(params).length === 0
    ? { jsonrpc: notification.jsonrpc, method: notification.method }
    : { ...notification, params }
}

/**
 * `McpClient.subscribe` on a 2026-07-28 connection, which the server tells of list changes
 * only on a listen stream: one stream for `filter` (the lists the server says change),
 * opened in `scope` (the connection's) by the first subscriber and cancelled when the last
 * one goes. A subscriber gets the connection's notifications as a legacy one would (no
 * acknowledgments, no stream ids), once the stream is acknowledged, so it misses nothing sent
 * after subscribing returns. A server that refuses the stream is told in the log, and its
 * subscribers get no list changes (until they all go and one comes).
 */
export const makeWatchedSubscribe = (
  peer: Peer.Peer,
  filter: McpSchema.SubscriptionFilter,
  ackTimeout: Duration.DurationInput,
  scope: Scope.Scope
): Effect.Effect<Queue.Dequeue<JsonRpc.Notification>, never, Scope.Scope> => {
  let watchers = 0
  let open: { readonly ready: Deferred.Deferred<void>; fiber?: Fiber.RuntimeFiber<void> } | undefined
  const start = Effect.gen(function*() {
    const ready = yield* Deferred.make<void>()
    const current: NonNullable<typeof open> = { ready }
    open = current
    current.fiber = yield* listen(peer, filter, ackTimeout).pipe(
      Effect.zipRight(Deferred.succeed(ready, undefined)),
      Effect.zipRight(Effect.never),
      Effect.catchAll((error) =>
        Effect.zipRight(
          Effect.logWarning(
            `server '${peer.server}': subscriptions/listen failed; list changes are not told: ${error.message}`
          ),
          Deferred.succeed(ready, undefined)
        )
      ),
      Effect.scoped,
      Effect.asVoid,
      // Forked from the acquisition, which is uninterruptible; the stream must not be.
      Effect.interruptible,
      Effect.forkIn(scope)
    )
    return ready
  })
  const acquire = Effect.suspend(() => {
    watchers++
    return open === undefined ? start : Effect.succeed(open.ready)
  })
  const release = Effect.suspend(() => {
    watchers--
    const fiber = watchers === 0 ? open?.fiber : undefined
    if (fiber === undefined) return Effect.void
    open = undefined
    return Fiber.interrupt(fiber)
  })
  const watching = Object.keys(filter).length === 0
    ? Effect.void
    : Effect.flatMap(Effect.acquireRelease(acquire, () => release), Deferred.await)
  return Effect.gen(function*() {
    const incoming = yield* peer.subscribe
    const out = yield* Effect.acquireRelease(Queue.unbounded<JsonRpc.Notification>(), Queue.shutdown)
    yield* Queue.take(incoming).pipe(
      Effect.flatMap((notification) => {
        const kept = asLegacy(notification)
        return kept === undefined ? Effect.void : Queue.offer(out, kept)
      }),
      Effect.forever,
      Effect.forkScoped
    )
    yield* watching
    return out
  })
}

/**
 * `subscribeResource` / `unsubscribeResource` for a server of 2026-07-28, which has no
 * `resources/subscribe`: one listen stream per subscribed URI, held in `scope` (the
 * connection's) until unsubscribed. Its `notifications/resources/updated` reach the
 * connection's notifications as any other.
 */
export const makeResourceSubscriptions = (
  peer: Peer.Peer,
  scope: Scope.Scope,
  ackTimeout: Duration.DurationInput,
  gate: (
    feature: "resources.subscribe",
    action: string,
    effect: Effect.Effect<void, McpError.McpError>
  ) => Effect.Effect<void, McpError.McpError>
) => {
  const held = new Map<string, Fiber.RuntimeFiber<void, McpError.McpError>>()
  const subscribe = (uri: string): Effect.Effect<void, McpError.McpError> =>
    Effect.suspend(() => {
      if (held.has(uri)) return Effect.void
      return Effect.gen(function*() {
        const ready = yield* Deferred.make<void, McpError.McpError>()
        const fiber: Fiber.RuntimeFiber<void, McpError.McpError> = yield* listen(
          peer,
          { resourceSubscriptions: [uri] },
          ackTimeout
        ).pipe(
          Effect.zipRight(Deferred.succeed(ready, undefined)),
          Effect.zipRight(Effect.never),
          Effect.tapError((error) => Deferred.fail(ready, error)),
          Effect.scoped,
          // A subscription that could not open is not held.
          Effect.ensuring(Effect.sync(() => held.get(uri) === fiber && held.delete(uri))),
          Effect.forkIn(scope)
        )
        held.set(uri, fiber)
        yield* Deferred.await(ready)
      })
    })
  const unsubscribe = (uri: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const fiber = held.get(uri)
      held.delete(uri)
      return fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
    })
  return {
    subscribeResource: (uri: string) => gate("resources.subscribe", "subscribe to resources", subscribe(uri)),
    unsubscribeResource: (uri: string) => gate("resources.subscribe", "unsubscribe from resources", unsubscribe(uri))
  }
}
