/**
 * How the authorization client reaches the network: oauth4webapi's requests on `fetch`,
 * plain HTTP allowed only to loopback hosts (local servers and test fixtures), redirects not
 * followed, each request bounded in time. Against SSRF, a server's discovery decides its
 * `Reach`: unless the MCP server itself is on a private, loopback or link-local address,
 * its metadata, registration, token and JWKS requests are refused on such addresses; with a
 * `NetworkGuard` (Node) the address checked is the one connected to, else the URL's host
 * when it is an IP literal or `localhost`. Failures become {@link OAuthError}s that name the
 * server and the step, never a request or a token.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as oauth from "oauth4webapi"
import { scrubUrls } from "../secrets.js"
import { NetworkGuard, type OAuthError, type Step } from "./model.js"

/** How long one request to an authorization or resource server may take. */
export const TIMEOUT_MS = 15_000

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"])

/** Whether plain HTTP is allowed to this URL: loopback hosts only. */
export const insecureAllowed = (url: string | URL): boolean => {
  const parsed = typeof url === "string" ? new URL(url) : url
  return parsed.protocol === "http:" && LOOPBACK.has(parsed.hostname)
}

// IPv4 ranges that are not the public internet: this host, private (RFC 1918), shared
// (RFC 6598), loopback, link-local (cloud metadata), IETF, benchmarking, multicast, reserved.
const privateV4 = (parts: ReadonlyArray<number>): boolean => {
  const [a, b] = parts as [number, number]
  return a === 0 || a === 10 || a === 127 || a >= 224 || (a === 100 && b >= 64 && b < 128) ||
    (a === 169 && b === 254) || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) ||
    (a === 192 && b === 0 && parts[2] === 0) || (a === 198 && (b === 18 || b === 19))
}

const v4 = (text: string): ReadonlyArray<number> | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) < 256)) return undefined
  return parts.map(Number)
}

/**
 * Whether an IP address (IPv4, or IPv6 with or without brackets) is not on the public
 * internet: private, loopback, link-local, unique-local, unspecified, multicast or reserved.
 * A text that is no IP address is not.
 */
export const isPrivateAddress = (address: string): boolean => {
  const ip = address.replace(/^\[|\]$/g, "").toLowerCase()
  const four = v4(ip)
  if (four !== undefined) return privateV4(four)
  if (!ip.includes(":")) return false
  const mapped = /^(?:0*:)*:?ffff:(.+)$/.exec(ip)?.[1]
  if (mapped !== undefined) {
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(mapped)
    const n = hex === null ? undefined : (parseInt(hex[1]!, 16) << 16 >>> 0) + parseInt(hex[2]!, 16)
    return privateV4(v4(mapped) ?? (n === undefined ? [0] : [n >>> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255]))
  }
  return ip === "::" || ip === "::1" || /^f[cd]/.test(ip) || /^fe[89ab]/.test(ip) || ip.startsWith("ff")
}

/** Whether a URL's host is, without resolving it, a private address (or `localhost`). */
export const isPrivateHost = (hostname: string): boolean =>
  /^localhost\.?$/i.test(hostname) || /\.localhost\.?$/i.test(hostname) || isPrivateAddress(hostname)

/** How one server's authorization reaches the network (see the header). */
export interface Reach {
  readonly allowPrivate: boolean
  readonly fetch: typeof globalThis.fetch
}

const urlOf = (input: Parameters<typeof globalThis.fetch>[0]): URL =>
  new URL(typeof input === "string" || input instanceof URL ? input : input.url)

// The URL's own host checked, then the guard's (or the runtime's) fetch.
const checked = (allowPrivate: boolean, base: typeof globalThis.fetch): typeof globalThis.fetch => (input, init) => {
  const url = urlOf(input)
  return !allowPrivate && isPrivateHost(url.hostname)
    ? Promise.reject(new Error(refusal(url.host)))
    : base(input, init)
}

/** Why a request to `host` was refused. */
export const refusal = (host: string): string =>
  `${host} is a private, loopback or link-local address, and the MCP server is not: refused`

/** Requests anywhere: for URLs a person configured (an IdP, the gateway's own issuer). */
export const open: Reach = { allowPrivate: true, fetch: (input, init) => globalThis.fetch(input, init) }

/**
 * The reach of the server at `serverUrl`: private addresses only when it is on one itself
 * (its host is one, or, with a NetworkGuard, resolves to one).
 */
export const reachOf = (serverUrl: URL): Effect.Effect<Reach> =>
  Effect.flatMap(Effect.serviceOption(NetworkGuard), (guard) =>
    Effect.map(
      isPrivateHost(serverUrl.hostname) || Option.isNone(guard)
        ? Effect.succeed(isPrivateHost(serverUrl.hostname))
        : Effect.orElseSucceed(
          Effect.tryPromise(() => guard.value.isPrivate(serverUrl.hostname.replace(/^\[|\]$/g, ""))),
          () => false
        ),
      (allowPrivate) => ({
        allowPrivate,
        fetch: checked(
          allowPrivate,
          Option.match(guard, { onNone: () => open.fetch, onSome: (found) => found.fetch(allowPrivate) })
        )
      })
    ))

// The reach each authorization server's metadata was discovered with, for its endpoints.
const reaches = new WeakMap<oauth.AuthorizationServer, Reach>()

/** Remembers that `as` was discovered with `reach`: its endpoints are reached the same way. */
export const discoveredWith = (as: oauth.AuthorizationServer, reach: Reach): oauth.AuthorizationServer => {
  reaches.set(as, reach)
  return as
}

/**
 * The options oauth4webapi takes for a request to `url`, with a DPoP proof when `dpop` is
 * given; through the reach `as` was discovered with, when given.
 */
export const options = (
  url: string | URL,
  dpop?: oauth.DPoPHandle | undefined,
  as?: oauth.AuthorizationServer | undefined
): {
  [oauth.allowInsecureRequests]: boolean
  [oauth.customFetch]: (url: string, init: oauth.CustomFetchOptions<any, any>) => Promise<Response>
  signal: () => AbortSignal
  DPoP?: oauth.DPoPHandle
} => ({
  [oauth.allowInsecureRequests]: insecureAllowed(url),
  [oauth.customFetch]: (target, init) =>
    ((as === undefined ? undefined : reaches.get(as))?.fetch ?? open.fetch)(target, init as RequestInit),
  signal: () => AbortSignal.timeout(TIMEOUT_MS),
  ...(dpop === undefined ? {} : { DPoP: dpop })
})

/** Refuses a plain-HTTP URL outside loopback (the spec's HTTPS requirement). */
export const checkUrl = (url: string, fail: (message: string) => OAuthError): Effect.Effect<URL, OAuthError> =>
  Effect.suspend(() => {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return Effect.fail(fail(`'${scrubUrls(url)}' is not a URL`))
    }
    if (parsed.protocol === "https:" || insecureAllowed(parsed)) return Effect.succeed(parsed)
    return Effect.fail(fail(`'${scrubUrls(url)}' is neither HTTPS nor a loopback address`))
  })

/** Why a request or its processing failed, as text with no URL query or credentials. */
export const describe = (cause: unknown): string => {
  if (cause instanceof oauth.ResponseBodyError) {
    return `${cause.error}${
      cause.error_description === undefined ? "" : ` (${cause.error_description})`
    }, HTTP ${cause.status}`
  }
  if (cause instanceof oauth.AuthorizationResponseError) {
    return `${cause.error}${cause.error_description === undefined ? "" : ` (${cause.error_description})`}`
  }
  // fetch says "fetch failed" and keeps why (a refused address, a DNS error) in its cause.
  const inner = cause instanceof Error && cause.cause instanceof Error ? `: ${cause.cause.message}` : ""
  return scrubUrls(cause instanceof Error ? `${cause.message}${inner}` : String(cause))
}

/** A GET of a JSON document; undefined when the server answers anything but 200 JSON. */
export const getJson = (
  url: string,
  step: Step,
  fail: (step: Step, message: string) => OAuthError,
  reach: Reach = open
) =>
  Effect.tryPromise({
    try: async () => {
      const response = await reach.fetch(url, {
        headers: { accept: "application/json" },
        redirect: "manual",
        signal: AbortSignal.timeout(TIMEOUT_MS)
      })
      if (response.status !== 200) {
        await response.body?.cancel()
        return undefined
      }
      const body: unknown = await response.json()
      return typeof body === "object" && body !== null && !Array.isArray(body)
        ? body as Record<string, unknown>
        : undefined
    },
    catch: (cause) => fail(step, `${scrubUrls(url)}: ${describe(cause)}`)
  })

/** Runs one oauth4webapi call, its failure told as `step`. */
export const call = <A>(step: Step, fail: (step: Step, message: string) => OAuthError, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (cause) => fail(step, describe(cause)) })
