// A request's `onAnswer` makes its result into what the caller gets, as the answer is read:
// over a transport that sends at once (stdio's `sendNow`) and over one that does not alike.
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as McpError from "../src/McpError.js"
import type { Transport } from "../src/Transport.js"
import { peerPair } from "./support/peerPair.js"

// The memory transport's client end with a `sendNow`, as stdio's: the Peer's other request path.
const withSendNow = (client: Transport): Transport => ({
  ...client,
  sendNow: (message) => {
    const exit = Effect.runSyncExit(client.send(message))
    return Exit.isSuccess(exit) ? undefined : Cause.squash(exit.cause) as McpError.McpError
  }
})

const paths = [["send", (client: Transport) => client], ["sendNow", withSendNow]] as const

describe("Peer: onAnswer", () => {
  for (const [path, transport] of paths) {
    it.scoped(`gives the caller what the mapping made of the result (${path})`, () =>
      Effect.gen(function*() {
        const { nextRequest, peer, reply } = yield* peerPair(undefined, transport)
        const fiber = yield* Effect.fork(
          peer.request("tools/call", { name: "echo" }, { onAnswer: (result) => Effect.succeed({ mapped: result }) })
        )
        const request = yield* nextRequest
        yield* reply(request.id, { content: [] })
        expect(yield* Fiber.join(fiber)).toEqual({ mapped: { content: [] } })
      }))

    it.scoped(`fails the request with the mapping's error, and the session goes on (${path})`, () =>
      Effect.gen(function*() {
        const { nextRequest, peer, reply } = yield* peerPair(undefined, transport)
        const invalid = McpError.validation("srv", { method: "tools/call", message: "not a tool result" })
        const fiber = yield* Effect.fork(
          Effect.flip(peer.request("tools/call", {}, { onAnswer: () => Effect.fail(invalid) }))
        )
        yield* Effect.flatMap(nextRequest, (request) => reply(request.id, { nonsense: true }))
        expect(yield* Fiber.join(fiber)).toBe(invalid)
        const next = yield* Effect.fork(peer.request("ping"))
        yield* Effect.flatMap(nextRequest, (request) => reply(request.id, {}))
        expect(yield* Fiber.join(next)).toEqual({})
      }))
  }

  it.scoped("turns a mapping that throws into a defect of that request only", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, reply } = yield* peerPair(undefined, withSendNow)
      const fiber = yield* Effect.fork(Effect.exit(peer.request("tools/call", {}, {
        onAnswer: () => {
          throw new Error("bug in the mapping")
        }
      })))
      yield* Effect.flatMap(nextRequest, (request) => reply(request.id, {}))
      const exit = yield* Fiber.join(fiber)
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      // The connection did not end with it.
      const next = yield* Effect.fork(peer.request("ping"))
      yield* Effect.flatMap(nextRequest, (request) => reply(request.id, { still: "open" }))
      expect(yield* Fiber.join(next)).toEqual({ still: "open" })
    }))

  it.scoped("does not map an error answer", () =>
    Effect.gen(function*() {
      const { nextRequest, peer, server } = yield* peerPair(undefined, withSendNow)
      let mapped = 0
      const fiber = yield* Effect.fork(Effect.flip(peer.request("tools/call", {}, {
        onAnswer: (result) =>
          Effect.sync(() => {
            mapped++
            return result
          })
      })))
      const request = yield* nextRequest
      yield* server.send({ jsonrpc: "2.0", id: request.id, error: { code: -32602, message: "unknown tool" } })
      const error = yield* Fiber.join(fiber)
      expect(error.reason._tag).toBe("Protocol")
      expect(mapped).toBe(0)
    }))
})
