/**
 * Discovery: from an MCP server's URL (and the challenge of its refusal) to the resource it
 * protects, its authorization server's metadata, and the scopes to ask for.
 *
 * Protected-resource metadata (RFC 9728) comes from the challenge's `resource_metadata`, else
 * the path-aware then the root well-known URL, whatever the challenge's scheme. Its `resource`
 * must be the server's URL or a parent of it, on the same origin: another one is refused, so no
 * token for one resource is ever requested on another's word. Authorization-server metadata
 * follows the MCP spec's order: RFC 8414 path insertion, OpenID Connect path insertion, OpenID
 * Connect path appending; its `issuer` must be the one asked for. A server without
 * protected-resource metadata is a 2025-03-26 server: its origin is the authorization
 * server, and without metadata there its default endpoints (`/authorize`, `/token`,
 * `/register`) are used. Every request, and those later made to the endpoints found, goes
 * through the server's `Http.Reach`: no private address unless the server is on one (SSRF).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as oauth from "oauth4webapi"
import { safeUrl } from "../secrets.js"
import type { Refusal } from "./challenge.js"
import * as Http from "./http.js"
import { OAuthError, type Step } from "./model.js"

/** What discovery found. */
export interface Discovered {
  /** The resource indicator (RFC 8707) sent on authorization and token requests. */
  readonly resource: string
  readonly as: oauth.AuthorizationServer
  /** `scopes_supported` of the protected-resource metadata. */
  readonly resourceScopes: ReadonlyArray<string> | undefined
}

const fail = (server: string) => (step: Step, message: string) => new OAuthError({ server, step, message })

const trimSlash = (path: string) => path.replace(/\/+$/, "")

/** Where the protected-resource metadata may be, in the order to try. */
export const resourceMetadataUrls = (serverUrl: URL, fromChallenge: string | undefined): ReadonlyArray<string> => {
  const path = trimSlash(serverUrl.pathname)
  const urls = [
    ...(fromChallenge === undefined ? [] : [fromChallenge]),
    ...(path === "" ? [] : [`${serverUrl.origin}/.well-known/oauth-protected-resource${path}`]),
    `${serverUrl.origin}/.well-known/oauth-protected-resource`
  ]
  return [...new Set(urls)]
}

/** Where an issuer's metadata may be, in the MCP spec's order. */
export const authorizationServerMetadataUrls = (issuer: URL): ReadonlyArray<string> => {
  const path = trimSlash(issuer.pathname)
  const origin = issuer.origin
  return path === ""
    ? [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`]
    : [
      `${origin}/.well-known/oauth-authorization-server${path}`,
      `${origin}/.well-known/openid-configuration${path}`,
      `${origin}${path}/.well-known/openid-configuration`
    ]
}

/** Whether a protected-resource metadata's `resource` may stand for the server at `serverUrl`. */
export const resourceMatches = (resource: string, serverUrl: URL): boolean => {
  let parsed: URL
  try {
    parsed = new URL(resource)
  } catch {
    return false
  }
  if (parsed.origin !== serverUrl.origin || parsed.hash !== "") return false
  const base = trimSlash(parsed.pathname)
  const path = trimSlash(serverUrl.pathname)
  return base === "" || path === base || path.startsWith(`${base}/`)
}

const strings = (value: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(value) && value.every((item) => typeof item === "string") ? value : undefined

// The first protected-resource metadata found, validated against the server's URL.
const resourceMetadata = (server: string, serverUrl: URL, refusal: Refusal | undefined, reach: Http.Reach) =>
  Effect.gen(function*() {
    for (const url of resourceMetadataUrls(serverUrl, refusal?.resourceMetadata)) {
      const checked = yield* Effect.either(Http.checkUrl(url, (message) => fail(server)("discovery", message)))
      if (checked._tag === "Left") continue
      const document = yield* Http.getJson(url, "discovery", fail(server), reach)
      if (document === undefined) continue
      const resource = document.resource
      const servers = strings(document.authorization_servers)
      if (typeof resource !== "string" || servers === undefined || servers.length === 0) continue
      if (!resourceMatches(resource, serverUrl)) {
        return yield* new OAuthError({
          server,
          step: "discovery",
          message: `the protected-resource metadata at ${safeUrl(url)} names the resource '${
            safeUrl(resource)
          }', not this server's URL`
        })
      }
      return { resource, issuer: servers[0]!, scopes: strings(document.scopes_supported) }
    }
    return undefined
  })

// The issuer's metadata; undefined when none of its URLs has it. An issuer other than the
// one asked for is refused (RFC 8414 §3.3).
const serverMetadata = (server: string, issuer: string, reach: Http.Reach) =>
  Effect.gen(function*() {
    const issuerUrl = yield* Http.checkUrl(issuer, (message) => fail(server)("discovery", message))
    for (const url of authorizationServerMetadataUrls(issuerUrl)) {
      const document = yield* Http.getJson(url, "discovery", fail(server), reach)
      if (document === undefined) continue
      if (typeof document.issuer !== "string" || !sameIssuer(document.issuer, issuerUrl)) {
        return yield* new OAuthError({
          server,
          step: "discovery",
          message: `the authorization server metadata at ${safeUrl(url)} names the issuer '${
            String(document.issuer)
          }', not '${issuer}'`
        })
      }
      return Http.discoveredWith(document as unknown as oauth.AuthorizationServer, reach)
    }
    return undefined
  })

const sameIssuer = (issuer: string, expected: URL) => {
  try {
    return new URL(issuer).href === expected.href
  } catch {
    return false
  }
}

// 2025-03-26: the server's origin is the authorization server, at its default endpoints.
const defaultEndpoints = (origin: string): oauth.AuthorizationServer => ({
  issuer: origin,
  authorization_endpoint: `${origin}/authorize`,
  token_endpoint: `${origin}/token`,
  registration_endpoint: `${origin}/register`
})

/** Discovers the resource and its authorization server for the server at `url`. */
export const discover = (
  server: string,
  url: string,
  refusal: Refusal | undefined
): Effect.Effect<Discovered, OAuthError> =>
  Effect.gen(function*() {
    const serverUrl = yield* Http.checkUrl(url, (message) => fail(server)("discovery", message))
    const reach = yield* Http.reachOf(serverUrl)
    const prm = yield* resourceMetadata(server, serverUrl, refusal, reach)
    if (prm !== undefined) {
      const as = yield* serverMetadata(server, prm.issuer, reach)
      if (as === undefined) {
        return yield* new OAuthError({
          server,
          step: "discovery",
          message: `the authorization server '${prm.issuer}' publishes no metadata`
        })
      }
      return { resource: prm.resource, as, resourceScopes: prm.scopes }
    }
    // 2025-03-26: no protected-resource metadata; the resource is the server's URL.
    const origin = serverUrl.origin
    const as = (yield* serverMetadata(server, origin, reach)) ?? Http.discoveredWith(defaultEndpoints(origin), reach)
    return { resource: `${origin}${serverUrl.pathname}`, as, resourceScopes: undefined }
  })
