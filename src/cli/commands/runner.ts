/**
 * `runner`: this process hosts servers of a cluster (`--cluster <postgres-url>`): the shards
 * PostgreSQL assigns it, and their servers, as they come and go. It follows its config files
 * as `serve` does: every runner of a cluster is given the same config. With `--json` it prints
 * one line, `{"runner":"host:port","servers":N}`, once it has joined.
 *
 * @since 0.3.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"

/**
 * The `--listen host:port` option of `runner` and `serve --runner`.
 *
 * @since 0.3.0
 */
export const listenOption = Options.text("listen").pipe(
  Options.withPseudoName("host:port"),
  Options.withDescription(
    "Where this runner listens for the other runners and gateways, as host:port (port 0: any free port; " +
      "default 127.0.0.1:0). Other machines reach it at that host"
  ),
  Options.withDefault("127.0.0.1:0")
)

/**
 * The settings of a process that hosts servers on the cluster, listening at `listen`.
 *
 * @since 0.3.0
 */
export const asRunner = (
  settings: Settings.Settings,
  listen: string
): Effect.Effect<Settings.Settings, CliError.CliError> => {
  const match = /^(.+):(\d+)$/.exec(listen)
  const port = match === null ? NaN : Number(match[2])
  if (match === null || port > 65535) {
    return Effect.fail(CliError.usage(`--listen '${listen}' is not host:port (such as 127.0.0.1:0 or 0.0.0.0:7000)`))
  }
  if (settings.cluster === undefined) return Effect.fail(CliError.usage("a runner needs --cluster <postgres-url>"))
  return Effect.succeed({ ...settings, cluster: { ...settings.cluster, runner: { host: match[1]!, port } } })
}

/**
 * `mcp-fleet runner --cluster <url> --config <file> [--listen host:port] [--json]`.
 *
 * @since 0.3.0
 */
export const runner = Command.make(
  "runner",
  { ...Settings.options, listen: listenOption },
  (given) =>
    Effect.gen(function*() {
      const settings = yield* asRunner(yield* Root.settings(given), given.listen)
      let address: string | undefined
      const { loaded } = yield* Fleet.follow({
        ...settings,
        cluster: { ...settings.cluster!, onJoined: (runner) => (address = runner) }
      })
      if (settings.json) yield* Render.lines([JSON.stringify({ runner: address, servers: loaded.servers.length })])
      else {yield* Render.note(
          `mcp-fleet runner ${address} joined the cluster (${loaded.servers.length} servers configured)`
        )}
      return yield* Effect.never
    }).pipe(Effect.scoped)
).pipe(
  Command.withDescription(
    "Host servers of a cluster: runner --cluster <postgres-url> --config <file> (each server runs on one runner; " +
      "when a runner dies its servers start on the others)"
  )
)
