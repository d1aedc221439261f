/**
 * Project config trust at the command line (see ConfigTrust): a config file found in the
 * working directory starts nothing until its user has trusted it. On a terminal the CLI
 * shows what the file would start (each entry's command line, shell-quoted, with the
 * variables that change what runs) and asks; otherwise it stops with how to trust the file.
 * `--trust` (or `MCP_FLEET_TRUST=1`) runs it this once, for CI. A running `serve` or
 * `watch` applies an edit of such a file only when the new content is trusted.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as NodePath from "node:path"
import * as readline from "node:readline"
import * as ConfigTrust from "../ConfigTrust.js"
import * as FleetConfig from "../FleetConfig.js"
import * as Jsonc from "../internal/jsonc.js"
import * as Secrets from "../internal/secrets.js"
import * as ServerSpec from "../ServerSpec.js"
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
 * A config file as trust sees it: the text its trust digests (`ConfigTrust.subject`: the
 * file and its env files), and what it would start, one server a line.
 *
 * @since 0.1.0
 */
export interface Content {
  readonly subject: string
  readonly servers: ReadonlyArray<string>
}

/**
 * Reads the env files `text` (the content of `path`) names and describes what it starts.
 *
 * @since 0.1.0
 */
export const content = (path: string, text: string): Effect.Effect<Content, never, FileSystem.FileSystem> =>
  FleetConfig.resolveFile(text, path, process.env, NodePath).pipe(
    Effect.map((resolved) => ({
      subject: ConfigTrust.subject(text, resolved.envFiles),
      servers: Render.table([
        ["server", "runs"],
        ...resolved.servers.map((spec) => [spec.name, entryLine(spec, rawEntry(text, spec.name))])
      ]).slice(2)
    })),
    Effect.catchAll((error) => Effect.succeed({ subject: text, servers: [error.message] }))
  )

// A word as the shell reads it: quoted unless it is plainly one word.
const quote = (word: string) => /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

// Variables that change what a program runs or loads: shown with their value, since
// they are how an env file takes over a server; other values are masked.
const steering =
  /^(NODE_OPTIONS|NODE_PATH|LD_\w+|DYLD_\w+|PATH|PYTHON\w*|PERL5\w*|RUBY\w*|BASH_ENV|ENV|\w*JAVA\w*_OPTIONS|GIT_\w+)$/

// An entry's fields as written in the file (variables unexpanded).
interface RawEntry {
  readonly command?: unknown
  readonly args?: unknown
  readonly url?: unknown
  readonly envFile?: unknown
}

const words = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.map(String) : typeof value === "string" ? [value] : []

// What one server runs: a stdio command line with its environment (`A=x cmd 'an arg'`), a
// URL without its credentials or query; an entry that cannot be used, as written.
const entryLine = (spec: ServerSpec.ServerSpec, raw: RawEntry | undefined): string => {
  const transport = spec.transport
  if (spec.problem !== undefined) {
    const written = raw?.url !== undefined
      ? `${String(raw.url)}`
      : [...words(raw?.command), ...words(raw?.args)].map(quote).join(" ")
    const envFile = typeof raw?.envFile === "string" ? ` (envFile ${raw.envFile})` : ""
    return `${Secrets.scrubUrls(written)}${envFile} (cannot run: ${spec.problem})`
  }
  if (transport.type === "custom") return "custom transport"
  if (transport.type !== "stdio") return `${transport.type}: ${Secrets.safeUrl(transport.url)}`
  const masker = Secrets.make(ServerSpec.secrets(spec))
  const env = Object.entries(transport.env ?? {}).map(([name, value]) =>
    `${name}=${steering.test(name) ? quote(Redacted.isRedacted(value) ? Redacted.value(value) : value) : "…"}`
  )
  const line = [...env, ...[transport.command, ...(transport.args ?? [])].map((word) => quote(masker.text(word)))]
  return `${line.join(" ")}${transport.cwd === undefined ? "" : ` (in ${transport.cwd})`}`
}

// The entry of `name` as written, for a server whose fields could not all be resolved.
const rawEntry = (text: string, name: string): RawEntry | undefined => {
  const json = Jsonc.parse(text.replace(/^\uFEFF/, ""))
  if (Either.isLeft(json)) return undefined
  const file = json.right as { readonly mcpServers?: unknown; readonly servers?: unknown } | null
  const entry = (file?.mcpServers as Record<string, unknown> | undefined)?.[name] ??
    (file?.servers as Record<string, unknown> | undefined)?.[name]
  return typeof entry === "object" && entry !== null ? entry as RawEntry : undefined
}

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
      const seen = yield* content(path, text.value)
      const verdict = yield* trust.check(path, seen.subject)
      if (verdict._tag === "Trusted") continue
      const terminal = !settings.json && process.stdin.isTTY === true && process.stderr.isTTY === true
      if (!terminal) return yield* refusal(path, text.value, verdict)
      yield* Render.note([
        `${Settings.tilde(path)} ${
          verdict._tag === "Changed"
            ? "changed since you trusted it"
            : "is a project config mcp-fleet has not run before"
        }. It starts:`,
        ...seen.servers.map((line) => `  ${line}`)
      ].join("\n"))
      const yes = yield* ask("Trust it? Its servers run with your permissions. [y/N] ")
      if (!yes) return yield* refusal(path, text.value, verdict)
      yield* trust.trust(path, seen.subject).pipe(Effect.mapError((error) => CliError.failure(error.message)))
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
  Effect.zipWith(records(settings), FileSystem.FileSystem, (trust, fs) => (path: string, text: string) => {
    if (settings.trust || !settings.project.includes(path)) return Effect.void
    const verdict = content(path, text).pipe(
      Effect.flatMap((seen) => trust.check(path, seen.subject)),
      Effect.provideService(FileSystem.FileSystem, fs)
    )
    return Effect.flatMap(verdict, (verdict) =>
      verdict._tag === "Trusted" ? Effect.void : Effect.fail(
        new FleetConfig.ConfigError({
          path,
          reason:
            `it changed since it was trusted, so the edit is not applied; review it, run 'mcp-fleet trust' and restart`
        })
      ))
  })
