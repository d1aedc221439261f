/**
 * Authorizers without a person: the headless one requests the authorization URL itself and
 * reads the redirect (authorization servers that approve at once: tests, the conformance
 * suite); the deferred one stops with the URL, for someone to visit later.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { safeUrl } from "../secrets.js"
import * as Http from "./http.js"
import { type Authorizer, OAuthError } from "./model.js"

/** The redirect URI of an authorizer that listens nowhere. */
export const REDIRECT_URI = "http://127.0.0.1/callback"

/** Follows the authorization URL's redirect back to the client and returns its parameters. */
export const authorizer: Authorizer = {
  open: (server) =>
    Effect.succeed({
      redirectUri: REDIRECT_URI,
      authorize: (url) =>
        Effect.tryPromise({
          try: async () => {
            const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(Http.TIMEOUT_MS) })
            await response.body?.cancel()
            const location = response.headers.get("location")
            if (location === null) {
              throw new Error(`the authorization endpoint answered HTTP ${response.status}, not a redirect`)
            }
            const back = new URL(location, url)
            if (`${back.origin}${back.pathname}` !== REDIRECT_URI) {
              throw new Error(`the authorization endpoint redirected to ${safeUrl(back)}, not the redirect URI`)
            }
            return back.searchParams
          },
          catch: (cause) => new OAuthError({ server, step: "authorization", message: Http.describe(cause) })
        })
    })
}

/** Stops with the authorization URL: a person has to visit it. */
export const deferred: Authorizer = {
  open: (server) =>
    Effect.succeed({
      redirectUri: REDIRECT_URI,
      authorize: (url) =>
        Effect.fail(
          new OAuthError({
            server,
            step: "needsUser",
            message: `server '${server}' needs authorization: run 'mcp-fleet auth ${server}'`,
            authorizationUrl: url.href
          })
        )
    })
}
