/**
 * OAuth 2.1 for remote MCP servers (the MCP authorization spec, 2025-03-26 to 2026-07-28):
 * the client side. When a server refuses a request (401, or 403 `insufficient_scope`), its
 * {@link ServerAuth} discovers the protected resource and its authorization server
 * (RFC 9728, RFC 8414, OpenID Connect discovery), identifies the client (configured
 * credentials, a Client ID Metadata Document, or Dynamic Client Registration, RFC 7591),
 * runs the authorization code grant with PKCE through the {@link Authorizer} (or a grant that
 * needs no person: client credentials, a workload's JWT, enterprise-managed authorization),
 * and keeps the tokens in a {@link TokenStore}; afterwards it hands out the access token to
 * send, refreshed before it expires. Where the authorization server takes DPoP (RFC 9449),
 * the tokens are bound to a key pair kept with them, and every request carries a proof.
 *
 * The protocol mechanics are oauth4webapi's (zero dependencies, spec-complete: metadata,
 * registration, PKCE, `iss`, DPoP), wrapped here in Effect services. A transport never
 * authorizes: its owner asks for the token when connecting, and after a refusal (the
 * connection ends with an Http error carrying the challenge) calls {@link ServerAuth.recover}
 * and connects again.
 *
 * Refreshes are single-flight per server and, through the store's lock, across processes
 * sharing a store: the one that takes the lock reads the store again and refreshes only
 * when the refresh token it holds is still the stored one, so a rotated refresh token is
 * never replayed. Tokens and client secrets are Redacted everywhere; errors name the server
 * and the step, never a token.
 *
 * The store in files and the loopback authorizer, which need Node, are `NodeOAuth`'s
 * (`mcp-fleet/node`); this module keeps the memory store and the headless authorizers.
 * In the fleet, the owner that recovers is `internal/serverRegistry/auth.ts`. Credentials reach
 * a transport as headers (a bearer token, made once) or, for a DPoP-bound token, as
 * `StreamableHttp.Options.auth`, asked for each request's proof.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Challenge from "./internal/oauth/challenge.js"
import * as Headless from "./internal/oauth/headless.js"
import * as MemoryStore from "./internal/oauth/memoryStore.js"
import { Authorizer, type Config, type Refusal, type ServerAuth, TokenStore } from "./internal/oauth/model.js"
import * as ServerAuthImpl from "./internal/oauth/serverAuth.js"

export {
  /**
   * How the client authenticates at the token endpoint.
   *
   * @since 0.1.0
   * @category models
   */
  type AuthMethod,
  /**
   * The authorizer service: how the user is sent to the authorization page.
   *
   * @since 0.1.0
   * @category tags
   */
  Authorizer,
  /**
   * One authorization's redirect URI and the way to the user.
   *
   * @since 0.1.0
   * @category models
   */
  type AuthorizerSession,
  /**
   * A client's identity at one authorization server (its issuer).
   *
   * @since 0.1.0
   * @category models
   */
  type ClientRecord,
  /**
   * A server's OAuth settings, all optional: pre-registered credentials, the scopes to ask
   * for (else the challenge's, else the resource's `scopes_supported`), the loopback port of
   * the redirect, the URL of this client's Client ID Metadata Document, and the extensions:
   * `private_key_jwt`, a workload's JWT, DPoP, enterprise-managed authorization.
   *
   * @since 0.1.0
   * @category models
   */
  type Config,
  /**
   * What a request to the server carries: the access token, and for a DPoP-bound one the
   * credentials made per request.
   *
   * @since 0.1.0
   * @category models
   */
  type Credentials,
  /**
   * The enterprise identity provider of enterprise-managed authorization (SEP-990).
   *
   * @since 0.1.0
   * @category models
   */
  type Enterprise,
  /**
   * How many step-up authorizations in a row a server may ask for.
   *
   * @since 0.1.0
   * @category constants
   */
  MAX_STEP_UPS,
  /**
   * How the authorization client reaches the network: it refuses private, loopback and
   * link-local addresses unless the MCP server is on one (SSRF through discovery); the
   * service tag (`NodeOAuth.layerNetworkGuard` on Node).
   *
   * @since 0.4.0
   * @category tags
   */
  NetworkGuard,
  /**
   * An authorization step failed; names the server, never holds a token or secret.
   *
   * @since 0.1.0
   * @category errors
   */
  OAuthError,
  /**
   * A server's refusal: the HTTP status and its `WWW-Authenticate` header.
   *
   * @since 0.1.0
   * @category models
   */
  type Refusal,
  /**
   * One server's authorization: the token to send, recovery after a refusal, authorize, logout.
   *
   * @since 0.1.0
   * @category models
   */
  type ServerAuth,
  /**
   * The step of the authorization client that failed.
   *
   * @since 0.1.0
   * @category errors
   */
  type Step,
  /**
   * The tokens of one resource at one issuer, and which server they are for.
   *
   * @since 0.1.0
   * @category models
   */
  type TokenRecord,
  /**
   * The token store service: where tokens and registered clients are kept.
   *
   * @since 0.1.0
   * @category tags
   */
  TokenStore
} from "./internal/oauth/model.js"

/**
 * A store in memory, for tests and short-lived programs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemoryStore: Effect.Effect<TokenStore> = MemoryStore.make

/**
 * @since 0.1.0
 * @category layers
 */
export const layerMemoryStore: Layer.Layer<TokenStore> = Layer.effect(TokenStore, MemoryStore.make)

// --- Authorizer --------------------------------------------------------------------

/**
 * An authorizer with no user: it requests the authorization URL itself and takes the
 * redirect's parameters from the answer. For tests and the conformance client, against
 * authorization servers that approve at once.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHeadless: Layer.Layer<Authorizer> = Layer.succeed(Authorizer, Headless.authorizer)

/**
 * The authorizer of {@link layerDeferred}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const deferredAuthorizer: Authorizer = Headless.deferred

/**
 * An authorizer that never reaches a user: a server that needs one fails with a
 * `needsUser` error carrying the authorization URL. What a fleet uses until someone runs
 * `mcp-fleet auth`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDeferred: Layer.Layer<Authorizer> = Layer.succeed(Authorizer, Headless.deferred)

// --- per server --------------------------------------------------------------------

/**
 * The authorization of the server `server` at `url`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly server: string
  readonly url: string
  readonly config?: Config | undefined
}): Effect.Effect<ServerAuth, never, TokenStore | Authorizer> => ServerAuthImpl.make(options)

/**
 * Whether a challenge asks for more scopes (403 `insufficient_scope`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isInsufficientScope = (refusal: Refusal): boolean =>
  refusal.status === 403 && Challenge.refusal(refusal.status, refusal.wwwAuthenticate).error === "insufficient_scope"
