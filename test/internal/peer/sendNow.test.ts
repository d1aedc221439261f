import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as McpError from "../../../src/McpError.js"
import type * as Peer from "../../../src/Peer.js"
import { failure } from "../../../src/testing/Results.js"
import { peerPair } from "../../support/peerPair.js"

// The Peer's path for a transport that sends at once (stdio): one Effect.async per request.
// A memory pair's client end with a `sendNow`, which `refuse` can make refuse messages.
const setup = (options?: Peer.Options) =>
  Effect.gen(function*() {
    let refuse: McpError.McpError | undefined
    const pair = yield* peerPair(options, (client) => ({
      ...client,
      sendNow: (message) => {
        if (refuse !== undefined) return refuse
        const sent = Effect.runSync(Effect.either(client.send(message)))
        return Either.isLeft(sent) ? sent.left : undefined
      }
    }))
    const { nextRequest, peer } = pair
    // A request made in a fiber of its own, and the message the server got for it.
    const sent = (method: string, options?: Peer.RequestOptions) =>
      Effect.zip(Effect.fork(peer.request(method, undefined, options)), nextRequest)
    return { ...pair, sent, refuseWith: (error: McpError.McpError) => void (refuse = error) }
  })

describe("Peer over a transport with sendNow", () => {
  it.scoped("correlates requests with their answers, the same Effect run twice making two requests", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, reply } = yield* setup()
      const echo = peer.request("echo", { n: 1 }, { onProgress: () => Effect.void })
      const fibers = yield* Effect.forEach([0, 1], () => Effect.fork(echo))
      const requests = yield* Effect.forEach([0, 1], () => nextRequest)
      expect(requests.map((request) => request.id)).toEqual([0, 1])
      expect(requests[1]!.params).toEqual({ n: 1, _meta: { progressToken: 1 } })
      for (const request of requests.reverse()) yield* reply(request.id, { id: request.id })
      expect(yield* Effect.forEach(fibers, Fiber.join)).toEqual([{ id: 0 }, { id: 1 }])
      expect(peer.inFlight()).toBe(0)
    }))

  it.scoped("sends notifications/cancelled when the caller is interrupted", () =>
    Effect.gen(function*() {
      const { next, peer, sent } = yield* setup()
      const [fiber, { id }] = yield* sent("slow")
      yield* Fiber.interrupt(fiber)
      const reason = "The request was cancelled by the client"
      expect(yield* next).toEqual({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason }
      })
      expect(peer.inFlight()).toBe(0)
    }))

  it.scoped("times out with a Timeout error and cancels the request", () =>
    Effect.gen(function*() {
      const { next, sent } = yield* setup()
      const [fiber, request] = yield* sent("slow", { timeout: "1 second" })
      yield* TestClock.adjust("2 seconds")
      expect(failure(yield* Fiber.await(fiber)).reason).toMatchObject({ _tag: "Timeout", method: "slow" })
      expect(yield* next).toMatchObject({ method: "notifications/cancelled", params: { requestId: request.id } })
    }))

  it.scoped("fails a request the transport refused as unsent, and forgets it", () =>
    Effect.gen(function*() {
      const { peer, refuseWith } = yield* setup()
      refuseWith(McpError.closed("srv", { message: "the connection is closed" }))
      const error = failure(yield* Effect.exit(peer.request("tools/list")))
      expect(error.reason).toMatchObject({ _tag: "Closed", method: "tools/list", unsent: true })
      expect(peer.inFlight()).toBe(0)
    }))

  it.scoped("fails requests in flight when the connection ends, and later ones as unsent", () =>
    Effect.gen(function*() {
      const { client, peer, sent } = yield* setup()
      const [fiber] = yield* sent("slow")
      yield* client.close
      expect(failure(yield* Fiber.await(fiber)).reason).toMatchObject({ _tag: "Closed", method: "slow" })
      yield* peer.closed
      const later = failure(yield* Effect.exit(peer.request("ping")))
      expect(later.reason).toMatchObject({ _tag: "Closed", method: "ping", unsent: true })
    }))
})
