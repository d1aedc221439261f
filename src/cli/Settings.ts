/**
 * The options every command takes (`--config`, `--json`, `--timeout`, `--log-level`) and
 * the config files they lead to. `--log-level` is taken out of the command line before
 * @effect/cli parses it, so that it is accepted anywhere, before or after the command.
 *
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import * as os from "node:os"
import * as NodePath from "node:path"
import * as ConfigTrust from "../ConfigTrust.js"
import * as FleetConfig from "../FleetConfig.js"
import * as McpSchema from "../McpSchema.js"
import * as CliError from "./CliError.js"

/**
 * A `--timeout` option with the given description (`call` says more than the others).
 *
 * @since 0.1.0
 */
export const timeoutOption = (description: string) =>
  Options.text("timeout").pipe(
    Options.withPseudoName("duration"),
    Options.withDescription(description),
    Options.optional
  )

/**
 * The global options, accepted before the command name and after it.
 *
 * @since 0.1.0
 */
export const options = {
  config: Options.text("config").pipe(
    Options.withAlias("c"),
    Options.withPseudoName("file"),
    Options.withDescription(
      "A config file (mcpServers or servers format); repeat to merge several, later ones winning. " +
        "It must exist. Default: ./.mcp.json, else ./mcp.json, ./.vscode/mcp.json, ./.cursor/mcp.json " +
        "(once trusted: see 'mcp-fleet trust'), else ~/.config/mcp-fleet/mcp.json; and this project's " +
        "local-scope file (see 'add --scope')"
    ),
    Options.repeated
  ),
  json: Options.boolean("json").pipe(
    Options.withDescription("Print machine-readable JSON on stdout (errors as a JSON object on stderr)")
  ),
  timeout: timeoutOption(
    "How long to wait for servers to start and for each answer: 30s, 500ms, 2m, or a number of seconds " +
      "(default 30s)"
  ),
  trust: Options.boolean("trust").pipe(
    Options.withDescription(
      "Run a config found in the working directory without asking, this time only (for CI; also MCP_FLEET_TRUST=1)"
    )
  ),
  root: Options.text("root").pipe(
    Options.withPseudoName("folder"),
    Options.withDescription(
      "A folder the servers may work in (MCP roots); repeat for several. Default: none declared, so each " +
        "server keeps to the folders its own arguments name"
    ),
    Options.repeated
  ),
  protocol: Options.choice("protocol", [
    ...McpSchema.SUPPORTED_PROTOCOL_VERSIONS,
    ...McpSchema.MODERN_PROTOCOL_VERSIONS
  ])
    .pipe(
      Options.withPseudoName("version"),
      Options.withDescription(
        "The MCP revision to speak to every server (a server's own protocolVersion in the config wins). " +
          "Default: probe for 2026-07-28, else the newest revision the server speaks"
      ),
      Options.optional
    ),
  cluster: Options.redacted("cluster").pipe(
    Options.withPseudoName("postgres-url"),
    Options.withDescription(
      "Work on the cluster whose PostgreSQL is at this URL (see 'mcp-fleet runner'): servers run on its runners, " +
        "this process only reads the fleet and sends to it"
    ),
    Options.optional
  )
}

/**
 * The levels `--log-level` takes.
 *
 * @since 0.1.0
 */
export const logLevels = ["all", "trace", "debug", "info", "warning", "error", "fatal", "none"] as const

/**
 * What `--log-level` does, for the help.
 *
 * @since 0.1.0
 */
export const logLevelDescription = "Show the fleet's logs on stderr from this level up (default: error). " +
  "warning adds servers that fail and restart; debug adds every line servers write to stderr"

const logLevelOf: Record<(typeof logLevels)[number], LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/**
 * Takes `--log-level <level>` (or `--log-level=<level>`) out of the command line, wherever it
 * is before `--`; the last one given wins. Fails with a usage error for an unknown level.
 *
 * @since 0.1.0
 */
export const takeLogLevel = (
  args: ReadonlyArray<string>
): Either.Either<
  { readonly args: ReadonlyArray<string>; readonly level: Option.Option<LogLevel.LogLevel> },
  CliError.CliError
> => {
  const rest: Array<string> = []
  let level: Option.Option<LogLevel.LogLevel> = Option.none()
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") return Either.right({ args: rest.concat(args.slice(i)), level })
    if (arg !== "--log-level" && !arg.startsWith("--log-level=")) {
      rest.push(arg)
      continue
    }
    const value = arg === "--log-level" ? args[++i] : arg.slice("--log-level=".length)
    const known = logLevels.find((name) => name === value?.toLowerCase())
    if (known === undefined) {
      return Either.left(CliError.usage(
        value === undefined
          ? `--log-level needs a level: ${logLevels.join(", ")}`
          : `--log-level '${value}' is not one of ${logLevels.join(", ")}`
      ))
    }
    level = Option.some(logLevelOf[known])
  }
  return Either.right({ args: rest, level })
}

/**
 * The parsed global options of the command line.
 *
 * @since 0.1.0
 */
export interface Given {
  readonly config: ReadonlyArray<string>
  readonly json: boolean
  readonly timeout: Option.Option<string>
  readonly trust: boolean
  readonly root: ReadonlyArray<string>
  readonly protocol: Option.Option<McpSchema.Revision>
  readonly cluster: Option.Option<Redacted.Redacted>
}

/**
 * The settings a command runs with.
 *
 * @since 0.1.0
 */
export interface Settings {
  /** The config files to read, lowest precedence first. */
  readonly paths: ReadonlyArray<string>
  /** How they were chosen, for the "config: ..." line. */
  readonly source: "--config" | "MCP_FLEET_CONFIG" | "default" | "none"
  readonly json: boolean
  readonly timeout: Duration.Duration
  /**
   * The config files found in the working directory (not named, not the user's own): they
   * start nothing until trusted (see ConfigTrust).
   */
  readonly project: ReadonlyArray<string>
  /** `--trust` or `MCP_FLEET_TRUST=1`: run the project files without asking, this time. */
  readonly trust: boolean
  /** The user config dir: the user's own config, trust records and tool pins. */
  readonly configDir: string
  /**
   * The folders the servers may work in (MCP roots), absolute: `--root`, else none (no roots
   * declared at all, so that a server never gets a folder wider than the user named).
   */
  readonly roots: ReadonlyArray<string>
  /** `--protocol`: the revision to speak to servers that do not name their own; undefined to negotiate. */
  readonly protocolVersion?: McpSchema.Revision | undefined
  /**
   * `--cluster`: the cluster's PostgreSQL URL, and where this process listens when it hosts
   * servers too (`runner`, `serve --runner`); undefined for the single-process fleet.
   */
  readonly cluster?: {
    readonly url: Redacted.Redacted
    readonly runner?: { readonly host: string; readonly port: number } | undefined
    /** Told this process's runner address (`host:port`) once it has joined, for `runner --json`. */
    readonly onJoined?: ((runner: string | undefined) => void) | undefined
  } | undefined
}

/**
 * Options given after the command name win over the same ones given before it.
 *
 * @since 0.1.0
 */
export const merge = (before: Given, after: Given): Given => ({
  config: after.config.length > 0 ? after.config : before.config,
  json: before.json || after.json,
  timeout: Option.orElse(after.timeout, () => before.timeout),
  trust: before.trust || after.trust,
  root: after.root.length > 0 ? after.root : before.root,
  protocol: Option.orElse(after.protocol, () => before.protocol),
  cluster: Option.orElse(after.cluster, () => before.cluster)
})

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/**
 * Reads `30s`, `500ms`, `2m`, `1h` or a plain number of seconds (zero included).
 *
 * @since 0.1.0
 */
export const parseDuration = (text: string): Option.Option<Duration.Duration> => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text)
  if (match === null) return Option.none()
  return Option.some(Duration.millis(Number(match[1]) * units[match[2] ?? "s"]!))
}

/**
 * A duration above zero given to `flag` (see `parseDuration`), or a usage error saying so.
 *
 * @since 0.1.0
 */
export const duration = (flag: string, text: string): Effect.Effect<Duration.Duration, CliError.CliError> =>
  Option.match(Option.filter(parseDuration(text), (value) => Duration.toMillis(value) > 0), {
    onNone: () => Effect.fail(CliError.usage(`${flag} '${text}' is not a duration such as 30s, 500ms or 2m`)),
    onSome: Effect.succeed
  })

/**
 * The files looked for when no `--config` and no `MCP_FLEET_CONFIG` is given, in order:
 * the first one that exists is used. VS Code's and Cursor's project files are found as
 * `.mcp.json` is (and trusted the same way).
 */
const defaultCandidates = (cwd: string, configDir: string): ReadonlyArray<string> => [
  NodePath.join(cwd, ".mcp.json"),
  NodePath.join(cwd, "mcp.json"),
  NodePath.join(cwd, ".vscode", "mcp.json"),
  NodePath.join(cwd, ".cursor", "mcp.json"),
  NodePath.join(configDir, "mcp.json")
]

/**
 * The file of the `local` scope for the project in `cwd` (as Claude Code's: this project's
 * servers, private to the user): in the user config dir, `projects/<folder>-<hash>.json`,
 * the hash of the project's absolute path. It is read after the project's own file, and wins.
 *
 * @since 0.5.0
 */
export const localPath = (configDir: string, cwd: string): string =>
  NodePath.join(
    configDir,
    "projects",
    `${NodePath.basename(cwd) || "root"}-${
      createHash("sha256").update(NodePath.resolve(cwd)).digest("hex").slice(0, 12)
    }.json`
  )

/**
 * Resolves the global options: which config files, JSON or not, and the timeout.
 *
 * @since 0.1.0
 */
export const resolve = (
  given: Given,
  env: FleetConfig.Env = process.env,
  cwd: string = process.cwd()
): Effect.Effect<Settings, CliError.CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const timeout = Option.isSome(given.timeout)
      ? yield* duration("--timeout", given.timeout.value)
      : Duration.seconds(30)
    const configDir = ConfigTrust.userConfigDir(env, env.HOME ?? os.homedir(), NodePath)
    const trust = given.trust || /^(1|true|yes)$/i.test(env.MCP_FLEET_TRUST ?? "")
    // Only the folders the user named: a default root would widen what a server was given.
    const roots = given.root.map((folder) => NodePath.resolve(cwd, folder))
    const base = {
      json: given.json,
      timeout,
      trust,
      configDir,
      project: [],
      roots,
      protocolVersion: given.protocol.pipe(Option.getOrUndefined),
      cluster: Option.match(given.cluster, { onNone: () => undefined, onSome: (url) => ({ url }) })
    }
    if (given.config.length > 0) {
      return { ...base, paths: given.config.map((path) => NodePath.resolve(cwd, path)), source: "--config" as const }
    }
    const listed = FleetConfig.listedPaths(env, cwd, NodePath)
    if (listed.length > 0) return { ...base, paths: listed, source: "MCP_FLEET_CONFIG" as const }
    const fs = yield* FileSystem.FileSystem
    const exists = (path: string) => fs.exists(path).pipe(Effect.orElseSucceed(() => false))
    const local = localPath(configDir, cwd)
    const extra = (yield* exists(local)) ? [local] : []
    const candidates = defaultCandidates(cwd, configDir)
    const own = candidates.at(-1)
    for (const path of candidates) {
      if (yield* exists(path)) {
        // A file of the working directory must be trusted; the user's own config is theirs.
        const project = path === own ? [] : [path]
        return { ...base, paths: [path, ...extra], source: "default" as const, project }
      }
    }
    return { ...base, paths: extra, source: extra.length > 0 ? "default" as const : "none" as const }
  })

/**
 * The sentence for a command that needs servers when no config file was found.
 *
 * @since 0.1.0
 */
export const noConfig = (cwd: string = process.cwd()): CliError.CliError =>
  CliError.usage(
    `no config file found (looked for ${
      defaultCandidates(cwd, ConfigTrust.userConfigDir(process.env, os.homedir(), NodePath)).map((path) => tilde(path))
        .join(", ")
    }); pass --config <file> or add a server with 'mcp-fleet add <name> -- <command>'`
  )

/**
 * A path as a person reads it: relative to the working directory when inside it, `~` for home.
 *
 * @since 0.1.0
 */
export const tilde = (path: string, cwd: string = process.cwd()): string => {
  const relative = NodePath.relative(cwd, path)
  if (!relative.startsWith("..") && !NodePath.isAbsolute(relative)) return `./${relative}`
  const home = os.homedir()
  return path.startsWith(home + NodePath.sep) ? `~${path.slice(home.length)}` : path
}
