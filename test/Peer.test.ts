import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as TestClock from "effect/TestClock"
import * as JsonRpc from "../src/JsonRpc.js"
import * as McpError from "../src/McpError.js"
import * as Memory from "../src/Memory.js"
import * as Peer from "../src/Peer.js"
import { failure } from "../src/testing/Results.js"
import { BrokenAnswer, Inbox, type Receiver, Transport } from "../src/Transport.js"
import { peerPair } from "./support/peerPair.js"

const setup = peerPair

describe("Peer", () => {
  it.scoped("correlates a request with its response", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, reply } = yield* setup()
      const fiber = yield* Effect.fork(peer.request("tools/list", { cursor: "a" }))
      const request = yield* nextRequest
      expect(request).toMatchObject({ jsonrpc: "2.0", method: "tools/list", params: { cursor: "a" } })
      yield* reply(request.id, { tools: [] })
      expect(yield* Fiber.join(fiber)).toEqual({ tools: [] })
      expect(peer.inFlight()).toBe(0)
    }))

  it.scoped("matches out-of-order responses to their requests", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, reply } = yield* setup()
      const fibers = yield* Effect.forEach([0, 1, 2], (n) => Effect.fork(peer.request("echo", { n })))
      const requests = yield* Effect.forEach([0, 1, 2], () => nextRequest)
      for (const request of requests.reverse()) yield* reply(request.id, { n: request.params!.n })
      expect(yield* Effect.forEach(fibers, Fiber.join)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }])
    }))

  it.scoped("keeps 1,000 concurrent requests apart", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, reply } = yield* setup()
      const fiber = yield* Effect.fork(
        Effect.forEach(Array.from({ length: 1000 }, (_, n) => n), (n) => peer.request("echo", { n }), {
          concurrency: "unbounded"
        })
      )
      const requests = yield* Effect.forEach(Array.from({ length: 1000 }), () => nextRequest)
      expect(new Set(requests.map((request) => request.id)).size).toBe(1000)
      // Answer in a scrambled order.
      const order = requests.map((request, i) => ({ request, key: (i * 7919) % 1000 })).sort((a, b) => a.key - b.key)
      for (const { request } of order) yield* reply(request.id, { n: request.params!.n })
      const results = yield* Fiber.join(fiber)
      expect(results.map((result) => result.n)).toEqual(Array.from({ length: 1000 }, (_, n) => n))
      expect(peer.inFlight()).toBe(0)
    }))

  it.scoped("turns an error response into a Protocol error", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, server } = yield* setup()
      const fiber = yield* Effect.fork(peer.request("tools/call"))
      const request = yield* nextRequest
      yield* server.send({
        jsonrpc: "2.0",
        id: request.id,
        error: { code: -32602, message: "bad args", data: { x: 1 } }
      })
      const error = failure(yield* Fiber.await(fiber))
      expect(error.reason).toMatchObject({ _tag: "Protocol", method: "tools/call", code: -32602, data: { x: 1 } })
      expect(error.message).toBe("server 'srv' answered tools/call with error -32602: bad args")
    }))

  it.scoped("times out after the timeout and sends notifications/cancelled", () =>
    Effect.gen(function*() {
      const { next, nextRequest, peer } = yield* setup()
      const fiber = yield* Effect.fork(peer.request("slow", {}, { timeout: "5 seconds" }))
      const request = yield* nextRequest
      yield* TestClock.adjust("4999 millis")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      const error = failure(yield* Fiber.await(fiber))
      expect(error.reason).toMatchObject({ _tag: "Timeout", method: "slow", afterMs: 5000, kind: "idle" })
      expect(error.message).toBe("server 'srv' did not answer slow within 5000 ms")
      expect(yield* next).toMatchObject({
        method: "notifications/cancelled",
        params: { requestId: request.id }
      })
      expect(peer.inFlight()).toBe(0)
    }))

  it.scoped("times out after the default of 60 seconds", () =>
    Effect.gen(function*() {
      const { nextRequest, peer } = yield* setup()
      const fiber = yield* Effect.fork(peer.request("slow"))
      yield* nextRequest
      yield* TestClock.adjust("59 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 seconds")
      expect(failure(yield* Fiber.await(fiber)).reason._tag).toBe("Timeout")
    }))

  it.scoped("resets the timeout on progress, without a progress callback", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, server } = yield* setup()
      const fiber = yield* Effect.fork(
        peer.request("slow", { a: 1 }, { timeout: "10 seconds", resetTimeoutOnProgress: true })
      )
      const request = yield* nextRequest
      const token = (request.params!._meta as { progressToken: JsonRpc.RequestId }).progressToken
      expect(token).toBe(request.id)
      expect(request.params!.a).toBe(1)
      yield* TestClock.adjust("8 seconds")
      yield* server.send({
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: token, progress: 1 }
      })
      yield* Effect.yieldNow()
      yield* TestClock.adjust("9 seconds") // 17 s in all, 9 s since progress
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 seconds")
      expect(failure(yield* Fiber.await(fiber)).reason).toMatchObject({ _tag: "Timeout", kind: "idle" })
    }))

  it.scoped("does not reset the timeout on progress unless asked", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, server } = yield* setup()
      const progress: Array<Peer.Progress> = []
      const fiber = yield* Effect.fork(
        peer.request("slow", {}, {
          timeout: "10 seconds",
          onProgress: (p) => Effect.sync(() => progress.push(p))
        })
      )
      const request = yield* nextRequest
      yield* TestClock.adjust("8 seconds")
      yield* server.send({
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: request.id, progress: 5, total: 10, message: "half" }
      })
      yield* Effect.yieldNow()
      yield* TestClock.adjust("2 seconds")
      expect(failure(yield* Fiber.await(fiber)).reason._tag).toBe("Timeout")
      expect(progress).toEqual([{ progress: 5, total: 10, message: "half" }])
    }))

  it.scoped("enforces the maximum total timeout even with progress", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, server } = yield* setup()
      const fiber = yield* Effect.fork(
        peer.request("slow", {}, { timeout: "10 seconds", maxTotalTimeout: "25 seconds", resetTimeoutOnProgress: true })
      )
      const request = yield* nextRequest
      for (let i = 1; i <= 4; i++) {
        yield* TestClock.adjust("6 seconds")
        yield* server.send({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: request.id, progress: i }
        })
        yield* Effect.yieldNow()
      }
      // 24 s in: progress keeps the idle timeout away, but the total is near.
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 seconds")
      const error = failure(yield* Fiber.await(fiber))
      expect(error.reason).toMatchObject({ _tag: "Timeout", kind: "total", afterMs: 25000 })
      expect(error.message).toBe("server 'srv' did not finish slow within its maximum of 25000 ms")
    }))

  it.scoped("sends notifications/cancelled on interruption and ignores the late answer", () =>
    Effect.gen(function*() {
      const logs: Array<unknown> = []
      yield* Effect.gen(function*() {
        const { next, nextRequest, peer, reply } = yield* setup()
        const fiber = yield* Effect.fork(peer.request("slow"))
        const request = yield* nextRequest
        yield* Fiber.interrupt(fiber)
        expect(yield* next).toEqual({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: request.id, reason: "The request was cancelled by the client" }
        })
        yield* reply(request.id, { late: true })
        // The session goes on.
        const second = yield* Effect.fork(peer.request("ping"))
        const ping = yield* nextRequest
        yield* reply(ping.id, {})
        expect(yield* Fiber.join(second)).toEqual({})
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(message)))))
      // The late answer was expected, so it was not reported as unknown.
      expect(logs).toEqual([])
    }))

  it.scoped("never cancels initialize", () =>
    Effect.gen(function*() {
      const { inbox, nextRequest, peer } = yield* setup()
      const fiber = yield* Effect.fork(peer.request("initialize", {}))
      yield* nextRequest
      yield* Fiber.interrupt(fiber)
      const ping = yield* Effect.fork(peer.request("ping"))
      // The next message is the ping: no cancellation came before it.
      expect((yield* nextRequest).method).toBe("ping")
      expect(yield* Queue.size(inbox)).toBe(0)
      yield* Fiber.interrupt(ping)
    }))

  it.scoped("fails every pending request at once when the transport ends", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, server } = yield* setup()
      const fibers = yield* Effect.forEach(["tools/call", "resources/read"], (method) =>
        Effect.fork(peer.request(method)))
      yield* nextRequest
      yield* nextRequest
      yield* server.close
      const errors = yield* Effect.forEach(fibers, (fiber) =>
        Effect.map(Fiber.await(fiber), failure))
      expect(errors.map((error) => error.reason)).toMatchObject([
        { _tag: "Closed", method: "tools/call" },
        { _tag: "Closed", method: "resources/read" }
      ])
      expect(errors[0]!.message).toBe("server 'srv': the peer closed the connection before answering tools/call")
      // The server may have seen those: they are not marked unsent.
      expect(errors.map((error) => error.unsent)).toEqual([false, false])
      // Later requests fail at once too, as never sent.
      const later = failure(yield* Effect.exit(peer.request("ping")))
      expect(later.reason).toMatchObject({ _tag: "Closed", method: "ping", unsent: true })
      expect(later.message).toBe("server 'srv': the peer closed the connection (ping was not sent)")
      expect((yield* peer.closed).reason._tag).toBe("Closed")
    }))

  it.scoped("tells its owner of the end synchronously, before waiting requests resume", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const { nextRequest, peer, server } = yield* setup({
        onClosed: (error) => void seen.push(`closed: ${error.message}`)
      })
      const call = yield* Effect.fork(
        Effect.tapError(peer.request("tools/call"), () => Effect.sync(() => seen.push("failed")))
      )
      yield* nextRequest
      yield* server.close
      yield* Fiber.await(call)
      expect(seen).toEqual(["closed: server 'srv': the peer closed the connection", "failed"])
    }))

  it.scoped("a request its transport refuses as closed fails unsent; after an oversize message too", () =>
    Effect.gen(function*() {
      // A memory end refuses sends at once when hung up, before its receiver hears of it.
      const { client, peer } = yield* setup()
      yield* client.close
      const refused = failure(yield* Effect.exit(peer.request("tools/call")))
      expect(refused.reason).toMatchObject({ _tag: "Closed", method: "tools/call", unsent: true })
      // A connection ended by another error refuses with a Closed error that says which.
      let receiver: Receiver | undefined
      const transport: Transport = {
        server: "srv",
        kind: "test",
        send: () => Effect.void,
        listen: (r) => receiver = r,
        info: () => ({})
      }
      const limited = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
      receiver!.closed(McpError.limit("srv", { what: "a message", size: 20, limit: 10 }))
      const after = failure(yield* Effect.exit(limited.request("tools/call")))
      expect(after.unsent).toBe(true)
      expect(after.message).toBe(
        "server 'srv': the connection had ended: a message of 20 exceeds the limit of 10 (tools/call was not sent)"
      )
    }))

  it.scoped("reports a response with an unknown id and goes on", () =>
    Effect.gen(function*() {
      const warnings: Array<string> = []
      const logger = Logger.make(({ message }) => {
        warnings.push(String(Array.isArray(message) ? message.join(" ") : message))
      })
      yield* Effect.gen(function*() {
        const { nextRequest, peer, reply, server } = yield* setup()
        yield* server.send({ jsonrpc: "2.0", id: 999, result: {} })
        const fiber = yield* Effect.fork(peer.request("ping"))
        const request = yield* nextRequest
        yield* reply(request.id, {})
        expect(yield* Fiber.join(fiber)).toEqual({})
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      expect(warnings).toContain("server 'srv' sent a response for unknown request id 999")
    }))

  it.scoped("answers ping by default and unknown methods with -32601", () =>
    Effect.gen(function*() {
      const { next, server } = yield* setup()
      yield* server.send({ jsonrpc: "2.0", id: "p", method: "ping" })
      expect(yield* next).toEqual({ jsonrpc: "2.0", id: "p", result: {} })
      yield* server.send({ jsonrpc: "2.0", id: 7, method: "sampling/createMessage", params: {} })
      expect(yield* next).toEqual({
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32601, message: "Method not found: sampling/createMessage" }
      })
    }))

  it.scoped("runs handlers for incoming requests and stops one on notifications/cancelled", () =>
    Effect.gen(function*() {
      const { next, server } = yield* setup({
        handlers: {
          "roots/list": () => Effect.succeed({ roots: [] }),
          "elicitation/create": () =>
            Effect.fail(new Peer.HandlerError({ code: -32000, message: "declined", data: { why: "test" } })),
          "sampling/createMessage": () => Effect.never
        }
      })
      yield* server.send({ jsonrpc: "2.0", id: 1, method: "sampling/createMessage", params: {} })
      yield* server.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } })
      yield* server.send({ jsonrpc: "2.0", id: 2, method: "roots/list" })
      expect(yield* next).toEqual({ jsonrpc: "2.0", id: 2, result: { roots: [] } })
      yield* server.send({ jsonrpc: "2.0", id: 3, method: "elicitation/create" })
      // No answer for the cancelled request 1 came before this one.
      expect(yield* next).toEqual({
        jsonrpc: "2.0",
        id: 3,
        error: { code: -32000, message: "declined", data: { why: "test" } }
      })
    }))

  it.scoped("tells a handler which of our requests its request came with, also for one delivered before listen", () =>
    Effect.gen(function*() {
      const inbox = new Inbox("srv")
      const sent = yield* Queue.unbounded<JsonRpc.Message>()
      const transport: Transport = {
        server: "srv",
        kind: "test",
        send: (message) => Queue.offer(sent, message),
        listen: inbox.listen,
        info: () => ({})
      }
      // Before the Peer listens: kept with its relation.
      inbox.deliver({ jsonrpc: "2.0", id: "early", method: "roots/list" }, 3)
      yield* Peer.make({
        handlers: { "roots/list": (_request, related) => Effect.succeed({ roots: [], related: related ?? "none" }) }
      }).pipe(Effect.provideService(Transport, transport))
      inbox.deliver({ jsonrpc: "2.0", id: "late", method: "roots/list" }, 5)
      inbox.deliver({ jsonrpc: "2.0", id: "alone", method: "roots/list" })
      const answers = (yield* Effect.all([Queue.take(sent), Queue.take(sent), Queue.take(sent)])) as Array<
        JsonRpc.Success
      >
      expect(Object.fromEntries(answers.map((answer) => [answer.id, answer.result.related])))
        .toEqual({ early: 3, late: 5, alone: "none" })
    }))

  it.scoped("fails a request at once when its answer is broken, quoting it; other ids are ignored", () =>
    Effect.gen(function*() {
      let receiver: Receiver | undefined
      const transport: Transport = {
        server: "srv",
        kind: "test",
        send: () => Effect.void,
        listen: (r) => void (receiver = r),
        info: () => ({})
      }
      const peer = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
      const fiber = yield* Effect.fork(peer.request("tools/call"))
      yield* Effect.yieldNow()
      const problem = { reason: `not a JSON-RPC message: "result" must be an object`, excerpt: `{"id":0,"result":1}` }
      receiver!.message(new BrokenAnswer(99, problem))
      expect(peer.inFlight()).toBe(1)
      receiver!.message(new BrokenAnswer(0, problem))
      const error = failure(yield* Fiber.await(fiber))
      expect(error.reason).toMatchObject({ _tag: "Protocol", method: "tools/call", code: -32603 })
      expect(error.message).toBe(
        `server 'srv' answered tools/call with error -32603: its answer is not a JSON-RPC message: "result" must be an object: {"id":0,"result":1}`
      )
    }))

  it.scoped("answers -32601 to methods named after Object.prototype members, and goes on", () =>
    Effect.gen(function*() {
      const { next, nextRequest, peer, reply, server } = yield* setup()
      const names = ["constructor", "__proto__", "toString", "hasOwnProperty"]
      for (const [id, method] of names.entries()) yield* server.send({ jsonrpc: "2.0", id, method })
      for (const [id, method] of names.entries()) {
        expect(yield* next).toEqual({
          jsonrpc: "2.0",
          id,
          error: { code: -32601, message: `Method not found: ${method}` }
        })
      }
      const fiber = yield* Effect.fork(peer.request("tools/list"))
      yield* reply((yield* nextRequest).id, { tools: [] })
      expect(yield* Fiber.join(fiber)).toEqual({ tools: [] })
    }))

  it.scoped("publishes notifications to subscribers", () =>
    Effect.gen(function*() {
      const { peer, server } = yield* setup()
      const subscription = yield* peer.subscribe
      yield* server.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
      yield* server.send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hi" } })
      expect(yield* Queue.take(subscription)).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
      expect((yield* Queue.take(subscription)).method).toBe("notifications/message")
    }))

  it.scoped("takes an answer that comes before the send returns", () =>
    Effect.gen(function*() {
      // Like an HTTP POST whose response carries the answer: it is read before send returns.
      let receiver: Receiver | undefined
      // eslint-disable-next-line prefer-const -- read by the transport before it is assigned below
      let peer: Peer.Peer | undefined
      const transport: Transport = {
        server: "srv",
        kind: "test",
        send: (message) =>
          Effect.sync(() => {
            if (JsonRpc.isRequest(message)) {
              receiver!.message({ jsonrpc: "2.0", id: message.id, result: { method: message.method } })
              expect(peer!.inFlight()).toBe(0)
            }
          }),
        listen: (given) => void (receiver = given),
        info: () => ({})
      }
      peer = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
      expect(yield* peer.request("early")).toEqual({ method: "early" })
      expect(peer.inFlight()).toBe(0)
    }))

  it.scoped("forgets a request whose send fails, without cancelling it", () =>
    Effect.gen(function*() {
      const sent: Array<JsonRpc.Message> = []
      const refused = McpError.transport("srv", { message: "refused" })
      const transport: Transport = {
        server: "srv",
        kind: "test",
        send: (message) => Effect.suspend(() => (sent.push(message), Effect.fail(refused))),
        listen: () => {},
        info: () => ({})
      }
      const peer = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
      expect(failure(yield* Effect.exit(peer.request("tools/call")))).toBe(refused)
      expect(peer.inFlight()).toBe(0)
      expect(sent.map((message) => "method" in message && message.method)).toEqual(["tools/call"])
    }))

  it.scoped("cancels a request interrupted while its send is under way", () =>
    Effect.gen(function*() {
      const notified: Array<JsonRpc.Message> = []
      const transport: Transport = {
        server: "srv",
        kind: "test",
        send: (message) => JsonRpc.isRequest(message) ? Effect.never : Effect.sync(() => notified.push(message)),
        listen: () => {},
        info: () => ({})
      }
      const peer = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
      const fiber = yield* Effect.fork(peer.request("tools/call"))
      yield* Effect.yieldNow()
      expect(peer.inFlight()).toBe(1)
      yield* Fiber.interrupt(fiber)
      expect(peer.inFlight()).toBe(0)
      expect(notified).toEqual([{
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 0, reason: "The request was cancelled by the client" }
      }])
    }))

  it.scoped("fails pending requests with a Closed error when its scope closes", () =>
    Effect.gen(function*() {
      const [client] = yield* Memory.makePair({ server: "srv" })
      const closing = yield* Effect.gen(function*() {
        const peer = yield* Peer.make().pipe(Effect.provideService(Transport, client))
        return yield* Effect.fork(peer.request("slow"))
      }).pipe(Effect.scoped)
      const error = failure(yield* Fiber.await(closing))
      expect(error.reason).toMatchObject({ _tag: "Closed", method: "slow" })
    }))
})
