/**
 * `auth`: OAuth for remote servers. `mcp-fleet auth <server>` runs the authorization in the
 * browser (the URL is printed, and opened when there is a terminal) with a loopback
 * redirect; `--list` shows the stored grants, `--logout <server>` forgets one. Tokens are
 * kept in `oauth/` under the user config dir and never shown.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { spawn } from "node:child_process"
import * as NodeOAuth from "../../NodeOAuth.js"
import * as OAuth from "../../OAuth.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"

const oauthError = (error: OAuth.OAuthError) => CliError.failure(error.message)

// Opens the URL in a browser, when there is a person at a terminal to see it.
const openBrowser = (url: URL) =>
  Effect.sync(() => {
    if (!process.stdout.isTTY) return
    const command = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open"
    const child = spawn(command, [url.href], { stdio: "ignore", detached: true })
    child.on("error", () => {})
    child.unref()
  })

const show = (server: string, url: URL) =>
  Effect.zipRight(
    Render.note(`To authorize '${server}', open this URL in a browser:\n  ${url.href}`),
    openBrowser(url)
  )

// The stored grants: which server, where, until when; never a token.
const list = (settings: Settings.Settings, store: OAuth.TokenStore) =>
  Effect.gen(function*() {
    const records = yield* Effect.mapError(store.listTokens, oauthError)
    const rows = records.map((record) => ({
      server: record.server,
      url: record.serverUrl,
      issuer: record.issuer,
      scope: record.scope ?? null,
      expiresAt: record.expiresAt === undefined ? null : new Date(record.expiresAt).toISOString(),
      refreshable: record.refreshToken !== undefined
    }))
    if (settings.json) return yield* Render.json(rows)
    if (rows.length === 0) return yield* Render.note("no server is authorized")
    yield* Render.lines(Render.table([
      ["server", "issuer", "scope", "expires"],
      ...rows.map((row) => [row.server, row.issuer, row.scope ?? "", row.expiresAt ?? ""])
    ]))
  })

/**
 * `mcp-fleet auth <server>`: authorizes a remote server with OAuth; `--list`, `--logout`.
 *
 * @since 0.1.0
 */
export const auth = Command.make("auth", {
  ...Settings.options,
  server: Fleet.serverArg("server").pipe(Args.optional),
  list: Options.boolean("list").pipe(Options.withDescription("List the authorized servers (never their tokens)")),
  logout: Options.boolean("logout").pipe(Options.withDescription("Forget the server's tokens instead"))
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const store = NodeOAuth.makeFileStore(NodeOAuth.storeDir(settings.configDir))
    if (given.list) return yield* list(settings, store)
    if (Option.isNone(given.server)) return yield* CliError.usage("name the server: mcp-fleet auth <server>")
    const name = given.server.value
    const loaded = yield* Fleet.readConfig(settings)
    yield* Fleet.requireServer(loaded, name)
    const transport = loaded.servers.find((spec) => spec.name === name)!.transport
    if (transport.type !== "http" && transport.type !== "sse") {
      return yield* CliError.usage(`'${name}' is not a Streamable HTTP server; only those are authorized with OAuth`)
    }
    const server = yield* OAuth.make({ server: name, url: transport.url, config: transport.oauth }).pipe(
      Effect.provideService(OAuth.TokenStore, store),
      Effect.provideService(OAuth.Authorizer, OAuth.deferredAuthorizer)
    )
    if (given.logout) {
      yield* Effect.mapError(server.logout, oauthError)
      if (settings.json) return yield* Render.json({ action: "logout", server: name })
      return yield* Render.lines([`forgot the tokens of '${name}'`])
    }
    yield* server.authorize.pipe(
      Effect.provideService(OAuth.Authorizer, NodeOAuth.makeLoopback(show)),
      Effect.provideService(OAuth.NetworkGuard, NodeOAuth.makeNetworkGuard()),
      Effect.mapError(oauthError)
    )
    if (settings.json) return yield* Render.json({ action: "authorized", server: name })
    yield* Render.lines([`authorized '${name}'`])
  })).pipe(Command.withDescription("Authorize a remote server with OAuth in the browser; --list, --logout"))
