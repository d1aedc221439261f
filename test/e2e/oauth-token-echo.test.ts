// An OAuth access token is a secret of the server it was issued for from the moment the fleet
// holds it: a server that echoes the token it was sent, in a tool's result, in a progress
// message or in a log, shows `***` wherever the fleet passes that on.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as OAuth from "../../src/OAuth.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { firstText } from "../../src/testing/Results.js"
// @ts-expect-error: a JavaScript fixture without types
import { start } from "../fixtures/oauth-server.mjs"
import { stateOf, until } from "../support/events.js"
import { json, mcp, serve, status } from "../support/httpServer.js"
import { Platform } from "../support/platform.js"

interface AuthServer {
  readonly base: string
  readonly state: { access: string | undefined }
  readonly close: () => Promise<void>
}

const authServer = Effect.acquireRelease(
  Effect.promise(() => start() as Promise<AuthServer>),
  (server) => Effect.promise(() => server.close())
)

describe("an OAuth token echoed by its server", () => {
  it.scopedLive("is masked in the call's result", () =>
    Effect.gen(function*() {
      const as = yield* authServer
      const server = mcp()
      let origin = ""
      const resource = yield* serve((request) => {
        if (request.url === "/.well-known/oauth-protected-resource/mcp") {
          return Effect.succeed(json({ resource: `${origin}/mcp`, authorization_servers: [as.base] }))
        }
        const token = request.headers["authorization"]?.replace(/^Bearer /, "")
        if (token === undefined || token !== as.state.access) {
          return Effect.succeed(status(401, "", {
            "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`
          }))
        }
        const body = (request.body ?? {}) as { method?: string; id?: number }
        return body.method === "tools/call"
          ? Effect.succeed(
            json({ jsonrpc: "2.0", id: body.id, result: { content: [{ type: "text", text: `you sent ${token}` }] } })
          )
          : server.handler(request)
      })
      origin = new URL(resource.url).origin
      const fleet = yield* ServerRegistry.make()
      const events = yield* fleet.subscribe
      yield* fleet.reconcile([{ name: "remote", transport: { type: "http", url: resource.url } }])
      yield* until(events, stateOf("remote", "NeedsAuth"))
      yield* fleet.authorize("remote").pipe(Effect.provide(OAuth.layerHeadless))
      yield* until(events, stateOf("remote", "Ready"))

      const result = yield* fleet.callTool("mcp__remote__echo", { text: "x" })
      expect(as.state.access).toMatch(/\S{8,}/)
      expect(firstText(result)).toBe("you sent ***")
      expect(JSON.stringify(result)).not.toContain(as.state.access!)
    }).pipe(Effect.provide(Platform), Effect.provide(OAuth.layerMemoryStore)), 30_000)
})
