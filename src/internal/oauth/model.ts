/**
 * The models, errors and service tags of the authorization client, defined here so that
 * `OAuth` and its internal files share them without a cycle; `OAuth` re-exports them.
 *
 * @internal
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { RequestAuth } from "../../StreamableHttp.js"

// --- errors ------------------------------------------------------------------------

/**
 * The step of the authorization client that failed.
 *
 * @since 0.1.0
 * @category errors
 */
export type Step = "discovery" | "registration" | "authorization" | "token" | "refresh" | "store" | "needsUser"

/**
 * An authorization step failed. `server` is the MCP server it was for; the message never
 * holds a token or secret. `grantRevoked` marks a refresh token the server refused for good.
 *
 * @since 0.1.0
 * @category errors
 */
export class OAuthError extends Schema.TaggedError<OAuthError>()("OAuthError", {
  server: Schema.String,
  step: Schema.Literal("discovery", "registration", "authorization", "token", "refresh", "store", "needsUser"),
  message: Schema.String,
  grantRevoked: Schema.optional(Schema.Boolean),
  /** For `needsUser`: the authorization URL the user must visit. */
  authorizationUrl: Schema.optional(Schema.String)
}) {}

// --- models ------------------------------------------------------------------------

/**
 * A server's OAuth settings, all optional: pre-registered credentials, the scopes to ask
 * for (else the challenge's, else the resource's `scopes_supported`), the loopback port of
 * the redirect, the URL of this client's Client ID Metadata Document, and the extensions:
 * `private_key_jwt`, a workload's JWT, DPoP, enterprise-managed authorization.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly clientId?: string | undefined
  readonly clientSecret?: Redacted.Redacted<string> | undefined
  readonly scopes?: ReadonlyArray<string> | undefined
  readonly callbackPort?: number | undefined
  readonly clientMetadataUrl?: string | undefined
  /** A PKCS#8 PEM private key: the client authenticates with `private_key_jwt` (RFC 7523). */
  readonly privateKey?: Redacted.Redacted<string> | undefined
  /** The key's JWS algorithm (`ES256`, `RS256`, …). Default: ES256. */
  readonly signingAlgorithm?: string | undefined
  /**
   * A workload identity JWT: where the authorization server takes the JWT bearer grant
   * (RFC 7523), it is exchanged for the token, with no person involved.
   */
  readonly assertion?: Redacted.Redacted<string> | undefined
  /**
   * DPoP-bound tokens (RFC 9449): true always, false never; by default when the
   * authorization server advertises `dpop_signing_alg_values_supported`.
   */
  readonly dpop?: boolean | undefined
  /**
   * Enterprise-managed authorization (SEP-990): where the authorization server takes the JWT
   * bearer grant, the enterprise IdP's ID token is exchanged at the IdP for an ID-JAG, and the
   * ID-JAG at the server's authorization server for the token, with no person involved.
   */
  readonly enterprise?: Enterprise | undefined
}

/**
 * The enterprise identity provider of enterprise-managed authorization: its token endpoint,
 * the ID token a person's single sign-on gave this client, and the client's identity there
 * (`idpClientId`, else the server's `clientId`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Enterprise {
  readonly idpTokenEndpoint: string
  readonly idToken: Redacted.Redacted<string>
  readonly idpClientId?: string | undefined
  readonly idpClientSecret?: Redacted.Redacted<string> | undefined
}

/**
 * How the client authenticates at the token endpoint.
 *
 * @since 0.1.0
 * @category models
 */
export type AuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt" | "none"

/**
 * A client's identity at one authorization server (its issuer).
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientRecord {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret?: Redacted.Redacted<string> | undefined
  readonly authMethod: AuthMethod
  /** For `private_key_jwt`: the PEM key and its algorithm. */
  readonly privateKey?: Redacted.Redacted<string> | undefined
  readonly signingAlgorithm?: string | undefined
}

/**
 * The tokens of one resource at one issuer, and which server they are for. `expiresAt` is
 * in epoch milliseconds.
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenRecord {
  readonly server: string
  readonly serverUrl: string
  readonly issuer: string
  readonly resource: string
  readonly clientId: string
  readonly accessToken: Redacted.Redacted<string>
  readonly refreshToken?: Redacted.Redacted<string> | undefined
  readonly expiresAt?: number | undefined
  readonly scope?: string | undefined
  /** `dpop` for a DPoP-bound access token; absent for a bearer token. */
  readonly tokenType?: "dpop" | undefined
  /** The DPoP key pair (a private JWK) the tokens were requested with; kept for refreshes. */
  readonly dpopKey?: Redacted.Redacted<string> | undefined
}

// --- TokenStore --------------------------------------------------------------------

/**
 * Where tokens and registered clients are kept. `withLock` runs an effect while holding
 * the key's lock, across every process sharing the store. `changes` tells that tokens may
 * have changed, written by this store or by another writer of the same place (`mcp-fleet
 * auth` in another process), so a running fleet picks up a new grant.
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenStore {
  readonly getTokens: (issuer: string, resource: string) => Effect.Effect<Option.Option<TokenRecord>, OAuthError>
  readonly setTokens: (record: TokenRecord) => Effect.Effect<void, OAuthError>
  readonly removeTokens: (issuer: string, resource: string) => Effect.Effect<void, OAuthError>
  readonly listTokens: Effect.Effect<ReadonlyArray<TokenRecord>, OAuthError>
  readonly getClient: (issuer: string) => Effect.Effect<Option.Option<ClientRecord>, OAuthError>
  readonly setClient: (record: ClientRecord) => Effect.Effect<void, OAuthError>
  readonly withLock: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | OAuthError, R>
  /** Absent for a store no one else writes: a fleet then sees only its own grants. */
  readonly changes?: Stream.Stream<void> | undefined
}

/**
 * The token store service.
 *
 * @since 0.1.0
 * @category tags
 */
export const TokenStore = Context.GenericTag<TokenStore>("mcp-fleet/OAuth/TokenStore")

/**
 * How the authorization client reaches the network without being turned against it (SSRF):
 * `fetch` refuses to connect to a private, loopback or link-local address unless
 * `allowPrivate`, checking the address it connects to (a name is resolved once, and that
 * address is the one connected to); `isPrivate` tells whether a host is, or resolves to,
 * such an address. Without one in context only IP-literal and `localhost` URLs are checked.
 *
 * @since 0.4.0
 * @category models
 */
export interface NetworkGuard {
  readonly fetch: (allowPrivate: boolean) => typeof globalThis.fetch
  readonly isPrivate: (host: string) => Promise<boolean>
}

/**
 * The network guard service (`NodeOAuth.layerNetworkGuard` on Node).
 *
 * @since 0.4.0
 * @category tags
 */
export const NetworkGuard = Context.GenericTag<NetworkGuard>("mcp-fleet/OAuth/NetworkGuard")

/**
 * One authorization: the redirect URI the authorization server sends the user back to, and
 * `authorize`, which sends the user to the URL and returns the parameters of the redirect.
 *
 * @since 0.1.0
 * @category models
 */
export interface AuthorizerSession {
  readonly redirectUri: string
  readonly authorize: (url: URL) => Effect.Effect<URLSearchParams, OAuthError>
}

/**
 * How the user is sent to the authorization page.
 *
 * @since 0.1.0
 * @category models
 */
export interface Authorizer {
  readonly open: (
    server: string,
    callbackPort: number | undefined
  ) => Effect.Effect<AuthorizerSession, OAuthError, Scope.Scope>
}

/**
 * The authorizer service.
 *
 * @since 0.1.0
 * @category tags
 */
export const Authorizer = Context.GenericTag<Authorizer>("mcp-fleet/OAuth/Authorizer")

/**
 * A server's refusal: the HTTP status and its `WWW-Authenticate` header.
 *
 * @since 0.1.0
 * @category models
 */
export interface Refusal {
  readonly status: number
  readonly wwwAuthenticate?: string | undefined
}

/**
 * What a request to the server carries: the access token, and for a DPoP-bound one the
 * credentials made per request (`perRequest`), which the transport asks for each request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Credentials {
  readonly token: Redacted.Redacted<string>
  readonly perRequest: RequestAuth | undefined
}

/**
 * One server's authorization.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerAuth {
  readonly server: string
  /** The access token to send, refreshed when it expires within a minute; None before any authorization. */
  readonly accessToken: Effect.Effect<Option.Option<Redacted.Redacted<string>>, OAuthError>
  /** The access token as {@link accessToken}, with the DPoP proofs of a DPoP-bound one. */
  readonly credentials: Effect.Effect<Option.Option<Credentials>, OAuthError>
  /**
   * After a refusal: refreshes, or runs the authorization (step-up for 403
   * `insufficient_scope`, within {@link MAX_STEP_UPS}). Succeeds when a new token is there
   * to try; fails when it cannot get one.
   */
  readonly recover: (refusal: Refusal) => Effect.Effect<void, OAuthError>
  /** Runs the authorization now, whatever the stored tokens, with the Authorizer of the context. */
  readonly authorize: Effect.Effect<void, OAuthError, Authorizer>
  /** Forgets the server's tokens. */
  readonly logout: Effect.Effect<void, OAuthError>
}

/**
 * How many step-up authorizations in a row a server may ask for.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_STEP_UPS = 2
