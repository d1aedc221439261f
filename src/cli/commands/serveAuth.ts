/**
 * How `mcp-fleet serve --http` guards its endpoint: a static bearer token read from an
 * environment variable (`--token-env`), or OAuth access tokens with the gateway as a
 * resource server (`--oauth-issuer` and the flags around it). Secrets come from environment
 * variables, never from the command line, and are Redacted from there on; so does the key
 * replicas of the gateway share to sign modern requests' state (`--state-secret-env`).
 *
 * @since 0.2.0
 */
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as ResourceServer from "../../ResourceServer.js"
import * as CliError from "../CliError.js"

const optionalText = (name: string, pseudo: string, description: string) =>
  Options.text(name).pipe(Options.withPseudoName(pseudo), Options.withDescription(description), Options.optional)

/**
 * The flags of the endpoint's authentication.
 *
 * @since 0.2.0
 */
export const options = {
  tokenEnv: optionalText(
    "token-env",
    "VAR",
    "Require 'Authorization: Bearer <token>', the token read from this environment variable"
  ),
  oauthIssuer: optionalText(
    "oauth-issuer",
    "url",
    "Require OAuth access tokens from this authorization server (the gateway as a resource server: " +
      "JWTs checked against its keys, or introspected with --oauth-introspection-url)"
  ),
  oauthResource: optionalText(
    "oauth-resource",
    "url",
    "The endpoint's URL as clients reach it, the tokens' resource (default: the URL it listens on)"
  ),
  oauthAudience: optionalText("oauth-audience", "aud", "The audience tokens must name (default: the resource)"),
  oauthJwksUri: optionalText("oauth-jwks-uri", "url", "The issuer's JWKS (default: from its metadata)"),
  oauthScope: Options.text("oauth-scope").pipe(
    Options.withPseudoName("scope"),
    Options.withDescription("A scope every token must carry (repeatable); others get 403 insufficient_scope"),
    Options.repeated
  ),
  oauthIntrospectionUrl: optionalText(
    "oauth-introspection-url",
    "url",
    "Introspect every token here (RFC 7662) instead of validating JWTs; needs --oauth-client-id and " +
      "--oauth-client-secret-env"
  ),
  oauthClientId: optionalText("oauth-client-id", "id", "The gateway's client id at the introspection endpoint"),
  oauthClientSecretEnv: optionalText(
    "oauth-client-secret-env",
    "VAR",
    "The environment variable holding the gateway's client secret at the introspection endpoint"
  ),
  stateSecretEnv: optionalText(
    "state-secret-env",
    "VAR",
    "The environment variable holding the key that signs 2026-07-28 requests' state, the same for every " +
      "replica behind one load balancer (default: a random key per process)"
  )
}

/**
 * What the flags of {@link options} were given as.
 *
 * @since 0.2.0
 */
export type Given = {
  readonly [K in keyof typeof options]: (typeof options)[K] extends Options.Options<infer A> ? A : never
}

const secretFrom = (flag: string, variable: string) => {
  const value = process.env[variable]
  return value === undefined || value === ""
    ? Effect.fail(CliError.usage(`${flag} ${variable}: that environment variable is not set`))
    : Effect.succeed(Redacted.make(value))
}

// A flag's URL, checked here so that a typo is a usage error, not a failure at the first request.
const urlFrom = (flag: string, value: Option.Option<string>) =>
  Option.isNone(value) || URL.canParse(value.value)
    ? Effect.succeed(Option.getOrUndefined(value))
    : Effect.fail(CliError.usage(`${flag} '${value.value}' is not a URL`))

const introspectionOf = (given: Given) =>
  Effect.gen(function*() {
    if (Option.isNone(given.oauthIntrospectionUrl)) {
      const stray = Option.isSome(given.oauthClientId) || Option.isSome(given.oauthClientSecretEnv)
      if (stray) {
        return yield* CliError.usage(
          "--oauth-client-id and --oauth-client-secret-env go with --oauth-introspection-url"
        )
      }
      return undefined
    }
    if (Option.isNone(given.oauthClientId) || Option.isNone(given.oauthClientSecretEnv)) {
      return yield* CliError.usage("--oauth-introspection-url needs --oauth-client-id and --oauth-client-secret-env")
    }
    return {
      url: (yield* urlFrom("--oauth-introspection-url", given.oauthIntrospectionUrl))!,
      clientId: given.oauthClientId.value,
      clientSecret: yield* secretFrom("--oauth-client-secret-env", given.oauthClientSecretEnv.value)
    }
  })

/**
 * The `token` or `oauth` option of `NodeGateway.serveHttp` the flags ask for; a usage error for
 * flags that do not go together or a variable that is not set.
 *
 * @since 0.2.0
 */
export const resolve = (given: Given): Effect.Effect<
  { readonly token?: Redacted.Redacted<string>; readonly oauth?: ResourceServer.Options },
  CliError.CliError
> =>
  Effect.gen(function*() {
    const introspection = yield* introspectionOf(given)
    const extras = [given.oauthResource, given.oauthAudience, given.oauthJwksUri].some(Option.isSome) ||
      given.oauthScope.length > 0 || introspection !== undefined
    if (Option.isNone(given.oauthIssuer)) {
      if (extras) return yield* CliError.usage("the --oauth-* flags go with --oauth-issuer")
      if (Option.isNone(given.tokenEnv)) return {}
      return { token: yield* secretFrom("--token-env", given.tokenEnv.value) }
    }
    if (Option.isSome(given.tokenEnv)) return yield* CliError.usage("give either --token-env or --oauth-issuer")
    return {
      oauth: {
        issuer: (yield* urlFrom("--oauth-issuer", given.oauthIssuer))!,
        resource: yield* urlFrom("--oauth-resource", given.oauthResource),
        audience: Option.getOrUndefined(given.oauthAudience),
        jwksUri: yield* urlFrom("--oauth-jwks-uri", given.oauthJwksUri),
        scopes: given.oauthScope,
        introspection
      }
    }
  })

/**
 * The `stateSecret` option of the gateway `--state-secret-env` names, if given; a usage
 * error for a variable that is not set.
 *
 * @since 0.2.0
 */
export const stateSecret = (given: Given): Effect.Effect<Redacted.Redacted<string> | undefined, CliError.CliError> =>
  Option.isNone(given.stateSecretEnv)
    ? Effect.succeed(undefined)
    : secretFrom("--state-secret-env", given.stateSecretEnv.value)
