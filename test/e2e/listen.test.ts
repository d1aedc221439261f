import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import type * as JsonRpc from "../../src/JsonRpc.js"
import * as McpClient from "../../src/McpClient.js"
import * as Peer from "../../src/Peer.js"
import { Transport } from "../../src/Transport.js"
import { modernServer } from "../support/modern.js"

// A server of 2026-07-28 played by a raw handler: each subscriptions/listen request is told
// to `opened`, and stays open until the test says otherwise.
interface Opened {
  readonly id: JsonRpc.RequestId
  readonly filter: Record<string, unknown>
  /** Ends the request: with a result (the server closed the stream) or an error (a drop). */
  readonly end: Deferred.Deferred<Record<string, unknown>, Peer.HandlerError>
  readonly cancelled: Deferred.Deferred<void>
}

const connect = Effect.gen(function*() {
  const opened = yield* Queue.unbounded<Opened>()
  const capabilities = { tools: { listChanged: true }, resources: { listChanged: true, subscribe: true } }
  const fake = yield* modernServer("listen-server", capabilities, {
    "subscriptions/listen": (request) =>
      Effect.gen(function*() {
        const end = yield* Deferred.make<Record<string, unknown>, Peer.HandlerError>()
        const cancelled = yield* Deferred.make<void>()
        const filter = (request.params as { notifications: Record<string, unknown> }).notifications
        yield* Queue.offer(opened, { id: request.id, filter, end, cancelled })
        return yield* Effect.onInterrupt(Deferred.await(end), () => Deferred.succeed(cancelled, undefined))
      })
  })
  const client = yield* McpClient.make().pipe(Effect.provideService(Transport, fake.transport))
  // What the server sends on the stream `id`.
  const send = (id: JsonRpc.RequestId, method: string, params: Record<string, unknown> = {}) =>
    fake.peer.notify(method, { ...params, _meta: { "io.modelcontextprotocol/subscriptionId": id } })
  const ack = (id: JsonRpc.RequestId, notifications: Record<string, unknown>) =>
    send(id, "notifications/subscriptions/acknowledged", { notifications })
  return { fake, client, opened, send, ack }
})

// Opens a subscription in its own scope: the server acknowledges what `grant` gives.
const open = (
  setup: Effect.Effect.Success<typeof connect>,
  filter: Record<string, unknown>,
  grant: (asked: Record<string, unknown>) => Record<string, unknown> = (asked) => asked
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const subscribing = yield* Effect.fork(Scope.extend(setup.client.listen(filter), scope))
    const request = yield* Queue.take(setup.opened)
    yield* setup.ack(request.id, grant(request.filter))
    const subscription = yield* subscribing.await.pipe(Effect.flatten)
    return { subscription, request, scope }
  })

const methods = (queue: Queue.Dequeue<JsonRpc.Notification>) =>
  Effect.map(
    Queue.takeAll(queue),
    (all) =>
      Chunk.toReadonlyArray(all).map((n) => [n.method, n.params?.uri].filter((part) => part !== undefined).join(" "))
  )

// Notifications travel through the Memory transport's fibers: wait until the last one is in.
const until = (queue: Queue.Dequeue<JsonRpc.Notification>, count: number) =>
  Effect.repeat(Queue.size(queue), { until: (size) => size >= count })

describe("subscriptions/listen (2026-07-28)", () => {
  it.scoped("keeps what was asked of the acknowledgment, and only notifications of that", () =>
    Effect.gen(function*() {
      const setup = yield* connect
      const { request, subscription } = yield* open(
        setup,
        {
          toolsListChanged: true,
          promptsListChanged: true,
          resourceSubscriptions: ["file:///a", "file:///b"]
        },
        () => ({
          toolsListChanged: true,
          resourcesListChanged: true,
          resourceSubscriptions: ["file:///a", "file:///c"]
        })
      )
      expect(subscription.acknowledged()).toEqual({ toolsListChanged: true, resourceSubscriptions: ["file:///a"] })
      yield* setup.send(request.id, "notifications/prompts/list_changed")
      yield* setup.send(request.id, "notifications/resources/updated", { uri: "file:///c" })
      yield* setup.send(request.id, "notifications/resources/list_changed")
      yield* setup.send(request.id, "notifications/tools/list_changed")
      yield* setup.send(request.id, "notifications/resources/updated", { uri: "file:///a" })
      yield* until(subscription.notifications, 2)
      expect(yield* methods(subscription.notifications)).toEqual([
        "notifications/tools/list_changed",
        "notifications/resources/updated file:///a"
      ])
    }))

  it.scoped("gives each subscription the notifications that name it", () =>
    Effect.gen(function*() {
      const setup = yield* connect
      const tools = yield* open(setup, { toolsListChanged: true, resourcesListChanged: true })
      const resources = yield* open(setup, { resourcesListChanged: true, resourceSubscriptions: ["file:///a"] })
      expect(tools.request.id).not.toEqual(resources.request.id)
      yield* setup.send(resources.request.id, "notifications/resources/updated", { uri: "file:///a" })
      yield* setup.fake.peer.notify("notifications/resources/list_changed", {}) // on no stream
      yield* setup.send(tools.request.id, "notifications/tools/list_changed")
      yield* setup.send(resources.request.id, "notifications/resources/list_changed")
      yield* setup.send(tools.request.id, "notifications/resources/list_changed")
      yield* until(tools.subscription.notifications, 2)
      yield* until(resources.subscription.notifications, 2)
      expect(yield* methods(tools.subscription.notifications)).toEqual([
        "notifications/tools/list_changed",
        "notifications/resources/list_changed"
      ])
      expect(yield* methods(resources.subscription.notifications)).toEqual([
        "notifications/resources/updated file:///a",
        "notifications/resources/list_changed"
      ])
    }))

  it.scoped("sends the request again with a new id when it drops, and goes on", () =>
    Effect.gen(function*() {
      const setup = yield* connect
      const { request, subscription } = yield* open(setup, { toolsListChanged: true })
      yield* Deferred.fail(request.end, new Peer.HandlerError({ code: -32603, message: "stream lost" }))
      yield* TestClock.adjust("1 second")
      const again = yield* Queue.take(setup.opened)
      expect(again.id).not.toEqual(request.id)
      expect(again.filter).toEqual({ toolsListChanged: true })
      // The old id is over: what still names it is not ours any more.
      yield* setup.send(request.id, "notifications/tools/list_changed", { uri: "stale" })
      yield* setup.ack(again.id, { toolsListChanged: true })
      yield* setup.send(again.id, "notifications/tools/list_changed")
      yield* until(subscription.notifications, 1)
      expect(yield* methods(subscription.notifications)).toEqual(["notifications/tools/list_changed"])
      // A stream the server closed is opened again too.
      yield* Deferred.succeed(again.end, { resultType: "complete" })
      yield* TestClock.adjust("1 second")
      expect((yield* Queue.take(setup.opened)).id).not.toEqual(again.id)
    }))

  it.scoped("waits longer each time the stream ends unacknowledged, and less once acknowledged", () =>
    Effect.gen(function*() {
      const setup = yield* connect
      const { request, subscription } = yield* open(setup, { toolsListChanged: true })
      const drop = (opened: Opened) =>
        Deferred.fail(opened.end, new Peer.HandlerError({ code: -32603, message: "lost" }))
      // Opened again after 1 s, then 2 s, then 4 s while the server says nothing.
      let last = request
      for (const wait of [1, 2, 4]) {
        yield* drop(last)
        yield* TestClock.adjust(`${wait - 0.5} seconds`)
        expect(yield* Queue.size(setup.opened)).toBe(0)
        yield* TestClock.adjust("0.5 seconds")
        last = yield* Queue.take(setup.opened)
      }
      // Acknowledged: the next drop is met after 1 s again.
      yield* setup.ack(last.id, { toolsListChanged: true })
      // Seen once what follows the acknowledgment is.
      yield* setup.send(last.id, "notifications/tools/list_changed")
      yield* Queue.take(subscription.notifications)
      yield* drop(last)
      yield* TestClock.adjust("1 second")
      expect((yield* Queue.take(setup.opened)).id).not.toEqual(last.id)
    }))

  it.scoped("ending the subscription cancels its request", () =>
    Effect.gen(function*() {
      const setup = yield* connect
      const { request, scope } = yield* open(setup, { toolsListChanged: true })
      yield* Scope.close(scope, Exit.void)
      yield* Deferred.await(request.cancelled)
      // And nothing opens it again.
      yield* TestClock.adjust("5 seconds")
      expect(yield* Queue.size(setup.opened)).toBe(0)
    }))

  it.scoped("stands a listen stream for each resource subscription (no resources/subscribe)", () =>
    Effect.gen(function*() {
      const setup = yield* connect
      expect(setup.client.protocolVersion).toBe("2026-07-28")
      // Watching the connection's notifications stands the list changes' stream first.
      const watching = yield* Effect.fork(setup.client.subscribe)
      const lists = yield* Queue.take(setup.opened)
      expect(lists.filter).toEqual({ toolsListChanged: true, resourcesListChanged: true })
      yield* setup.ack(lists.id, lists.filter)
      const updates = yield* Fiber.join(watching)
      const subscribing = yield* Effect.fork(setup.client.subscribeResource("file:///a"))
      const request = yield* Queue.take(setup.opened)
      expect(request.filter).toEqual({ resourceSubscriptions: ["file:///a"] })
      yield* setup.ack(request.id, request.filter)
      yield* subscribing.await.pipe(Effect.flatten)
      // Subscribing again holds the same stream.
      yield* setup.client.subscribeResource("file:///a")
      expect(yield* Queue.size(setup.opened)).toBe(0)
      yield* setup.send(request.id, "notifications/resources/updated", { uri: "file:///a" })
      const update = yield* Effect.repeat(Queue.take(updates), {
        until: (n) => n.method === "notifications/resources/updated"
      })
      expect(update.params?.uri).toBe("file:///a")
      yield* setup.client.unsubscribeResource("file:///a")
      yield* Deferred.await(request.cancelled)
      expect(setup.fake.requests.some((r) => r.method === "resources/subscribe")).toBe(false)
    }))

  it.scoped("watching the notifications holds one stream for the list changes, told as a stateful server tells them", () =>
    Effect.gen(function*() {
      const setup = yield* connect
      const first = yield* Scope.make()
      const watching = yield* Effect.fork(Scope.extend(setup.client.subscribe, first))
      const request = yield* Queue.take(setup.opened)
      expect(request.filter).toEqual({ toolsListChanged: true, resourcesListChanged: true })
      yield* setup.ack(request.id, request.filter)
      const seen = yield* Fiber.join(watching)
      // A second watcher shares the stream.
      const second = yield* Scope.make()
      const alsoSeen = yield* Scope.extend(setup.client.subscribe, second)
      expect(yield* Queue.size(setup.opened)).toBe(0)
      yield* setup.send(request.id, "notifications/tools/list_changed")
      // No acknowledgment, no stream id: what a stateful connection gets.
      expect(yield* Queue.take(seen)).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
      expect((yield* Queue.take(alsoSeen)).method).toBe("notifications/tools/list_changed")
      // A drop is followed by the same request with a new id, after the wait.
      yield* Deferred.fail(request.end, new Peer.HandlerError({ code: -32603, message: "dropped" }))
      yield* TestClock.adjust("1 second")
      const again = yield* Queue.take(setup.opened)
      expect(again.id).not.toEqual(request.id)
      expect(again.filter).toEqual(request.filter)
      yield* setup.ack(again.id, again.filter)
      yield* setup.send(again.id, "notifications/resources/list_changed")
      expect((yield* Queue.take(seen)).method).toBe("notifications/resources/list_changed")
      // The stream stays while one watcher does, and is cancelled when the last goes.
      yield* Scope.close(first, Exit.void)
      yield* setup.send(again.id, "notifications/tools/list_changed")
      const later = yield* Effect.repeat(Queue.take(alsoSeen), {
        until: (n) => n.method === "notifications/tools/list_changed"
      })
      expect(later.params).toBeUndefined()
      expect(yield* Deferred.isDone(again.cancelled)).toBe(false)
      yield* Scope.close(second, Exit.void)
      yield* Deferred.await(again.cancelled)
    }))

  it.scoped("fails when the server refuses the subscription", () =>
    Effect.gen(function*() {
      const setup = yield* connect
      const subscribing = yield* Effect.fork(setup.client.listen({ toolsListChanged: true }))
      const request = yield* Queue.take(setup.opened)
      yield* Deferred.fail(request.end, new Peer.HandlerError({ code: -32601, message: "no listen here" }))
      const exit = yield* subscribing.await
      expect(Exit.isFailure(exit)).toBe(true)
      yield* TestClock.adjust("5 seconds")
      expect(yield* Queue.size(setup.opened)).toBe(0)
    }))
})
