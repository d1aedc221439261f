/**
 * How the authorization client reaches the network: oauth4webapi's requests on `fetch`,
 * plain HTTP allowed only to loopback hosts (local servers and test fixtures), redirects not
 * followed, each request bounded in time. Failures become {@link OAuthError}s that name the
 * server and the step, never a request or a token.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import { scrubUrls } from "../secrets.js"
import type { OAuthError, Step } from "./model.js"

/** How long one request to an authorization or resource server may take. */
export const TIMEOUT_MS = 15_000

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"])

/** Whether plain HTTP is allowed to this URL: loopback hosts only. */
export const insecureAllowed = (url: string | URL): boolean => {
  const parsed = typeof url === "string" ? new URL(url) : url
  return parsed.protocol === "http:" && LOOPBACK.has(parsed.hostname)
}

/** The options oauth4webapi takes for a request to `url`, with a DPoP proof when `dpop` is given. */
export const options = (
  url: string | URL,
  dpop?: oauth.DPoPHandle | undefined
): { [oauth.allowInsecureRequests]: boolean; signal: () => AbortSignal; DPoP?: oauth.DPoPHandle } => ({
  [oauth.allowInsecureRequests]: insecureAllowed(url),
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
  return scrubUrls(cause instanceof Error ? cause.message : String(cause))
}

/** A GET of a JSON document; undefined when the server answers anything but 200 JSON. */
export const getJson = (url: string, step: Step, fail: (step: Step, message: string) => OAuthError) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(url, {
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
