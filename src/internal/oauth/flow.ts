/**
 * The grants, on oauth4webapi: the client's identity at an authorization server
 * (configured, Client ID Metadata Document, or Dynamic Client Registration), the
 * authorization code grant with PKCE (S256), `state`, RFC 8707 `resource` and RFC 9207
 * `iss`, the refresh grant, the grants made at the token endpoint alone (client credentials,
 * JWT bearer, enterprise-managed authorization), each with a DPoP proof when the grant has a
 * key. Every secret it handles is Redacted on the way out.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { webcrypto } from "node:crypto"
import * as oauth from "oauth4webapi"
import { fromBase64 } from "../crypto.js"
import type { Discovered } from "./discovery.js"
import * as Dpop from "./dpop.js"
import * as Http from "./http.js"
import {
  type AuthMethod,
  type AuthorizerSession,
  type ClientRecord,
  type Config,
  type Enterprise,
  OAuthError,
  type Step,
  type TokenRecord
} from "./model.js"

const fail = (server: string) => (step: Step, message: string) => new OAuthError({ server, step, message })

/** The methods of authenticating at the token endpoint that this client speaks. */
const METHODS: ReadonlyArray<AuthMethod> = ["client_secret_basic", "client_secret_post", "none"]

// RFC 8414 §2: without a list, client_secret_basic is the default.
const supportedMethods = (as: oauth.AuthorizationServer): ReadonlyArray<string> =>
  as.token_endpoint_auth_methods_supported ?? ["client_secret_basic"]

/** The method for a client with or without a secret, from what the server supports. */
export const chooseMethod = (as: oauth.AuthorizationServer, hasSecret: boolean): AuthMethod => {
  if (!hasSecret) return "none"
  const supported = supportedMethods(as)
  return supported.includes("client_secret_basic") || !supported.includes("client_secret_post")
    ? "client_secret_basic"
    : "client_secret_post"
}

// application/x-www-form-urlencoded, as RFC 6749 §2.3.1 asks of Basic credentials:
// unreserved characters stay as they are (oauth4webapi's encoder escapes "-", which
// servers that skip the decoding take literally).
const formEncode = (text: string) => new URLSearchParams([["", text]]).toString().slice(1)

const clientSecretBasic = (secret: string): oauth.ClientAuth => (_as, client, _body, headers) => {
  // Form-encoded, so ASCII: btoa takes it as it is.
  const credentials = btoa(`${formEncode(client.client_id)}:${formEncode(secret)}`)
  headers.set("authorization", `Basic ${credentials}`)
}

// WebCrypto's parameters for a JWS algorithm's private key.
const keyAlgorithm = (
  alg: string
): webcrypto.EcKeyImportParams | webcrypto.RsaHashedImportParams | webcrypto.Algorithm => {
  if (alg.startsWith("ES")) return { name: "ECDSA", namedCurve: `P-${alg === "ES512" ? 521 : alg.slice(2)}` }
  if (alg.startsWith("PS")) return { name: "RSA-PSS", hash: `SHA-${alg.slice(2)}` }
  if (alg.startsWith("RS")) return { name: "RSASSA-PKCS1-v1_5", hash: `SHA-${alg.slice(2)}` }
  return { name: "Ed25519" }
}

// private_key_jwt: the PEM key imported when the assertion is made.
const privateKeyJwt =
  (pem: Redacted.Redacted<string>, alg: string): oauth.ClientAuth => async (as, client, body, headers) => {
    const der = fromBase64(Redacted.value(pem).replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""))
    const key = await globalThis.crypto.subtle.importKey("pkcs8", der, keyAlgorithm(alg), false, ["sign"])
    return oauth.PrivateKeyJwt({ key } as unknown as Parameters<typeof oauth.PrivateKeyJwt>[0])(
      as,
      client,
      body,
      headers
    )
  }

/** The oauth4webapi client and its authentication for a record. */
export const clientOf = (record: ClientRecord): { client: oauth.Client; auth: oauth.ClientAuth } => {
  const secret = record.clientSecret === undefined ? "" : Redacted.value(record.clientSecret)
  const auth = record.authMethod === "private_key_jwt" && record.privateKey !== undefined
    ? privateKeyJwt(record.privateKey, record.signingAlgorithm ?? "ES256")
    : record.authMethod === "client_secret_basic"
    ? clientSecretBasic(secret)
    : record.authMethod === "client_secret_post"
    ? oauth.ClientSecretPost(secret)
    : oauth.None()
  return { client: { client_id: record.clientId }, auth }
}

/** The client's metadata for registration and for its Client ID Metadata Document. */
export const clientMetadata = (redirectUri: string, method: AuthMethod) => ({
  client_name: "mcp-fleet",
  redirect_uris: [redirectUri],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: method,
  application_type: "native"
})

// A registration's answer. Read here rather than by oauth4webapi, which insists on
// `client_secret_expires_at` beside a secret: servers in the field leave it out.
const registrationAnswer = async (response: Response): Promise<Record<string, unknown> & { client_id: string }> => {
  const body: unknown = await response.json().catch(() => undefined)
  const json = typeof body === "object" && body !== null ? body as Record<string, unknown> : {}
  if (response.status !== 201 && response.status !== 200) {
    const error = typeof json.error === "string" ? json.error : "no error code"
    throw new Error(`the registration endpoint answered HTTP ${response.status} (${error})`)
  }
  if (typeof json.client_id !== "string" || json.client_id === "") {
    throw new Error("the registration endpoint answered without a client_id")
  }
  return json as Record<string, unknown> & { client_id: string }
}

/** Registers with the server (RFC 7591). */
export const register = (
  server: string,
  as: oauth.AuthorizationServer,
  redirectUri: string
): Effect.Effect<ClientRecord, OAuthError> =>
  Effect.gen(function*() {
    if (as.registration_endpoint === undefined) {
      return yield* new OAuthError({
        server,
        step: "registration",
        message: `the authorization server '${as.issuer}' offers no registration; configure oauth.clientId`
      })
    }
    const supported = supportedMethods(as)
    const wanted: AuthMethod = supported.includes("none") ? "none" : chooseMethod(as, true)
    const registered = yield* Http.call("registration", fail(server), async () => {
      const response = await oauth.dynamicClientRegistrationRequest(
        as,
        clientMetadata(redirectUri, wanted),
        Http.options(as.registration_endpoint!, undefined, as)
      )
      return registrationAnswer(response)
    })
    const secret = typeof registered.client_secret === "string" ? registered.client_secret : undefined
    const given = registered.token_endpoint_auth_method
    const method = typeof given === "string" && (METHODS as ReadonlyArray<string>).includes(given)
      ? given as AuthMethod
      : chooseMethod(as, secret !== undefined)
    return {
      issuer: as.issuer,
      clientId: registered.client_id,
      ...(secret === undefined ? {} : { clientSecret: Redacted.make(secret) }),
      authMethod: method
    }
  })

/**
 * The client's identity at this server: the configured one, else one registered before with
 * the same issuer, else its Client ID Metadata Document URL when the server takes those,
 * else a new registration (`registered` is then true: the caller keeps it).
 */
export const identify = (
  server: string,
  config: Config,
  as: oauth.AuthorizationServer,
  stored: Option.Option<ClientRecord>,
  redirectUri: string
): Effect.Effect<{ readonly record: ClientRecord; readonly registered: boolean }, OAuthError> => {
  if (config.clientId !== undefined && config.privateKey !== undefined) {
    return Effect.succeed({
      record: {
        issuer: as.issuer,
        clientId: config.clientId,
        authMethod: "private_key_jwt",
        privateKey: config.privateKey,
        signingAlgorithm: config.signingAlgorithm
      },
      registered: false
    })
  }
  if (config.clientId !== undefined) {
    const secret = config.clientSecret
    return Effect.succeed({
      record: {
        issuer: as.issuer,
        clientId: config.clientId,
        ...(secret === undefined ? {} : { clientSecret: secret }),
        authMethod: chooseMethod(as, secret !== undefined)
      },
      registered: false
    })
  }
  if (Option.isSome(stored)) return Effect.succeed({ record: stored.value, registered: false })
  if (config.clientMetadataUrl !== undefined && as.client_id_metadata_document_supported === true) {
    return Effect.succeed({
      record: { issuer: as.issuer, clientId: config.clientMetadataUrl, authMethod: "none" },
      registered: false
    })
  }
  return Effect.map(register(server, as, redirectUri), (record) => ({ record, registered: true }))
}

/** What the authorization and token requests carry beyond the client. */
export interface Grant {
  readonly discovered: Discovered
  readonly client: ClientRecord
  readonly scope: string | undefined
  /** The DPoP key the token requests prove possession of; none for bearer tokens. */
  readonly dpopKey?: Redacted.Redacted<string> | undefined
}

/**
 * A token request, with a DPoP proof when the grant has a key, sent once more when the
 * server asks for a nonce (RFC 9449 §8; oauth4webapi's handle keeps the nonce it gave).
 */
const tokenRequest = <A>(
  grant: Grant,
  client: oauth.Client,
  run: (dpop: oauth.DPoPHandle | undefined) => Promise<A>
) =>
async (): Promise<A> => {
  const dpop = grant.dpopKey === undefined ? undefined : await Dpop.handle(client, grant.dpopKey)
  try {
    return await run(dpop)
  } catch (cause) {
    if (dpop === undefined || !oauth.isDPoPNonceError(cause)) throw cause
    return run(dpop)
  }
}

// A token endpoint's answer as a record.
const toRecord = (
  grant: Grant,
  result: oauth.TokenEndpointResponse,
  now: number,
  previousRefresh: Redacted.Redacted<string> | undefined
): Omit<TokenRecord, "server" | "serverUrl"> => ({
  issuer: grant.discovered.as.issuer,
  resource: grant.discovered.resource,
  clientId: grant.client.clientId,
  accessToken: Redacted.make(result.access_token),
  ...(result.refresh_token !== undefined
    ? { refreshToken: Redacted.make(result.refresh_token) }
    : previousRefresh === undefined
    ? {}
    : { refreshToken: previousRefresh }),
  ...(typeof result.expires_in === "number" ? { expiresAt: now + result.expires_in * 1000 } : {}),
  ...(result.scope !== undefined ? { scope: result.scope } : grant.scope === undefined ? {} : { scope: grant.scope }),
  ...(result.token_type === "dpop" ? { tokenType: "dpop" as const } : {}),
  ...(grant.dpopKey === undefined ? {} : { dpopKey: grant.dpopKey })
})

/** The authorization URL and what its answer is checked against. */
export const authorizationRequest = (grant: Grant, redirectUri: string) =>
  Effect.promise(async () => {
    const { as, resource } = grant.discovered
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint!)
    url.searchParams.set("response_type", "code")
    url.searchParams.set("client_id", grant.client.clientId)
    url.searchParams.set("redirect_uri", redirectUri)
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier))
    url.searchParams.set("code_challenge_method", "S256")
    url.searchParams.set("state", state)
    url.searchParams.set("resource", resource)
    if (grant.scope !== undefined) url.searchParams.set("scope", grant.scope)
    return { url, verifier, state }
  })

/**
 * The authorization code grant: the user is sent to the authorization URL by the
 * Authorizer's session, the answer is checked (`state`, `iss`), and the code exchanged.
 */
export const authorizationCode = (
  server: string,
  grant: Grant,
  session: AuthorizerSession
): Effect.Effect<Omit<TokenRecord, "server" | "serverUrl">, OAuthError> =>
  Effect.gen(function*() {
    const { as } = grant.discovered
    const methods = as.code_challenge_methods_supported
    if (as.authorization_endpoint === undefined || (methods !== undefined && !methods.includes("S256"))) {
      return yield* new OAuthError({
        server,
        step: "authorization",
        message: `the authorization server '${as.issuer}' does not offer the authorization code grant with PKCE S256`
      })
    }
    const request = yield* authorizationRequest(grant, session.redirectUri)
    const answer = yield* session.authorize(request.url)
    const { client, auth } = clientOf(grant.client)
    const params = yield* Effect.try({
      try: () => oauth.validateAuthResponse(as, client, answer, request.state),
      catch: (cause) => fail(server)("authorization", Http.describe(cause))
    })
    const result = yield* Http.call(
      "token",
      fail(server),
      tokenRequest(grant, client, async (DPoP) => {
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          client,
          auth,
          params,
          session.redirectUri,
          request.verifier,
          {
            ...Http.options(as.token_endpoint!, DPoP, as),
            additionalParameters: { resource: grant.discovered.resource }
          }
        )
        return oauth.processAuthorizationCodeResponse(as, client, response)
      })
    )
    return toRecord(grant, result, yield* Clock.currentTimeMillis, undefined)
  })

/**
 * Whether the server is for machines only: it offers the client credentials grant and not
 * the authorization code grant (the suite's `oauth-client-credentials` extension).
 */
export const isMachineOnly = (as: oauth.AuthorizationServer): boolean => {
  const grants = as.grant_types_supported
  return grants !== undefined && grants.includes("client_credentials") && !grants.includes("authorization_code")
}

/** The client credentials grant (RFC 6749 §4.4), with the resource: no person involved. */
export const clientCredentials = (
  server: string,
  grant: Grant
): Effect.Effect<Omit<TokenRecord, "server" | "serverUrl">, OAuthError> =>
  tokenGrant(server, grant, {}, async (as, client, auth, parameters, DPoP) => {
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      auth,
      parameters,
      Http.options(as.token_endpoint!, DPoP, as)
    )
    return oauth.processClientCredentialsResponse(as, client, response)
  })

// A grant made at the token endpoint alone: `extra` and the resource (and scope) sent by
// `request`, the answer kept as a token record.
const tokenGrant = (
  server: string,
  grant: Grant,
  extra: Record<string, string>,
  request: (
    as: oauth.AuthorizationServer,
    client: oauth.Client,
    auth: oauth.ClientAuth,
    parameters: URLSearchParams,
    dpop: oauth.DPoPHandle | undefined
  ) => Promise<oauth.TokenEndpointResponse>
): Effect.Effect<Omit<TokenRecord, "server" | "serverUrl">, OAuthError> =>
  Effect.gen(function*() {
    const { as, resource } = grant.discovered
    const { client, auth } = clientOf(grant.client)
    const result = yield* Http.call(
      "token",
      fail(server),
      tokenRequest(grant, client, (dpop) => {
        const parameters = new URLSearchParams({ ...extra, resource })
        if (grant.scope !== undefined) parameters.set("scope", grant.scope)
        return request(as, client, auth, parameters, dpop)
      })
    )
    return toRecord(grant, result, yield* Clock.currentTimeMillis, undefined)
  })

/** The JWT bearer grant type (RFC 7523 §2.1). */
export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

/** Whether the server takes the JWT bearer grant. */
export const takesJwtBearer = (as: oauth.AuthorizationServer): boolean =>
  as.grant_types_supported?.includes(JWT_BEARER) === true

/**
 * The JWT bearer grant (RFC 7523 §2.1): a workload identity JWT exchanged for a token. A
 * refusal is final: it is not tried again, nor another grant.
 */
export const jwtBearer = (
  server: string,
  grant: Grant,
  assertion: Redacted.Redacted<string>
): Effect.Effect<Omit<TokenRecord, "server" | "serverUrl">, OAuthError> =>
  tokenGrant(server, grant, { assertion: Redacted.value(assertion) }, async (as, client, auth, parameters, DPoP) => {
    const response = await oauth.genericTokenEndpointRequest(
      as,
      client,
      auth,
      JWT_BEARER,
      parameters,
      Http.options(as.token_endpoint!, DPoP, as)
    )
    return oauth.processGenericTokenEndpointResponse(as, client, response)
  })

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"

/**
 * Enterprise-managed authorization (SEP-990): the IdP's ID token exchanged at the IdP for an
 * ID-JAG (RFC 8693 token exchange, for this authorization server and resource), then the
 * ID-JAG exchanged for the token by the JWT bearer grant.
 */
export const enterprise = (
  server: string,
  grant: Grant,
  idp: Enterprise
): Effect.Effect<Omit<TokenRecord, "server" | "serverUrl">, OAuthError> =>
  Effect.gen(function*() {
    const endpoint = yield* Http.checkUrl(idp.idpTokenEndpoint, (message) => fail(server)("token", message))
    const idpServer: oauth.AuthorizationServer = { issuer: endpoint.origin, token_endpoint: endpoint.href }
    const client: oauth.Client = { client_id: idp.idpClientId ?? grant.client.clientId }
    const auth = idp.idpClientSecret === undefined
      ? oauth.None()
      : clientSecretBasic(Redacted.value(idp.idpClientSecret))
    const jag = yield* Http.call("token", fail(server), async () => {
      const parameters = new URLSearchParams({
        requested_token_type: ID_JAG,
        audience: grant.discovered.as.issuer,
        resource: grant.discovered.resource,
        subject_token: Redacted.value(idp.idToken),
        subject_token_type: ID_TOKEN
      })
      if (grant.scope !== undefined) parameters.set("scope", grant.scope)
      const response = await oauth.genericTokenEndpointRequest(
        idpServer,
        client,
        auth,
        TOKEN_EXCHANGE,
        parameters,
        Http.options(endpoint)
      )
      // An ID-JAG is no access token: its token_type is N_A (RFC 8693 §2.2.1).
      const result = await oauth.processGenericTokenEndpointResponse(idpServer, client, response, {
        recognizedTokenTypes: { n_a: () => {} }
      })
      if (result.issued_token_type !== ID_JAG) throw new Error("the identity provider issued no ID-JAG")
      return result.access_token
    })
    return yield* jwtBearer(server, grant, Redacted.make(jag))
  })

/** Whether a token endpoint refused a refresh token for good (revoked, expired, rotated away). */
export const isGrantRevoked = (error: OAuthError): boolean => error.step === "refresh" && error.grantRevoked === true

/** The refresh grant (RFC 6749 §6), with the resource. */
export const refresh = (
  server: string,
  grant: Grant,
  refreshToken: Redacted.Redacted<string>
): Effect.Effect<Omit<TokenRecord, "server" | "serverUrl">, OAuthError> =>
  Effect.gen(function*() {
    const { as } = grant.discovered
    const { client, auth } = clientOf(grant.client)
    const result = yield* Effect.tryPromise({
      try: tokenRequest(grant, client, async (DPoP) => {
        const response = await oauth.refreshTokenGrantRequest(as, client, auth, Redacted.value(refreshToken), {
          ...Http.options(as.token_endpoint!, DPoP, as),
          additionalParameters: { resource: grant.discovered.resource }
        })
        return oauth.processRefreshTokenResponse(as, client, response)
      }),
      catch: (cause) =>
        new OAuthError({
          server,
          step: "refresh",
          message: Http.describe(cause),
          grantRevoked: cause instanceof oauth.ResponseBodyError && cause.error === "invalid_grant"
        })
    })
    return toRecord(grant, result, yield* Clock.currentTimeMillis, refreshToken)
  })
