import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as OAuth from "../../src/OAuth.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { failure, firstText } from "../../src/testing/Results.js"
// @ts-expect-error: a JavaScript fixture without types
import { start } from "../fixtures/oauth-server.mjs"
import { stateOf, until } from "../support/events.js"
import { json, mcp, serve, status } from "../support/httpServer.js"
import { Platform } from "../support/platform.js"

interface AuthServer {
  readonly base: string
  readonly state: { access: string | undefined; refreshes: number }
  readonly revoke: () => void
  readonly close: () => Promise<void>
}

const authServer = Effect.acquireRelease(
  Effect.promise(() => start() as Promise<AuthServer>),
  (server) => Effect.promise(() => server.close())
)

describe("a fleet with an OAuth server", () => {
  it.scopedLive(
    "NeedsAuth with the URL → authorize → Ready → refreshed after a 401 → revoked → NeedsAuth",
    () =>
      Effect.gen(function*() {
        const as = yield* authServer
        const server = mcp()
        // Tokens the resource no longer takes (expired or revoked at the server).
        const stale = new Set<string>()
        let origin = ""
        const resource = yield* serve((request) => {
          if (request.url === "/.well-known/oauth-protected-resource/mcp") {
            return Effect.succeed(json({ resource: `${origin}/mcp`, authorization_servers: [as.base] }))
          }
          const token = request.headers["authorization"]?.replace(/^Bearer /, "")
          if (token !== undefined && token === as.state.access && !stale.has(token)) return server.handler(request)
          return Effect.succeed(status(401, "", {
            "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`
          }))
        })
        origin = new URL(resource.url).origin
        const fleet = yield* ServerRegistry.make()
        const events = yield* fleet.subscribe
        yield* fleet.reconcile([{ name: "remote", transport: { type: "http", url: resource.url } }])

        const waiting = yield* until(events, stateOf("remote", "NeedsAuth"))
        expect(waiting.state._tag === "NeedsAuth" && waiting.state.authorizationUrl).toMatch(
          new RegExp(`^${as.base}/authorize\\?`)
        )

        yield* fleet.authorize("remote").pipe(Effect.provide(OAuth.layerHeadless))
        yield* until(events, stateOf("remote", "Ready"))
        expect(firstText(yield* fleet.callTool("mcp__remote__echo", { text: "one" }))).toBe("one")
        // The code grant's token expired within a minute: it was refreshed before it was sent.
        expect(as.state.refreshes).toBe(1)

        // The resource stops taking the token: the fleet refreshes and connects again by itself.
        stale.add(as.state.access!)
        const refused = failure(yield* Effect.exit(fleet.callTool("mcp__remote__echo", { text: "x" })))
        expect(refused.reason).toMatchObject({ _tag: "Http", status: 401 })
        yield* until(events, stateOf("remote", "Ready"))
        expect(as.state.refreshes).toBe(2)
        expect(firstText(yield* fleet.callTool("mcp__remote__echo", { text: "two" }))).toBe("two")

        // The grant is revoked: back to NeedsAuth, with the URL.
        as.revoke()
        stale.add(as.state.access!)
        yield* Effect.exit(fleet.callTool("mcp__remote__echo", { text: "y" }))
        const again = yield* until(events, stateOf("remote", "NeedsAuth"))
        expect(again.state._tag === "NeedsAuth" && again.state.authorizationUrl).toMatch(/\/authorize\?/)

        const shown = JSON.stringify([yield* fleet.status, again])
        expect(shown).not.toMatch(/at-\d+-secret|rt-\d+/)
      }).pipe(Effect.provide(Platform), Effect.provide(OAuth.layerMemoryStore)),
    30_000
  )
})
