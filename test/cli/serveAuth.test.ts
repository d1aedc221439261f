import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ServeAuth from "../../src/cli/commands/serveAuth.js"

const none: ServeAuth.Given = {
  tokenEnv: Option.none(),
  oauthIssuer: Option.none(),
  oauthResource: Option.none(),
  oauthAudience: Option.none(),
  oauthJwksUri: Option.none(),
  oauthScope: [],
  oauthIntrospectionUrl: Option.none(),
  oauthClientId: Option.none(),
  oauthClientSecretEnv: Option.none()
}

const VAR = "MCP_FLEET_TEST_SERVE_AUTH_SECRET"

describe("serve's authentication flags", () => {
  it.effect("nothing, a static token, or OAuth with introspection (the secret Redacted from the environment)", () =>
    Effect.gen(function*() {
      process.env[VAR] = "s3cret"
      yield* Effect.addFinalizer(() => Effect.sync(() => delete process.env[VAR]))
      expect(yield* ServeAuth.resolve(none)).toEqual({})
      const token = yield* ServeAuth.resolve({ ...none, tokenEnv: Option.some(VAR) })
      expect(token.token && Redacted.value(token.token)).toBe("s3cret")
      const { oauth } = yield* ServeAuth.resolve({
        ...none,
        oauthIssuer: Option.some("https://as.example.com"),
        oauthScope: ["mcp"],
        oauthIntrospectionUrl: Option.some("https://as.example.com/introspect"),
        oauthClientId: Option.some("gateway"),
        oauthClientSecretEnv: Option.some(VAR)
      })
      expect(oauth).toMatchObject({
        issuer: "https://as.example.com",
        scopes: ["mcp"],
        introspection: { url: "https://as.example.com/introspect", clientId: "gateway" }
      })
      expect(Redacted.value(oauth!.introspection!.clientSecret)).toBe("s3cret")
      expect(JSON.stringify(oauth)).not.toContain("s3cret")
    }).pipe(Effect.scoped))

  it.effect("flags that do not go together are usage errors", () =>
    Effect.gen(function*() {
      const issuer = { oauthIssuer: Option.some("https://as.example.com") }
      const refused = [
        { ...none, ...issuer, tokenEnv: Option.some(VAR) },
        { ...none, oauthScope: ["mcp"] },
        { ...none, ...issuer, oauthIntrospectionUrl: Option.some("https://as.example.com/introspect") },
        { ...none, ...issuer, oauthClientId: Option.some("gateway") },
        { ...none, tokenEnv: Option.some("MCP_FLEET_TEST_UNSET_VARIABLE") },
        { ...none, oauthIssuer: Option.some("not a url") },
        { ...none, ...issuer, oauthResource: Option.some("mcp.example.com/mcp") }
      ]
      for (const given of refused) {
        const error = yield* Effect.flip(ServeAuth.resolve(given))
        expect(error.exitCode).toBe(2)
      }
    }))
})
