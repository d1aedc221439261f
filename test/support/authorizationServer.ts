// The OAuth authorization server fixture (fixtures/oauth-server.mjs) on 127.0.0.1 for the
// length of a Scope, as the tests of a protected McpServer endpoint use it: its issuer URL
// and the JWT access tokens it mints.
import * as Effect from "effect/Effect"
// @ts-expect-error: a JavaScript fixture without types
import { start } from "../fixtures/oauth-server.mjs"

/** The running authorization server: its issuer, and `jwt` to mint an access token with `claims`. */
export interface AuthorizationServer {
  readonly base: string
  readonly tokens: { readonly jwt: (claims: Record<string, unknown>) => string }
  readonly close: () => Promise<void>
}

/** An authorization server, closed with the Scope. */
export const authorizationServer = Effect.acquireRelease(
  Effect.promise(() => start() as Promise<AuthorizationServer>),
  (server) => Effect.promise(() => server.close())
)
