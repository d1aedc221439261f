// The gateway's HTTP endpoint as an OAuth resource server, against the local authorization
// server fixture on 127.0.0.1: the Protected Resource Metadata, the challenges of 401 and
// 403, JWT access tokens (audience, expiry, signature, scopes, a rotated key) and opaque
// ones by introspection; and end to end, a fleet of ours authorizing at the fixture,
// listing the gateway's tools and calling one, which the audit log says it did.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as OAuth from "../../src/OAuth.js"
import * as Policy from "../../src/Policy.js"
import * as ResourceServer from "../../src/ResourceServer.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import * as FakeServer from "../../src/testing/FakeServer.js"
import { text } from "../../src/testing/Results.js"
// @ts-expect-error: a JavaScript fixture without types
import { start } from "../fixtures/oauth-server.mjs"
import { stateOf, until } from "../support/events.js"
import { Platform } from "../support/platform.js"

interface SigningKey {
  readonly kid: string
}

interface AuthServer {
  readonly base: string
  readonly state: { refreshes: number }
  readonly tokens: {
    readonly state: { jwksFetches: number; introspections: number }
    readonly jwt: (claims: Record<string, unknown>, options?: { key?: SigningKey }) => string
    readonly opaque: (claims: Record<string, unknown>) => string
    readonly strangerKey: () => SigningKey
    readonly rotate: () => void
    readonly revoke: (token: string) => void
  }
  readonly close: () => Promise<void>
}

const authServer = (options: { readonly accessTokens?: "jwt" } = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => start(options) as Promise<AuthServer>),
    (server) => Effect.promise(() => server.close())
  )

// A gateway over HTTP, fronting one fake server with the tool `echo`, on a free port; its
// audit entries go to `audit`.
const gateway = (oauth: ResourceServer.Options, audit: Array<Policy.AuditEntry> = []) =>
  Effect.gen(function*() {
    const sink = Layer.succeed(Policy.AuditSink, { write: (entry) => Effect.sync(() => void audit.push(entry)) })
    const context = yield* Layer.build(
      Policy.layer({}).pipe(
        Layer.provide(sink),
        Layer.provideMerge(ServerRegistry.layer()),
        Layer.provide(Platform)
      )
    )
    return yield* Effect.gen(function*() {
      const registry = yield* ServerRegistry.ServerRegistry
      const alpha = FakeServer.spec({
        name: "alpha",
        tools: [{ tool: { name: "echo", inputSchema: { type: "object" } }, call: () => Effect.succeed(text("hi")) }]
      })
      yield* registry.reconcile([alpha])
      yield* registry.awaitReady({ servers: "settled" })
      return yield* NodeGateway.serveHttp({ port: 0, oauth })
    }).pipe(Effect.provide(context))
  })

const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}

// An initialize with `token` (none when undefined), or a ping in `session`: the status, the
// challenge, the session, the body.
const post = (url: string, token: string | undefined, session?: string) =>
  Effect.promise(async (signal) => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(session === undefined ? {} : { "mcp-session-id": session })
      },
      body: JSON.stringify(session === undefined ? initialize : { jsonrpc: "2.0", id: 1, method: "ping" }),
      signal
    })
    return {
      status: response.status,
      challenge: response.headers.get("www-authenticate"),
      session: response.headers.get("mcp-session-id"),
      body: await response.text()
    }
  })

const getJson = (url: string) =>
  Effect.promise(async (signal) => {
    const response = await fetch(url, { signal })
    return { status: response.status, body: await response.json() as Record<string, unknown> }
  })

const now = () => Math.floor(Date.now() / 1000)

describe("the gateway as an OAuth resource server", () => {
  it.scopedLive("serves its Protected Resource Metadata and refuses requests without a token with the challenge", () =>
    Effect.gen(function*() {
      const as = yield* authServer()
      const url = yield* gateway({ issuer: as.base, scopes: ["mcp"] })
      const origin = new URL(url).origin
      const metadataUrl = `${origin}/.well-known/oauth-protected-resource/mcp`
      for (const where of [metadataUrl, `${origin}/.well-known/oauth-protected-resource`]) {
        expect(yield* getJson(where)).toEqual({
          status: 200,
          body: {
            resource: url,
            authorization_servers: [as.base],
            scopes_supported: ["mcp"],
            bearer_methods_supported: ["header"]
          }
        })
      }
      const none = yield* post(url, undefined)
      expect(none.status).toBe(401)
      expect(none.challenge).toBe(`Bearer resource_metadata="${metadataUrl}", scope="mcp"`)
      const garbage = yield* post(url, "not-a-jwt")
      expect(garbage.status).toBe(401)
      expect(garbage.challenge).toMatch(/^Bearer error="invalid_token", error_description="[^"]+", resource_metadata=/)
      expect(garbage.body).not.toContain("not-a-jwt")
      // Nothing was asked of the authorization server's keys for a token that is no JWT.
      expect(as.tokens.state.jwksFetches).toBe(0)
    }))

  it.scopedLive("accepts a JWT access token for it, its session its user's only; refuses another audience or issuer, an expired one, a bad signature, and too few scopes", () =>
    Effect.gen(function*() {
      const as = yield* authServer()
      const url = yield* gateway({ issuer: as.base, scopes: ["mcp"] })
      const good = yield* post(url, as.tokens.jwt({ aud: url, scope: "mcp other" }))
      expect(good.status).toBe(200)
      expect(good.session).not.toBeNull()
      expect(JSON.parse(good.body).result.serverInfo.name).toBe("mcp-fleet")
      // The session is its user's: another token of theirs may use it, another user's may not.
      const session = good.session!
      expect((yield* post(url, as.tokens.jwt({ aud: url, scope: "mcp" }), session)).status).toBe(200)
      expect((yield* post(url, as.tokens.jwt({ aud: url, scope: "mcp", sub: "user-2" }), session)).status).toBe(404)

      const refusals = [
        as.tokens.jwt({ aud: "http://127.0.0.1:1/elsewhere", scope: "mcp" }),
        as.tokens.jwt({ aud: url, scope: "mcp", exp: now() - 120, iat: now() - 600 }),
        as.tokens.jwt({ aud: url, scope: "mcp" }, { key: as.tokens.strangerKey() }),
        as.tokens.jwt({ aud: url, scope: "mcp", iss: "http://127.0.0.1:1" })
      ]
      for (const token of refusals) {
        const refused = yield* post(url, token)
        expect(refused.status).toBe(401)
        expect(refused.challenge).toContain(`error="invalid_token"`)
        expect(refused.body).not.toContain(token)
      }

      const narrow = yield* post(url, as.tokens.jwt({ aud: url, scope: "other" }))
      expect(narrow.status).toBe(403)
      expect(narrow.challenge).toMatch(/^Bearer error="insufficient_scope", .*scope="mcp"$/)
      // The keys were fetched once.
      expect(as.tokens.state.jwksFetches).toBe(1)

      // Keys that cannot be had: the token cannot be checked (503), and is not called bad.
      const keyless = yield* gateway({ issuer: as.base, jwksUri: `${as.base}/no-keys` })
      const unchecked = yield* post(keyless, as.tokens.jwt({ aud: keyless }))
      expect(unchecked.status).toBe(503)
      expect(unchecked.challenge).toBeNull()
    }))

  it.scopedLive("introspects opaque tokens: an active one for it is accepted; inactive, foreign or expired ones refused", () =>
    Effect.gen(function*() {
      const as = yield* authServer()
      const introspection = {
        url: `${as.base}/introspect`,
        clientId: "rs-client",
        clientSecret: Redacted.make("rs-secret")
      }
      const url = yield* gateway({ issuer: as.base, introspection, scopes: ["mcp"] })
      const token = as.tokens.opaque({ aud: url, scope: "mcp" })
      expect((yield* post(url, token)).status).toBe(200)
      expect((yield* post(url, token)).status).toBe(200)
      // The second request was answered from the cache.
      expect(as.tokens.state.introspections).toBe(1)

      const inactive = as.tokens.opaque({ aud: url, scope: "mcp" })
      as.tokens.revoke(inactive)
      for (
        const refused of [
          inactive,
          as.tokens.opaque({ aud: "http://127.0.0.1:1/elsewhere", scope: "mcp" }),
          as.tokens.opaque({ aud: url, scope: "mcp", exp: now() - 120 })
        ]
      ) {
        const answer = yield* post(url, refused)
        expect(answer.status).toBe(401)
        expect(answer.challenge).toContain(`error="invalid_token"`)
      }
      expect((yield* post(url, as.tokens.opaque({ aud: url, scope: "read" }))).status).toBe(403)

      // Credentials the introspection endpoint refuses: the token cannot be checked (503).
      const wrong = yield* gateway({
        issuer: as.base,
        introspection: { ...introspection, clientSecret: Redacted.make("wrong") }
      })
      const unchecked = yield* post(wrong, as.tokens.opaque({ aud: wrong }))
      expect(unchecked.status).toBe(503)
      expect(unchecked.body).not.toContain("wrong")
    }))

  it.scoped("fetches the keys again for a token signed with a new key, at most every 10 s; caches until expiry", () =>
    Effect.gen(function*() {
      const as = yield* authServer()
      // The cache's time is the Clock's, the tokens' the wall clock's.
      yield* TestClock.setTime(Date.now())
      const resource = "http://127.0.0.1:9/mcp"
      const server = yield* ResourceServer.make({ issuer: as.base, resource })
      const first = as.tokens.jwt({ aud: resource, exp: now() + 60 })
      expect(server.check(first)).toBeUndefined()
      expect((yield* server.verify(first)).subject).toBe("user-1")
      expect(server.check(first)).toMatchObject({ subject: "user-1", clientId: "fixture-client" })

      as.tokens.rotate()
      const rotated = as.tokens.jwt({ aud: resource })
      const early = yield* Effect.flip(server.verify(rotated))
      expect(early.reason).toBe("invalid_token")
      expect(as.tokens.state.jwksFetches).toBe(1)
      yield* TestClock.adjust("10 seconds")
      expect((yield* server.verify(rotated)).issuer).toBe(as.base)
      expect(as.tokens.state.jwksFetches).toBe(2)

      // The first token's cache entry ends with the token.
      yield* TestClock.adjust("60 seconds")
      expect(server.check(first)).toBeUndefined()
    }))

  it.scoped("keeps an introspection's answer 30 s at most, so a revoked token stops working; keeps 1000 tokens at most", () =>
    Effect.gen(function*() {
      const as = yield* authServer()
      yield* TestClock.setTime(Date.now())
      const resource = "http://127.0.0.1:9/mcp"
      const introspected = yield* ResourceServer.make({
        issuer: as.base,
        resource,
        introspection: { url: `${as.base}/introspect`, clientId: "rs-client", clientSecret: Redacted.make("rs-secret") }
      })
      const token = as.tokens.opaque({ aud: resource })
      yield* introspected.verify(token)
      as.tokens.revoke(token)
      yield* TestClock.adjust("29 seconds")
      expect(introspected.check(token)).toMatchObject({ subject: "user-1" })
      yield* TestClock.adjust("1 second")
      expect(introspected.check(token)).toBeUndefined()
      expect((yield* Effect.flip(introspected.verify(token))).reason).toBe("invalid_token")

      const signed = yield* ResourceServer.make({ issuer: as.base, resource })
      const tokens = Array.from({ length: 1001 }, (_, i) => as.tokens.jwt({ aud: resource, sub: `user-${i}` }))
      yield* Effect.forEach(tokens, signed.verify, { discard: true })
      expect(signed.check(tokens[0]!)).toBeUndefined()
      expect(signed.check(tokens[1]!)).toMatchObject({ subject: "user-1" })
      expect(signed.check(tokens[1000]!)).toMatchObject({ subject: "user-1000" })
    }))

  it.scopedLive(
    "end to end: a fleet of ours authorizes at the fixture, lists the gateway's tools and calls one, audited as its user's",
    () =>
      Effect.gen(function*() {
        const as = yield* authServer({ accessTokens: "jwt" })
        const audit: Array<Policy.AuditEntry> = []
        const url = yield* gateway({ issuer: as.base, scopes: ["mcp"] }, audit)
        const client = yield* ServerRegistry.make()
        const events = yield* client.subscribe
        yield* client.reconcile([{ name: "gateway", transport: { type: "http", url, oauth: { scopes: ["mcp"] } } }])
        const waiting = yield* until(events, stateOf("gateway", "NeedsAuth"))
        expect(waiting.state._tag === "NeedsAuth" && waiting.state.authorizationUrl).toContain("resource=")

        yield* client.authorize("gateway").pipe(Effect.provide(OAuth.layerHeadless))
        yield* until(events, stateOf("gateway", "Ready"))
        const names = (yield* client.catalog).tools.map((tool) => tool.name)
        expect(names).toEqual(["mcp__gateway__mcp__alpha__echo"])
        expect(as.state.refreshes).toBe(1)
        // The gateway's audit log names the caller: the token's subject and client.
        yield* client.callTool("mcp__gateway__mcp__alpha__echo", {})
        expect(audit.map((entry) => entry.caller)).toEqual([{ subject: "user-1", clientId: "fixture-client" }])
      }).pipe(Effect.provide(Platform), Effect.provide(OAuth.layerMemoryStore)),
    30_000
  )
})
