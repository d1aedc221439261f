// A request's answer waits for the callbacks of the progress that came before it: a caller
// forwarding progress (the gateway) has it out before the answer, however long forwarding takes.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { peerPair } from "./support/peerPair.js"

// The server's side: progress for the request sent, then its answer at once.
const progressThenAnswer = ({ nextRequest, reply, server }: Effect.Effect.Success<ReturnType<typeof peerPair>>) =>
  Effect.gen(function*() {
    const request = yield* nextRequest
    const token = (request.params!._meta as { progressToken: number }).progressToken
    yield* server.send({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: token, progress: 1 }
    })
    yield* reply(request.id, { content: [] })
  })

describe("Peer: progress before the answer", () => {
  it.scoped("delivers an answer only once its progress callbacks have ended", () =>
    Effect.gen(function*() {
      const pair = yield* peerPair()
      const { peer } = pair
      const events: Array<string> = []
      const gate = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        peer.request("tools/call", {}, {
          // Forwarding that takes a while: it waits for the gate.
          onProgress: (progress) =>
            Effect.gen(function*() {
              yield* Deferred.succeed(started, undefined)
              yield* Deferred.await(gate)
              events.push(`progress ${progress.progress}`)
            })
        }).pipe(Effect.tap(() => Effect.sync(() => events.push("answer"))))
      )
      yield* progressThenAnswer(pair)
      yield* Deferred.await(started)
      // The answer is in, but not delivered while the callback runs.
      for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
      expect(events).toEqual([])
      expect(peer.inFlight()).toBe(0)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(fiber)).toEqual({ content: [] })
      expect(events).toEqual(["progress 1", "answer"])
    }))

  it.scoped("hands over an answer held when the session closes under a callback that never ends", () =>
    Effect.gen(function*() {
      const pair = yield* peerPair()
      const { peer, server } = pair
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(peer.request("tools/call", {}, {
        onProgress: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
      }))
      yield* progressThenAnswer(pair)
      yield* Deferred.await(started)
      yield* server.close
      // The answer had come: the caller gets it rather than the closed session's error.
      expect(yield* Fiber.join(fiber)).toEqual({ content: [] })
    }))
})
