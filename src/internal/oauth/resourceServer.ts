/**
 * The resource-server side of OAuth: what an MCP endpoint of ours checks a bearer token
 * with. JWT access tokens (RFC 9068) are validated against the authorization server's JWKS
 * with oauth4webapi's `validateJwtAccessToken` (`iss`, `aud`, `exp`/`nbf` within the clock
 * tolerance, the signature); opaque tokens are introspected (RFC 7662) with the configured
 * client credentials. Either way the validated token's principal is cached until it expires
 * (introspected ones for `INTROSPECTION_TTL_MS` at most, so a revocation is seen soon),
 * in a map bounded to `CACHE_SIZE`, and a cached token is judged synchronously: only a token
 * seen for the first time costs a signature check or a request.
 *
 * The JWKS is oauth4webapi's to cache, per authorization-server object; a token signed with
 * a key the cached set does not hold makes the set be fetched again (a new object), at most
 * once per `JWKS_REFETCH_MS`, so tokens naming made-up keys cannot make us hammer the
 * authorization server.
 *
 * @internal
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SynchronizedRef from "effect/SynchronizedRef"
import * as oauth from "oauth4webapi"
import type { Options, Principal } from "../../ResourceServer.js"
import { scrubUrls } from "../secrets.js"
import * as Http from "./http.js"

/** How many validated tokens are kept. */
export const CACHE_SIZE = 1000

/** The longest an introspected token is taken on the introspection's word. */
export const INTROSPECTION_TTL_MS = 30_000

/** The shortest time between two JWKS fetches caused by tokens naming unknown keys. */
export const JWKS_REFETCH_MS = 10_000

/** The clock skew allowed on `exp`, `nbf` and `iat`, in seconds. */
export const CLOCK_TOLERANCE_S = 30

/** Why a request's token was refused; re-exported by `ResourceServer`. Never holds the token. */
export class ResourceServerError extends Schema.TaggedError<ResourceServerError>()("ResourceServerError", {
  reason: Schema.Literal("invalid_token", "insufficient_scope", "unavailable"),
  message: Schema.String
}) {}

/** How a token is checked, once the authorization server is known. */
export interface Validator {
  /** The principal of a token validated earlier and not expired (scopes not yet checked). */
  readonly cached: (token: string) => Principal | undefined
  /** Validates a token not in the cache; caches its principal. */
  readonly validate: (token: string) => Effect.Effect<Principal, ResourceServerError>
}

const invalid = (message: string) => new ResourceServerError({ reason: "invalid_token", message })

const unavailable = (message: string) => new ResourceServerError({ reason: "unavailable", message })

// Failures that say the keys could not be had (an answer that is no JWKS, a URL that is
// neither HTTPS nor loopback, metadata without `jwks_uri`), not that the token is bad.
const NOT_THE_TOKEN = new Set<string>([
  oauth.RESPONSE_IS_NOT_JSON,
  oauth.RESPONSE_IS_NOT_CONFORM,
  oauth.HTTP_REQUEST_FORBIDDEN,
  oauth.REQUEST_PROTOCOL_FORBIDDEN,
  oauth.MISSING_SERVER_METADATA,
  oauth.INVALID_SERVER_METADATA
])

const judge = (cause: unknown): ResourceServerError =>
  cause instanceof oauth.OperationProcessingError && !NOT_THE_TOKEN.has(cause.code ?? "") ||
    cause instanceof oauth.UnsupportedOperationError
    ? invalid(`the token is not valid: ${Http.describe(cause)}`)
    : unavailable(`the authorization server's keys could not be had: ${Http.describe(cause)}`)

const scopesOf = (scope: unknown): ReadonlyArray<string> =>
  typeof scope === "string" ? scope.split(" ").filter((s) => s !== "") : []

const stringOr = (value: unknown): string | undefined => typeof value === "string" ? value : undefined

/** A map of principals by token, bounded: the oldest entry goes first. */
const makeCache = (clock: Clock.Clock) => {
  const entries = new Map<string, { readonly principal: Principal; readonly until: number }>()
  return {
    get: (token: string): Principal | undefined => {
      const entry = entries.get(token)
      if (entry === undefined) return undefined
      if (entry.until > clock.unsafeCurrentTimeMillis()) return entry.principal
      entries.delete(token)
      return undefined
    },
    set: (token: string, principal: Principal, until: number): void => {
      if (entries.size >= CACHE_SIZE) entries.delete(entries.keys().next().value!)
      entries.set(token, { principal, until })
    }
  }
}

// The authorization server's metadata (RFC 8414, else OpenID Connect discovery); its
// `issuer` must be the configured one (oauth4webapi checks).
const discover = (issuer: string) =>
  Effect.gen(function*() {
    let last: unknown
    for (const algorithm of ["oauth2", "oidc"] as const) {
      const found = yield* Effect.either(Effect.tryPromise(async () => {
        const url = new URL(issuer)
        const response = await oauth.discoveryRequest(url, { ...Http.options(url), algorithm })
        return oauth.processDiscoveryResponse(url, response)
      }))
      if (found._tag === "Right") return found.right
      last = found.left.error
    }
    return yield* unavailable(`no metadata for the authorization server ${scrubUrls(issuer)}: ${Http.describe(last)}`)
  })

/**
 * The authorization server as the validator needs it: the configured endpoints, else its
 * metadata, fetched on first use and kept once found (a failure is tried again next time).
 */
const authorizationServer = (options: Options) => {
  const configured: oauth.AuthorizationServer | undefined = options.introspection !== undefined
    ? { issuer: options.issuer, introspection_endpoint: options.introspection.url }
    : options.jwksUri !== undefined
    ? { issuer: options.issuer, jwks_uri: options.jwksUri }
    : undefined
  return Effect.map(
    SynchronizedRef.make(configured),
    (ref) =>
      SynchronizedRef.modifyEffect(ref, (known) =>
        known !== undefined
          ? Effect.succeed([known, known] as const)
          : Effect.map(discover(options.issuer), (as) => [as, as] as const))
  )
}

// oauth4webapi reads the token from a Request; its URL matters only for DPoP, not used here.
const REQUEST_URL = "http://localhost/"

// JWT access tokens: oauth4webapi validates; the JWKS it caches is dropped (by giving it a new
// server object) when a token's key is not in it and the last drop is old enough.
const jwtValidator = (options: Options, audience: string, clock: Clock.Clock) =>
  Effect.gen(function*() {
    const server = yield* authorizationServer(options)
    const cache = makeCache(clock)
    let fresh: { as: oauth.AuthorizationServer; since: number } | undefined
    const current = Effect.map(server, (as) => {
      if (fresh === undefined) fresh = { as: { ...as }, since: clock.unsafeCurrentTimeMillis() }
      return fresh
    })
    const attempt = (as: oauth.AuthorizationServer, token: string) =>
      Effect.tryPromise({
        try: () =>
          oauth.validateJwtAccessToken(
            as,
            new Request(REQUEST_URL, { headers: { authorization: `Bearer ${token}` } }),
            audience,
            { ...Http.options(as.jwks_uri ?? as.issuer), [oauth.clockTolerance]: CLOCK_TOLERANCE_S }
          ),
        catch: (cause) => cause
      })
    const validate = (token: string) =>
      Effect.gen(function*() {
        const known = yield* current
        const claims = yield* attempt(known.as, token).pipe(
          Effect.catchIf(
            (cause) =>
              cause instanceof oauth.OperationProcessingError && cause.code === oauth.KEY_SELECTION &&
              clock.unsafeCurrentTimeMillis() - known.since >= JWKS_REFETCH_MS,
            () => {
              fresh = { as: { ...known.as }, since: clock.unsafeCurrentTimeMillis() }
              return attempt(fresh.as, token)
            }
          ),
          Effect.mapError(judge)
        )
        const principal: Principal = {
          issuer: claims.iss,
          subject: claims.sub,
          clientId: claims.client_id,
          scopes: scopesOf(claims.scope),
          expiresAt: claims.exp * 1000
        }
        cache.set(token, principal, principal.expiresAt!)
        return principal
      })
    return { cached: cache.get, validate } satisfies Validator
  })

const audienceHolds = (aud: unknown, audience: string) =>
  typeof aud === "string" ? aud === audience : Array.isArray(aud) && aud.includes(audience)

// Opaque tokens: the authorization server's introspection endpoint says whether a token is
// active; it must be for this resource and issuer, and not expired.
const introspectionValidator = (
  options: Options & { readonly introspection: NonNullable<Options["introspection"]> },
  audience: string,
  clock: Clock.Clock
) =>
  Effect.gen(function*() {
    const server = yield* authorizationServer(options)
    const cache = makeCache(clock)
    const client: oauth.Client = { client_id: options.introspection.clientId }
    const validate = (token: string) =>
      Effect.gen(function*() {
        const as = yield* server
        const answer = yield* Effect.tryPromise({
          try: async () => {
            const response = await oauth.introspectionRequest(
              as,
              client,
              oauth.ClientSecretBasic(Redacted.value(options.introspection.clientSecret)),
              token,
              Http.options(options.introspection.url)
            )
            return oauth.processIntrospectionResponse(as, client, response)
          },
          catch: (cause) => unavailable(`the token could not be introspected: ${Http.describe(cause)}`)
        })
        const now = clock.unsafeCurrentTimeMillis()
        if (!answer.active) return yield* invalid("the token is not active")
        if (!audienceHolds(answer.aud, audience)) return yield* invalid(`the token is not for ${audience}`)
        if (answer.iss !== undefined && answer.iss !== options.issuer) {
          return yield* invalid(`the token was not issued by ${options.issuer}`)
        }
        const expiresAt = typeof answer.exp === "number" ? answer.exp * 1000 : undefined
        if (expiresAt !== undefined && expiresAt + CLOCK_TOLERANCE_S * 1000 <= now) {
          return yield* invalid("the token has expired")
        }
        const principal: Principal = {
          issuer: options.issuer,
          subject: stringOr(answer.sub),
          clientId: stringOr(answer.client_id),
          scopes: scopesOf(answer.scope),
          expiresAt
        }
        cache.set(token, principal, Math.min(expiresAt ?? Infinity, now + INTROSPECTION_TTL_MS))
        return principal
      })
    return { cached: cache.get, validate } satisfies Validator
  })

/** The validator `options` ask for: introspection when configured, else JWT access tokens. */
export const makeValidator = (options: Options, audience: string): Effect.Effect<Validator> =>
  Effect.flatMap(Effect.clock, (clock) => {
    const introspection = options.introspection
    return introspection !== undefined
      ? introspectionValidator({ ...options, introspection }, audience, clock)
      : jwtValidator(options, audience, clock)
  })
