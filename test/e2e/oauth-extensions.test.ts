// The OAuth extensions against the local authorization server fixture on 127.0.0.1: DPoP
// (RFC 9449) with nonces on the authorization server and on the resource, the key kept across
// a refresh; enterprise-managed authorization (ID-JAG token exchange, then the JWT bearer
// grant); a fleet in NeedsAuth that connects once another store instance writes a grant; a
// 401 on the standing GET stream (refresh, then NeedsAuth). No token or key in what a user sees.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import * as NodeOAuth from "../../src/NodeOAuth.js"
import * as OAuth from "../../src/OAuth.js"
import type { RegistryEvent } from "../../src/RegistryEvent.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { tempDir } from "../../src/testing/node.js"
import { firstText } from "../../src/testing/Results.js"
// @ts-expect-error: a JavaScript fixture without types
import { start, verifyProof } from "../fixtures/oauth-server.mjs"
import { stateOf, until } from "../support/events.js"
import { type Handler, json, mcp, type Seen, serve, status } from "../support/httpServer.js"
import { Platform } from "../support/platform.js"

interface AuthServer {
  readonly base: string
  readonly state: {
    access: string | undefined
    refreshes: number
    nonceChallenges: number
    exchanges: number
    bound: Map<string, string>
  }
  readonly close: () => Promise<void>
}

interface Checked {
  readonly ok: boolean
  readonly error?: string
  readonly jkt?: string
  readonly jti?: string
}

const check = verifyProof as (
  proof: string | undefined,
  expected: { method: string; url: string; token?: string; nonce?: string }
) => Checked

const authServer = (options: Record<string, unknown> = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => start(options) as Promise<AuthServer>),
    (server) => Effect.promise(() => server.close())
  )

const challenge = (base: string): OAuth.Refusal => ({
  status: 401,
  wwwAuthenticate: `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`
})

const RS_NONCE = "rs-nonce-1"

// A resource server on the fixture's tokens: its metadata names `as`; `accepts` decides
// which requests the MCP server answers, the rest get a 401 challenge (`extra` headers too).
const resource = (
  as: AuthServer,
  accepts: (request: Seen, url: string) => { readonly ok: boolean; readonly extra?: Record<string, string> }
) =>
  Effect.gen(function*() {
    const server = mcp()
    let origin = ""
    const handler: Handler = (request) => {
      if (request.url === "/.well-known/oauth-protected-resource/mcp") {
        return Effect.succeed(json({ resource: `${origin}/mcp`, authorization_servers: [as.base] }))
      }
      const verdict = accepts(request, `${origin}/mcp`)
      if (verdict.ok) return server.handler(request)
      return Effect.succeed(status(401, "", {
        "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
        ...verdict.extra
      }))
    }
    const fixture = yield* serve(handler)
    origin = new URL(fixture.url).origin
    return fixture
  })

// Every event of the fleet, kept as text, to search for secrets.
const recordEvents = (fleet: ServerRegistry.ServerRegistry) =>
  Effect.gen(function*() {
    const shown: Array<string> = []
    yield* fleet.events.pipe(
      Stream.runForEach((event: RegistryEvent) => Effect.sync(() => shown.push(JSON.stringify(event)))),
      Effect.forkScoped
    )
    return shown
  })

describe("OAuth extensions", () => {
  it.scoped("DPoP: the token request retried with the nonce; a bound token; its key kept across a refresh", () =>
    Effect.gen(function*() {
      const as = yield* authServer({ dpop: true })
      const url = `${as.base}/mcp`
      const auth = yield* OAuth.make({ server: "remote", url })
      yield* auth.recover(challenge(as.base))
      expect(as.state.nonceChallenges).toBe(1)
      // The code grant's token expires in 30 s: refreshed first, which the fixture takes
      // only with a proof by the key the first tokens were bound to.
      const credentials = Option.getOrThrow(yield* auth.credentials)
      expect(as.state.refreshes).toBe(1)
      const token = Redacted.value(credentials.token)
      expect(token).toBe("at-2-secret")
      const perRequest = credentials.perRequest!
      const first = perRequest.headers("POST", `${url}?x=1`)
      expect(first.authorization).toBe(`DPoP ${token}`)
      const proof = check(first.dpop, { method: "POST", url, token })
      expect(proof).toMatchObject({ ok: true, jkt: as.state.bound.get(token) })
      // A fresh proof per request; a resource's nonce challenge asks for one more try.
      expect(check(perRequest.headers("POST", url).dpop, { method: "POST", url }).jti).not.toBe(proof.jti)
      const header = (values: Record<string, string>) => (name: string) => values[name]
      expect(perRequest.answered(200, header({}))).toBe(false)
      expect(
        perRequest.answered(
          401,
          header({ "dpop-nonce": RS_NONCE, "www-authenticate": "DPoP error=\"use_dpop_nonce\"" })
        )
      )
        .toBe(true)
      expect(check(perRequest.headers("GET", url).dpop, { method: "GET", url, token, nonce: RS_NONCE }).ok).toBe(true)
    }).pipe(Effect.provide(OAuth.layerMemoryStore), Effect.provide(OAuth.layerHeadless)))

  it.scoped("oauth.dpop false: bearer tokens even where DPoP is offered", () =>
    Effect.gen(function*() {
      const as = yield* authServer({ dpop: true })
      const auth = yield* OAuth.make({ server: "remote", url: `${as.base}/mcp`, config: { dpop: false } })
      // The fixture requires a proof: without one the token request is refused.
      const error = yield* Effect.flip(auth.recover(challenge(as.base)))
      expect(error.step).toBe("token")
      expect(error.message).toContain("invalid_dpop_proof")
    }).pipe(Effect.provide(OAuth.layerMemoryStore), Effect.provide(OAuth.layerHeadless)))

  it.scoped("enterprise-managed authorization: the ID token exchanged for an ID-JAG, the ID-JAG for the token", () =>
    Effect.gen(function*() {
      const idToken = "id-token-7c1e-secret"
      const as = yield* authServer({ enterprise: { idToken, clientId: "fleet", clientSecret: "cs-41ad" } })
      const auth = yield* OAuth.make({
        server: "remote",
        url: `${as.base}/mcp`,
        config: {
          clientId: "fleet",
          clientSecret: Redacted.make("cs-41ad"),
          enterprise: { idpTokenEndpoint: `${as.base}/idp/token`, idToken: Redacted.make(idToken) }
        }
      })
      yield* auth.recover(challenge(as.base))
      expect(as.state.exchanges).toBe(1)
      expect(Option.map(yield* auth.accessToken, Redacted.value)).toEqual(Option.some("at-1-secret"))
      // A wrong ID token: the IdP refuses, and the error quotes neither token nor secret.
      const refused = yield* OAuth.make({
        server: "other",
        url: `${as.base}/mcp`,
        config: {
          clientId: "fleet",
          clientSecret: Redacted.make("cs-41ad"),
          enterprise: { idpTokenEndpoint: `${as.base}/idp/token`, idToken: Redacted.make("id-token-wrong") }
        }
      })
      const error = yield* Effect.flip(refused.recover(challenge(as.base)))
      expect(error.step).toBe("token")
      expect(JSON.stringify(error)).not.toMatch(/id-token|cs-41ad/)
    }).pipe(Effect.provide(OAuth.layerMemoryStore), Effect.provide(OAuth.layerHeadless)))

  it.scopedLive(
    "a fleet on a DPoP resource with nonces: proofs on every request, the key in the store file only",
    () =>
      Effect.gen(function*() {
        const as = yield* authServer({ dpop: true })
        const dir = yield* tempDir()
        const outcomes: Array<string> = []
        const jtis = new Set<string>()
        const server = yield* resource(as, (request, url) => {
          const given = request.headers["authorization"] ?? ""
          if (!given.startsWith("DPoP ")) return { ok: false }
          const token = given.slice("DPoP ".length)
          const proof = check(request.headers["dpop"], { method: request.method, url, token, nonce: RS_NONCE })
          if (!proof.ok && proof.error === "use_dpop_nonce") {
            outcomes.push("nonce")
            return { ok: false, extra: { "www-authenticate": "DPoP error=\"use_dpop_nonce\"", "dpop-nonce": RS_NONCE } }
          }
          const fresh = proof.jti !== undefined && !jtis.has(proof.jti)
          if (proof.jti !== undefined) jtis.add(proof.jti)
          const ok = proof.ok && fresh && proof.jkt === as.state.bound.get(token) && token === as.state.access
          outcomes.push(ok ? "ok" : `refused: ${proof.error ?? "replayed or unbound"}`)
          return { ok }
        })
        const store = NodeOAuth.makeFileStore(dir)
        const fleet = yield* ServerRegistry.make().pipe(Effect.provideService(OAuth.TokenStore, store))
        const shown = yield* recordEvents(fleet)
        const events = yield* fleet.subscribe
        yield* fleet.reconcile([{ name: "remote", transport: { type: "http", url: server.url } }])
        yield* until(events, stateOf("remote", "NeedsAuth"))
        yield* fleet.authorize("remote").pipe(
          Effect.provide(OAuth.layerHeadless),
          Effect.provideService(OAuth.TokenStore, store)
        )
        yield* until(events, stateOf("remote", "Ready"))
        expect(firstText(yield* fleet.callTool("mcp__remote__echo", { text: "bound" }))).toBe("bound")
        // One nonce challenge, answered on the same request; every other request was taken.
        expect(outcomes[0]).toBe("nonce")
        expect(outcomes.slice(1).every((outcome) => outcome === "ok")).toBe(true)
        expect(outcomes.length).toBeGreaterThan(3)
        expect(as.state.refreshes).toBe(1)

        const files = fs.readdirSync(dir).filter((name) => name.startsWith("tokens-"))
        expect(files).toHaveLength(1)
        const file = path.join(dir, files[0]!)
        expect(fs.statSync(file).mode & 0o777).toBe(0o600)
        const stored = JSON.parse(fs.readFileSync(file, "utf8"))
        expect(stored.tokenType).toBe("dpop")
        const privateKey = JSON.parse(stored.dpopKey).d as string
        expect(privateKey.length).toBeGreaterThan(20)
        const seen = JSON.stringify([yield* fleet.status, shown])
        expect(seen).not.toContain(privateKey)
        expect(seen).not.toMatch(/at-\d+-secret|rt-\d+/)
      }).pipe(Effect.provide(Platform)),
    30_000
  )

  it.scopedLive(
    "a fleet in NeedsAuth connects once another store on the same directory holds a grant",
    () =>
      Effect.gen(function*() {
        const as = yield* authServer()
        const dir = yield* tempDir()
        const server = yield* resource(as, (request) => ({
          ok: request.headers["authorization"] === `Bearer ${as.state.access}`
        }))
        const fleet = yield* ServerRegistry.make().pipe(
          Effect.provideService(OAuth.TokenStore, NodeOAuth.makeFileStore(dir))
        )
        const events = yield* fleet.subscribe
        yield* fleet.reconcile([{ name: "remote", transport: { type: "http", url: server.url } }])
        yield* until(events, stateOf("remote", "NeedsAuth"))
        // Another process's `mcp-fleet auth`: its own store on the same directory.
        const other = yield* OAuth.make({ server: "remote", url: server.url }).pipe(
          Effect.provideService(OAuth.TokenStore, NodeOAuth.makeFileStore(dir))
        )
        yield* other.authorize
        yield* until(events, stateOf("remote", "Ready"))
        expect(firstText(yield* fleet.callTool("mcp__remote__echo", { text: "picked up" }))).toBe("picked up")
      }).pipe(Effect.provide(Platform), Effect.provide(OAuth.layerHeadless)),
    30_000
  )

  it.scopedLive(
    "a 401 on the standing GET stream: one refresh, then NeedsAuth",
    () =>
      Effect.gen(function*() {
        const as = yield* authServer()
        // POSTs take the current token; the GET stream is refused whatever comes.
        const server = yield* resource(as, (request) => ({
          ok: request.method !== "GET" && request.headers["authorization"] === `Bearer ${as.state.access}`
        }))
        const fleet = yield* ServerRegistry.make()
        const events = yield* fleet.subscribe
        yield* fleet.reconcile([{ name: "remote", transport: { type: "http", url: server.url } }])
        yield* until(events, stateOf("remote", "NeedsAuth"))
        yield* fleet.authorize("remote").pipe(Effect.provide(OAuth.layerHeadless))
        // The code grant's token is refreshed before it is first sent (it expires within a minute).
        const refused = yield* until(events, stateOf("remote", "NeedsAuth"))
        expect(as.state.refreshes).toBe(2)
        expect(refused.state._tag === "NeedsAuth" && refused.state.error.reason).toMatchObject({
          _tag: "Http",
          status: 401
        })
        expect(server.seen.filter((request) => request.method === "GET" && request.url === "/mcp")).toHaveLength(2)
      }).pipe(Effect.provide(Platform), Effect.provide(OAuth.layerMemoryStore)),
    30_000
  )
})
