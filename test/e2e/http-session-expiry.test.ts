// A Streamable HTTP server forgets the session (404) while calls are in flight: the calls it
// had taken are answered on the old session, those it refused (not run) are sent again on
// the next one, and no call runs twice.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { firstText } from "../../src/testing/Results.js"
import { stateOf, until } from "../support/events.js"
import { mcp, serve } from "../support/httpServer.js"
import { Platform } from "../support/platform.js"

describe("HTTP session expiry with calls in flight", () => {
  it.scopedLive("every caller sees its result; a refused call is sent again, none runs twice", () =>
    Effect.gen(function*() {
      const server = mcp()
      const ran: Array<string> = []
      const arrived = yield* Queue.unbounded<void>()
      const release = yield* Deferred.make<void>()
      const fixture = yield* serve((request) => {
        const known = server.sessions.has(request.headers["mcp-session-id"] ?? "")
        if (request.body?.method !== "tools/call" || !known) return server.handler(request)
        ran.push(request.body.params.arguments.text)
        // Calls the server took stay in flight until the test lets them finish.
        return Queue.offer(arrived, undefined).pipe(
          Effect.zipRight(Deferred.await(release)),
          Effect.zipRight(server.handler(request))
        )
      })
      const fleet = yield* ServerRegistry.make({
        restart: { initialDelay: "20 millis", maxDelay: "100 millis", factor: 2, jitter: 0, stableAfter: "1 minute" }
      })
      const events = yield* fleet.subscribe
      yield* fleet.reconcile([{ name: "remote", transport: { type: "http", url: fixture.url } }])
      yield* until(events, stateOf("remote", "Ready"))
      const call = (i: number) => fleet.callTool("mcp__remote__echo", { text: `call ${i}` })
      const taken = yield* Effect.fork(
        Effect.forEach([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], call, { concurrency: "unbounded" })
      )
      yield* Effect.forEach([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], () => Queue.take(arrived))
      // The server forgets the session with ten calls in flight; twenty more are refused.
      server.sessions.clear()
      const refused = yield* Effect.fork(
        Effect.forEach(Array.from({ length: 20 }, (_, i) => i + 10), call, { concurrency: "unbounded" })
      )
      yield* Deferred.succeed(release, undefined)
      const results = [...(yield* Fiber.join(taken)), ...(yield* Fiber.join(refused))]
      expect(results.map(firstText)).toEqual(Array.from({ length: 30 }, (_, i) => `call ${i}`))
      expect([...ran].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `call ${i}`).sort())
      expect(fixture.seen.filter((request) => request.body?.method === "initialize")).toHaveLength(2)
    }).pipe(Effect.provide(Platform)))
})
