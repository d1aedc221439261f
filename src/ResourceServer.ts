/**
 * OAuth 2.1 for an MCP endpoint of ours (the gateway's HTTP endpoint): the resource-server
 * side, the counterpart of {@link OAuth}'s client. It publishes the Protected Resource
 * Metadata (RFC 9728) that tells clients which authorization server to go to, checks the
 * bearer token of every request, and words the refusals the MCP authorization spec asks for:
 * 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (plus `error="invalid_token"`
 * when a token was sent), and 403 `insufficient_scope` naming the scopes required.
 *
 * A token is checked one of two ways, both on oauth4webapi:
 * - JWT access tokens (RFC 9068), the default: the signature against the authorization
 *   server's JWKS (its `jwks_uri`, configured or from its metadata; keys cached, fetched again
 *   when a token names one not in the set, at most every 10 s), `iss`, `aud` (the resource,
 *   RFC 8707, or `audience`), `exp` and `nbf` with 30 s of clock skew.
 * - Introspection (RFC 7662), when `introspection` is configured: every token is sent to the
 *   endpoint with the client's credentials (HTTP Basic); it must be `active`, for this
 *   audience (`aud` is required), from this issuer, not expired. An answer is trusted for
 *   30 s at most, so a revoked token stops working soon.
 *
 * A validated token is cached (1000 at most) until it expires, and a cached one is judged
 * without a fiber or a request; only a token seen for the first time costs a signature check
 * or a round trip. Tokens are never logged, and refusals never repeat them.
 *
 * McpServer's HTTP endpoint asks it about each request (`internal/mcpServer/http/guard.ts`); a
 * session opened with a token is that caller's, and the gateway's audit entries name the caller
 * (`Policy.CallToolOptions.caller`).
 *
 * @since 0.2.0
 */
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Impl from "./internal/oauth/resourceMetadata.js"
import type { ResourceServerError } from "./internal/oauth/resourceServer.js"

/**
 * The introspection endpoint and the credentials the resource server authenticates to it with.
 *
 * @since 0.2.0
 * @category models
 */
export interface Introspection {
  readonly url: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
}

/**
 * What the resource server accepts tokens from and for.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** The authorization server's issuer identifier; listed in the metadata, checked in tokens. */
  readonly issuer: string
  /**
   * The resource identifier: the endpoint's public URL (RFC 8707). Default: the URL the
   * endpoint listens on, which is right unless a proxy stands in front of it.
   */
  readonly resource?: string | undefined
  /** The audience tokens must name. Default: the resource. */
  readonly audience?: string | undefined
  /** The JWKS of the issuer. Default: its metadata's `jwks_uri`. */
  readonly jwksUri?: string | undefined
  /** Introspect every token (opaque tokens) instead of validating JWTs. */
  readonly introspection?: Introspection | undefined
  /** Scopes every token must carry; listed as `scopes_supported` and in challenges. */
  readonly scopes?: ReadonlyArray<string> | undefined
}

/**
 * Who a validated token speaks for.
 *
 * @since 0.2.0
 * @category models
 */
export interface Principal {
  readonly issuer: string
  /** `sub`: the user (or client) the token was issued for. */
  readonly subject: string | undefined
  readonly clientId: string | undefined
  readonly scopes: ReadonlyArray<string>
  /** When the token expires (epoch milliseconds), if it says. */
  readonly expiresAt: number | undefined
}

export {
  /**
   * Why a request's token was refused: `invalid_token` (missing, malformed, expired, for
   * another audience or issuer, bad signature, not active), `insufficient_scope`, or
   * `unavailable` (the authorization server's metadata, keys or introspection could not be
   * had). Never holds the token.
   *
   * @since 0.2.0
   * @category errors
   */
  ResourceServerError
} from "./internal/oauth/resourceServer.js"

/**
 * One protected resource.
 *
 * @since 0.2.0
 * @category models
 */
export interface ResourceServer {
  readonly resource: string
  /** Where the Protected Resource Metadata is (the path-aware well-known URL). */
  readonly metadataUrl: string
  /** The paths the metadata is served at: the path-aware one and the root one. */
  readonly metadataPaths: ReadonlyArray<string>
  /** The Protected Resource Metadata document (RFC 9728 §2). */
  readonly metadata: Readonly<Record<string, unknown>>
  /**
   * The verdict on a token when it can be given at once: the principal of a cached valid
   * token, its refusal when it lacks a required scope; `undefined` when it must be validated.
   */
  readonly check: (token: string) => Principal | ResourceServerError | undefined
  /** Validates a token (its signature, or by introspection) and its scopes. */
  readonly verify: (token: string) => Effect.Effect<Principal, ResourceServerError>
  /**
   * The `WWW-Authenticate` value of a refusal: the metadata URL, the required scopes, and
   * the error when a token was sent.
   */
  readonly challenge: (error: ResourceServerError | undefined) => string
}

/**
 * A resource server for `resource` (the endpoint's URL unless `options.resource` says
 * otherwise), which must be a URL. Nothing is fetched until the first token comes: a
 * JWKS or introspection endpoint that cannot be reached makes each new token a 503 until it
 * can, and is logged.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: Options & { readonly resource: string }): Effect.Effect<ResourceServer> =>
  Impl.make(options)
