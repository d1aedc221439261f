/**
 * The authorizer of a person at this machine: a loopback redirect listener
 * (`http://127.0.0.1:<port>/callback`, RFC 8252 §7.3) owned by the session's Scope, the
 * authorization URL shown (and opened in a browser when `open` is given), and the redirect's
 * parameters taken from the first request to `/callback`.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as http from "node:http"
import { type Authorizer, OAuthError } from "./model.js"

/** How long a person has to finish the authorization. */
export const WAIT = "5 minutes"

const PAGE = "<!doctype html><title>mcp-fleet</title><p>Authorized. You can close this page.</p>\n"

/** An authorizer that shows the URL with `show` and listens for the redirect. */
export const make = (show: (server: string, url: URL) => Effect.Effect<void>): Authorizer => ({
  open: (server, callbackPort) =>
    Effect.gen(function*() {
      const answer = yield* Deferred.make<URLSearchParams>()
      const listener = http.createServer((request, response) => {
        const url = new URL(request.url ?? "/", "http://127.0.0.1")
        if (url.pathname !== "/callback") {
          response.writeHead(404).end()
          return
        }
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE)
        Deferred.unsafeDone(answer, Effect.succeed(url.searchParams))
      })
      const port = yield* Effect.acquireRelease(
        Effect.async<number, OAuthError>((resume) => {
          listener.once("error", (error) =>
            resume(Effect.fail(
              new OAuthError({
                server,
                step: "authorization",
                message: `cannot listen on 127.0.0.1:${callbackPort ?? 0} for the redirect: ${error.message}`
              })
            )))
          listener.listen(callbackPort ?? 0, "127.0.0.1", () =>
            resume(Effect.succeed((listener.address() as { port: number }).port)))
        }),
        () =>
          Effect.sync(() =>
            listener.close()
          )
      )
      return {
        redirectUri: `http://127.0.0.1:${port}/callback`,
        authorize: (url: URL) =>
          Effect.zipRight(
            show(server, url),
            Deferred.await(answer).pipe(Effect.timeoutFail({
              duration: WAIT,
              onTimeout: () =>
                new OAuthError({ server, step: "authorization", message: `no answer from the browser within ${WAIT}` })
            }))
          )
      }
    })
})
