/**
 * Project config trust at the command line (see ConfigTrust): a config file found in the
 * working directory starts nothing until its user has trusted it. On a terminal the CLI
 * shows what the file would start and asks; otherwise it stops with how to trust the file.
 * `--trust` (or `MCP_FLEET_TRUST=1`) runs it this once, for CI. A running `serve` or
 * `watch` applies an edit of such a file only when the new content is trusted.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as NodePath from "node:path"
import * as readline from "node:readline"
import * as ConfigTrust from "../ConfigTrust.js"
import * as FleetConfig from "../FleetConfig.js"
import * as CliError from "./CliError.js"
import * as Render from "./Render.js"
import * as Settings from "./Settings.js"

/**
 * The trust records of the user config dir.
 *
 * @since 0.1.0
 */
export const records = (
  settings: Settings.Settings
): Effect.Effect<ConfigTrust.ConfigTrust, never, FileSystem.FileSystem> =>
  ConfigTrust.make({ directory: settings.configDir })

/**
 * What a config file would start, one server a line: its name and where it runs.
 *
 * @since 0.1.0
 */
export const servers = (path: string, text: string): ReadonlyArray<string> =>
  Either.match(FleetConfig.parse(text, path, process.env, NodePath), {
    onLeft: (error) => [error.message],
    onRight: (specs) =>
      Render.table([["server", "runs"], ...specs.map((spec) => [spec.name, Render.where(spec)])]).slice(2)
  })

// Asks a yes/no question on the terminal; anything but y/yes is no.
const ask = (question: string): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    const prompt = readline.createInterface({ input: process.stdin, output: process.stderr })
    prompt.question(question, (answer) => {
      prompt.close()
      resume(Effect.succeed(/^y(es)?$/i.test(answer.trim())))
    })
    return Effect.sync(() => prompt.close())
  })

const names = (path: string, text: string) =>
  Either.match(FleetConfig.parse(text, path, process.env, NodePath), {
    onLeft: () => "",
    onRight: (specs) => specs.length === 0 ? "" : ` (${specs.map((spec) => spec.name).join(", ")})`
  })

// Why a file did not run, and what to do about it.
const refusal = (path: string, text: string, verdict: ConfigTrust.Verdict) =>
  CliError.usage(
    `${Settings.tilde(path)} ${
      verdict._tag === "Changed"
        ? `changed since it was trusted (${verdict.trustedAt})`
        : "is a project config not trusted yet"
    }, so its servers${names(path, text)} were not started: review it, then run 'mcp-fleet trust'${
      verdict._tag === "Changed" ? " again" : ""
    } in this folder (or pass --trust to run it this once)`
  )

/**
 * Makes sure the project files of `settings` may run: trusted already, `--trust` given, or
 * trusted now by the person at the terminal. Fails with exit code 2 and how to trust the
 * file otherwise. A file that cannot be read is left to the load to report.
 *
 * @since 0.1.0
 */
export const ensure = (settings: Settings.Settings): Effect.Effect<void, CliError.CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (settings.project.length === 0 || settings.trust) return
    const trust = yield* records(settings)
    const fs = yield* FileSystem.FileSystem
    for (const path of settings.project) {
      const text = yield* Effect.option(fs.readFileString(path))
      if (text._tag === "None") continue
      const verdict = yield* trust.check(path, text.value)
      if (verdict._tag === "Trusted") continue
      const terminal = !settings.json && process.stdin.isTTY === true && process.stderr.isTTY === true
      if (!terminal) return yield* refusal(path, text.value, verdict)
      yield* Render.note([
        `${Settings.tilde(path)} ${
          verdict._tag === "Changed"
            ? "changed since you trusted it"
            : "is a project config mcp-fleet has not run before"
        }. It starts:`,
        ...servers(path, text.value).map((line) => `  ${line}`)
      ].join("\n"))
      const yes = yield* ask("Trust it? Its servers run with your permissions. [y/N] ")
      if (!yes) return yield* refusal(path, text.value, verdict)
      yield* trust.trust(path, text.value).pipe(Effect.mapError((error) => CliError.failure(error.message)))
    }
  })

/**
 * The check a running `serve` or `watch` puts every read of the files through: an edit of a
 * project file is applied only when its new content is trusted (or `--trust` was given);
 * otherwise it is reported and the last good config kept.
 *
 * @since 0.1.0
 */
export const admit = (
  settings: Settings.Settings
): Effect.Effect<FleetConfig.LoadOptions["admit"], never, FileSystem.FileSystem> =>
  Effect.map(records(settings), (trust) => (path: string, text: string) => {
    if (settings.trust || !settings.project.includes(path)) return Effect.void
    return Effect.flatMap(trust.check(path, text), (verdict) =>
      verdict._tag === "Trusted" ? Effect.void : Effect.fail(
        new FleetConfig.ConfigError({
          path,
          reason:
            `it changed since it was trusted, so the edit is not applied; review it, run 'mcp-fleet trust' and restart`
        })
      ))
  })
