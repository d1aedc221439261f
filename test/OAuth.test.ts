// The OAuth client against the fixture authorization server: discovery, registration, the code
// grant and refresh, revocation, the file store. Two processes refreshing one rotating token is
// test/e2e/oauth-refresh.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs"
import * as path from "node:path"
import * as NodeOAuth from "../src/NodeOAuth.js"
import * as OAuth from "../src/OAuth.js"
import { tempDir } from "../src/testing/node.js"
// @ts-expect-error: a JavaScript fixture without types
import { start } from "./fixtures/oauth-server.mjs"

interface Fixture {
  readonly base: string
  readonly state: { refreshes: number; registrations: number }
  readonly revoke: () => void
  readonly close: () => Promise<void>
}

const fixture = Effect.acquireRelease(
  Effect.promise(() => start() as Promise<Fixture>),
  (server) => Effect.promise(() => server.close())
)

const challenge = (base: string): OAuth.Refusal => ({
  status: 401,
  wwwAuthenticate: `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`
})

const reveal = (token: Option.Option<Redacted.Redacted<string>>) => Option.map(token, Redacted.value)

describe("OAuth", () => {
  it.scoped("authorizes after a 401: discovery, registration, PKCE code grant; then refreshes", () =>
    Effect.gen(function*() {
      const server = yield* fixture
      const url = `${server.base}/mcp`
      const auth = yield* OAuth.make({ server: "remote", url })
      expect(yield* auth.accessToken).toEqual(Option.none())
      yield* auth.recover(challenge(server.base))
      expect(server.state.registrations).toBe(1)
      // The code grant's token expires in 30 s: it is refreshed before it is sent.
      expect(reveal(yield* auth.accessToken)).toEqual(Option.some("at-2-secret"))
      expect(server.state.refreshes).toBe(1)
      expect(reveal(yield* auth.accessToken)).toEqual(Option.some("at-2-secret"))
      expect(server.state.refreshes).toBe(1)
    }).pipe(Effect.provide(OAuth.layerMemoryStore), Effect.provide(OAuth.layerHeadless)))

  it.scoped("a revoked grant: no token to send, and the stored one is gone", () =>
    Effect.gen(function*() {
      const server = yield* fixture
      const auth = yield* OAuth.make({ server: "remote", url: `${server.base}/mcp` })
      yield* auth.recover(challenge(server.base))
      server.revoke()
      expect(yield* auth.accessToken).toEqual(Option.none())
      const store = yield* OAuth.TokenStore
      expect(yield* store.listTokens).toEqual([])
    }).pipe(Effect.provide(OAuth.layerMemoryStore), Effect.provide(OAuth.layerHeadless)))

  it.scoped("refuses protected-resource metadata for another resource", () =>
    Effect.gen(function*() {
      const server = yield* fixture
      // The fixture's metadata names /mcp; this server is at /other.
      const auth = yield* OAuth.make({ server: "remote", url: `${server.base}/other` })
      const error = yield* Effect.flip(auth.recover(challenge(server.base)))
      expect(error.step).toBe("discovery")
      expect(error.message).toContain("not this server's URL")
    }).pipe(Effect.provide(OAuth.layerMemoryStore), Effect.provide(OAuth.layerHeadless)))

  it.scoped("the file store: mode 0600 files in a 0700 directory, and no secret in its errors", () =>
    Effect.gen(function*() {
      const server = yield* fixture
      const dir = path.join(yield* tempDir(), "oauth")
      const auth = yield* OAuth.make({ server: "remote", url: `${server.base}/mcp` }).pipe(
        Effect.provide(NodeOAuth.layerFileStore(dir))
      )
      yield* auth.recover(challenge(server.base))
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
      const files = fs.readdirSync(dir)
      expect(files.some((name) => name.startsWith("tokens-"))).toBe(true)
      for (const name of files) expect(fs.statSync(path.join(dir, name)).mode & 0o777).toBe(0o600)
      // A broken file is reported without its content.
      const tokens = files.find((name) => name.startsWith("tokens-"))!
      fs.writeFileSync(path.join(dir, tokens), "at-1-secret {")
      const error = yield* Effect.flip(auth.accessToken)
      expect(error.message).not.toContain("at-1-secret")
      expect(String(error)).not.toContain("secret {")
    }).pipe(Effect.provide(OAuth.layerHeadless)))
})
