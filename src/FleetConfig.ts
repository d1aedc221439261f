/**
 * Config files turned into ServerSpecs: the `mcpServers` format of Claude Code, Claude
 * Desktop and Cursor, and the `servers` format of VS Code, with `${VAR}` and
 * `${VAR:-default}` expansion, a user file and project files merged by server name, and a
 * stream of the merged config that follows edits for hot reload.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Scope from "effect/Scope"
import type * as Types from "effect/Types"
import * as os from "node:os"
import * as NodePath from "node:path"
import * as Policy from "./Policy.js"
import * as ServerRegistry from "./ServerRegistry.js"
import * as ServerSpec from "./ServerSpec.js"

// --- errors -------------------------------------------------------------------------

/**
 * A config file that cannot be used: it cannot be read, is not JSON, or its known fields
 * have the wrong shape. `reason` says which, with the schema error when there is one.
 *
 * @since 0.1.0
 */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  path: Schema.String,
  reason: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /**
   * A sentence naming the file and what is wrong with it.
   */
  override get message(): string {
    return `invalid config file ${this.path}: ${this.reason}`
  }
}

// --- the file shape -----------------------------------------------------------------

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const Milliseconds = Schema.Number.pipe(Schema.finite(), Schema.nonNegative()).annotations({
  identifier: "Milliseconds"
})
const PositiveMilliseconds = Schema.Number.pipe(Schema.finite(), Schema.positive()).annotations({
  identifier: "PositiveMilliseconds"
})

// Env and header values may be secrets: schema errors must not quote them.
const SecretString = Schema.String.annotations({ message: () => "Expected a string (value not shown)" })
const StringRecord = Schema.Record({ key: Schema.String, value: SecretString }).annotations({
  identifier: "Record<string, string>",
  message: () => ({ message: "Expected an object of strings (values not shown)", override: false })
})

const RestartEntry = Schema.Struct({
  initialDelay: optional(Milliseconds),
  maxDelay: optional(Milliseconds),
  stableAfter: optional(Milliseconds),
  factor: optional(Schema.Number.pipe(Schema.finite(), Schema.greaterThanOrEqualTo(1))),
  jitter: optional(Schema.Number.pipe(Schema.between(0, 1))),
  maxAttempts: optional(Schema.NonNegativeInt)
}).annotations({ identifier: "Restart" })

const HealthEntry = Schema.Struct({
  interval: optional(PositiveMilliseconds),
  timeout: optional(PositiveMilliseconds),
  failures: optional(Schema.Int.pipe(Schema.positive()))
}).annotations({ identifier: "Health" })

// What a `defaults` block and a server entry share.
const supervisionFields = {
  restart: optional(RestartEntry),
  health: optional(HealthEntry),
  initializeTimeout: optional(Milliseconds),
  startupTimeout: optional(Milliseconds),
  requestTimeout: optional(Milliseconds),
  // No `timeout` alias: Cline writes it in seconds and Gemini CLI in milliseconds.
  readyTimeout: optional(Milliseconds),
  idleTimeout: optional(Milliseconds)
}

const Defaults = Schema.Struct(supervisionFields).annotations({ identifier: "Defaults" })

// Tool policy (see Policy.ts): kept out of the ServerSpec, so an edit never restarts a server.
const Count = Schema.Int.pipe(Schema.positive())

const LimitsEntry = Schema.Struct({
  timeout: optional(PositiveMilliseconds),
  maxConcurrent: optional(Count),
  rateLimit: optional(Schema.Struct({ calls: Count, per: PositiveMilliseconds })),
  maxResultBytes: optional(Count),
  onOversize: optional(Schema.Literal("truncate", "fail"))
}).annotations({ identifier: "Limits" })

const policyFields = {
  allow: optional(Schema.Array(Schema.String)),
  deny: optional(Schema.Array(Schema.String)),
  ask: optional(Schema.Array(Schema.String)),
  default: optional(Schema.Literal("allow", "deny", "ask")),
  limits: optional(LimitsEntry),
  tools: optional(Schema.Record({ key: Schema.String, value: LimitsEntry }))
}

const ServerPolicyEntry = Schema.Struct(policyFields).annotations({ identifier: "ServerPolicy" })

const PolicyEntry = Schema.Struct({ ...policyFields, audit: optional(Schema.String) }).annotations({ identifier: "Policy" })

// Unknown keys are ignored: these files hold other tools' settings too. `type` is any
// string, so a transport we do not know marks one server, not the whole file.
const ServerEntry = Schema.Struct({
  ...supervisionFields,
  type: optional(Schema.String),
  command: optional(Schema.String),
  args: optional(Schema.Array(Schema.String)),
  env: optional(StringRecord),
  inheritEnv: optional(Schema.Boolean),
  cwd: optional(Schema.String),
  url: optional(Schema.String),
  headers: optional(StringRecord),
  disabled: optional(Schema.Boolean),
  enabled: optional(Schema.Boolean),
  required: optional(Schema.Boolean),
  policy: optional(ServerPolicyEntry)
}).annotations({ identifier: "ServerEntry" })

type ServerEntry = typeof ServerEntry.Type
type Defaults = typeof Defaults.Type

const Servers = Schema.Record({ key: Schema.String, value: ServerEntry })

const ConfigFile = Schema.Struct({
  mcpServers: optional(Servers),
  servers: optional(Servers),
  defaults: optional(Defaults),
  policy: optional(PolicyEntry)
}).annotations({ identifier: "ConfigFile" })

const decodeConfigFile = Schema.decodeUnknownEither(ConfigFile, { errors: "all" })

// --- JSON with comments -------------------------------------------------------------

// VS Code's mcp.json is JSON with comments and trailing commas. Both are blanked out with
// spaces, keeping offsets, so JSON.parse positions still point into the file.
const stripJsonc = (text: string): string => {
  const chars = text.split("")
  let lastComma = -1
  let i = 0
  while (i < chars.length) {
    const c = chars[i]
    if (c === "\"") {
      i++
      while (i < chars.length && chars[i] !== "\"") i += chars[i] === "\\" ? 2 : 1
      i++
      lastComma = -1
    } else if (c === "/" && chars[i + 1] === "/") {
      while (i < chars.length && chars[i] !== "\n") chars[i++] = " "
    } else if (c === "/" && chars[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2)
      const stop = end === -1 ? chars.length : end + 2
      for (; i < stop; i++) if (chars[i] !== "\n") chars[i] = " "
    } else {
      if (c === ",") lastComma = i
      else if ((c === "}" || c === "]") && lastComma >= 0) chars[lastComma] = " "
      if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r" && c !== ",") lastComma = -1
      i++
    }
  }
  return chars.join("")
}

const lineColumn = (text: string, offset: number): string => {
  const before = text.slice(0, offset).split("\n")
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`
}

// V8 quotes part of the text in some messages, and that part may hold a secret.
const jsonReason = (error: unknown, text: string): string => {
  let reason = error instanceof Error ? error.message : String(error)
  if (reason.endsWith(" is not valid JSON")) reason = reason.replace(/, (?:\.\.\.)?".*$/s, "")
  const at = /at position (\d+)/.exec(reason)
  if (at && !/\(line \d+/.test(reason)) reason += ` (${lineColumn(text, Number(at[1]))})`
  return `not valid JSON: ${reason}`
}

// --- variables ----------------------------------------------------------------------

/**
 * The variables `${VAR}` references are read from.
 *
 * @since 0.1.0
 */
export type Env = Readonly<Record<string, string | undefined>>

interface Context {
  readonly env: Env
  /** The config file's directory: relative `cwd` resolves against it. */
  readonly dir: string
  /** `${workspaceFolder}`: the folder holding `.vscode/`, else the file's directory. */
  readonly workspace: string
  /** Problems found so far for the current server; never holds a value, only names. */
  readonly problems: Array<string>
}

const variableName = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s

interface Expanded {
  readonly value: string
  /** Whether the text held a `${...}` reference: such env and header values are Redacted. */
  readonly referenced: boolean
}

const expand = (text: string, field: string, context: Context): Expanded => {
  let value = ""
  let referenced = false
  let from = 0
  for (;;) {
    const start = text.indexOf("${", from)
    if (start === -1) break
    const end = text.indexOf("}", start + 2)
    if (end === -1) {
      context.problems.push(`unterminated "\${" in ${field}`)
      break
    }
    value += text.slice(from, start)
    from = end + 1
    referenced = true
    const inner = text.slice(start + 2, end)
    const reference = `\${${inner}}`
    if (inner === "workspaceFolder") {
      value += context.workspace
      continue
    }
    const match = variableName.exec(inner.startsWith("env:") ? inner.slice(4) : inner)
    if (match === null) {
      context.problems.push(
        inner.startsWith("input:")
          ? `VS Code input variables are not supported (${reference} in ${field})`
          : /^[A-Za-z]+:/.test(inner)
          ? `unsupported variable ${reference} in ${field}`
          : `invalid variable reference ${reference} in ${field}`
      )
      continue
    }
    const [, name, fallback] = match
    if (fallback?.includes("${")) {
      context.problems.push(`nested variables are not supported (in ${field})`)
      continue
    }
    const found = Object.hasOwn(context.env, name) ? context.env[name] : undefined
    // As in the shell, `:-` also replaces a variable that is set but empty.
    if (fallback !== undefined && (found === undefined || found === "")) value += fallback
    else if (found !== undefined) value += found
    else context.problems.push(`variable ${name} is not set (used in ${field})`)
  }
  return { value: value + text.slice(from), referenced }
}

const expandRecord = (
  record: Readonly<Record<string, string>> | undefined,
  field: string,
  context: Context
): Record<string, string | Redacted.Redacted<string>> | undefined => {
  if (record === undefined) return undefined
  const entries = Object.entries(record)
  if (entries.length === 0) return undefined
  return Object.fromEntries(entries.map(([key, text]) => {
    const { referenced, value } = expand(text, `${field}.${key}`, context)
    return [key, referenced ? Redacted.make(value) : value]
  }))
}

// --- one server ---------------------------------------------------------------------

// A server whose config cannot be used still gets a spec, so status can show its problem.
const placeholder: ServerSpec.TransportSpec = { type: "stdio", command: "" }

type Kind = "stdio" | "http" | "sse" | "ws"

const kinds: ReadonlyMap<string, Kind> = new Map([
  ["stdio", "stdio"],
  ["http", "http"],
  ["streamablehttp", "http"],
  ["streamable-http", "http"],
  ["sse", "sse"],
  ["ws", "ws"],
  ["websocket", "ws"]
])

const kindOf = (entry: ServerEntry, problems: Array<string>): Kind | undefined => {
  const hasCommand = entry.command !== undefined
  const hasUrl = entry.url !== undefined
  if (hasCommand && hasUrl) {
    problems.push(`both "command" and "url" are set; a server has one or the other`)
    return undefined
  }
  if (!hasCommand && !hasUrl) {
    problems.push(`neither "command" nor "url" is set`)
    return undefined
  }
  if (entry.type === undefined) return hasCommand ? "stdio" : /^wss?:/i.test(entry.url!) ? "ws" : "http"
  const kind = kinds.get(entry.type.toLowerCase())
  if (kind === undefined) {
    problems.push(`unknown type "${entry.type}" (expected "stdio", "http", "sse" or "ws")`)
    return undefined
  }
  if (kind === "stdio" && !hasCommand) {
    problems.push(`type "${entry.type}" needs "command", but "url" is set`)
    return undefined
  }
  if (kind !== "stdio" && hasCommand) {
    problems.push(`type "${entry.type}" needs "url", but "command" is set`)
    return undefined
  }
  return kind
}

const stdioTransport = (entry: ServerEntry, context: Context): ServerSpec.StdioTransportSpec => {
  const command = expand(entry.command ?? "", "command", context).value
  if (command.trim() === "") context.problems.push(`"command" is empty`)
  const transport: Types.Mutable<ServerSpec.StdioTransportSpec> = { type: "stdio", command }
  if (entry.args !== undefined && entry.args.length > 0) {
    transport.args = entry.args.map((arg, i) => expand(arg, `args[${i}]`, context).value)
  }
  const env = expandRecord(entry.env, "env", context)
  if (env !== undefined) transport.env = env
  if (entry.inheritEnv !== undefined) transport.inheritEnv = entry.inheritEnv
  if (entry.cwd !== undefined) {
    transport.cwd = NodePath.resolve(context.dir, expand(entry.cwd, "cwd", context).value)
  }
  return transport
}

const remoteTransport = (kind: "http" | "sse" | "ws", entry: ServerEntry, context: Context): ServerSpec.RemoteTransportSpec => {
  const url = expand(entry.url ?? "", "url", context).value
  const schemes = kind === "ws" ? /^wss?:$/ : /^https?:$/
  // The url may hold a token: the problem names the field, never the value.
  if (!schemes.test(URL.canParse(url) ? new URL(url).protocol : "")) {
    context.problems.push(`"url" is not ${kind === "ws" ? "a ws or wss" : "an http or https"} URL`)
  }
  const headers = expandRecord(entry.headers, "headers", context)
  return headers === undefined ? { type: kind, url } : { type: kind, url, headers }
}

const restartPolicy = (defaults: Defaults, entry: ServerEntry): Partial<ServerSpec.RestartPolicy> | undefined => {
  const merged = { ...defaults.restart, ...entry.restart }
  if (Object.keys(merged).length === 0) return undefined
  const policy: Types.Mutable<Partial<ServerSpec.RestartPolicy>> = {}
  if (merged.initialDelay !== undefined) policy.initialDelay = Duration.millis(merged.initialDelay)
  if (merged.maxDelay !== undefined) policy.maxDelay = Duration.millis(merged.maxDelay)
  if (merged.stableAfter !== undefined) policy.stableAfter = Duration.millis(merged.stableAfter)
  if (merged.factor !== undefined) policy.factor = merged.factor
  if (merged.jitter !== undefined) policy.jitter = merged.jitter
  if (merged.maxAttempts !== undefined) policy.maxAttempts = merged.maxAttempts
  return policy
}

const healthCheck = (defaults: Defaults, entry: ServerEntry, problems: Array<string>): ServerSpec.HealthCheck | undefined => {
  const merged = { ...defaults.health, ...entry.health }
  if (Object.keys(merged).length === 0) return undefined
  if (merged.interval === undefined) {
    problems.push(`"health" needs an "interval"`)
    return undefined
  }
  const health: Types.Mutable<ServerSpec.HealthCheck> = { interval: Duration.millis(merged.interval) }
  if (merged.timeout !== undefined) health.timeout = Duration.millis(merged.timeout)
  if (merged.failures !== undefined) health.failures = merged.failures
  return health
}

// Per-server fields win over the file's defaults; a canonical name wins over its alias.
const timeout = (...candidates: ReadonlyArray<number | undefined>): Duration.Duration | undefined => {
  const ms = candidates.find((candidate) => candidate !== undefined)
  return ms === undefined ? undefined : Duration.millis(ms)
}

const toSpec = (
  name: string,
  entry: ServerEntry,
  defaults: Defaults,
  context: Omit<Context, "problems">,
  extraProblems: ReadonlyArray<string>
): ServerSpec.ServerSpec => {
  const problems: Array<string> = [...extraProblems]
  if (name.trim() === "") problems.push("the server name is empty")
  const scoped: Context = { ...context, problems }
  const kind = kindOf(entry, problems)
  const transport = kind === undefined
    ? placeholder
    : kind === "stdio"
    ? stdioTransport(entry, scoped)
    : remoteTransport(kind, entry, scoped)

  const spec: Types.Mutable<ServerSpec.ServerSpec> = { name, transport }
  // Only `true` is written, so `"required": false` and no field hash the same.
  if (entry.disabled === true || entry.enabled === false) spec.disabled = true
  if (entry.required === true) spec.required = true
  const restart = restartPolicy(defaults, entry)
  if (restart !== undefined) spec.restart = restart
  const health = healthCheck(defaults, entry, problems)
  if (health !== undefined) spec.health = health
  const initializeTimeout = timeout(
    entry.initializeTimeout,
    entry.startupTimeout,
    defaults.initializeTimeout,
    defaults.startupTimeout
  )
  if (initializeTimeout !== undefined) spec.initializeTimeout = initializeTimeout
  const requestTimeout = timeout(entry.requestTimeout, defaults.requestTimeout)
  if (requestTimeout !== undefined) spec.requestTimeout = requestTimeout
  const readyTimeout = timeout(entry.readyTimeout, defaults.readyTimeout)
  if (readyTimeout !== undefined) spec.readyTimeout = readyTimeout
  const idleTimeout = timeout(entry.idleTimeout, defaults.idleTimeout)
  if (idleTimeout !== undefined) spec.idleTimeout = idleTimeout

  if (problems.length > 0) {
    // Half-expanded fields could hold secrets next to unset names: keep none of them.
    spec.transport = placeholder
    spec.problem = [...new Set(problems)].join("; ")
  }
  return spec
}

// --- parse --------------------------------------------------------------------------

/**
 * What one config file holds: its servers, in the file's order, and its tool policy.
 *
 * @since 0.1.0
 */
export interface Parsed {
  readonly servers: ReadonlyArray<ServerSpec.ServerSpec>
  /**
   * The top-level `policy` block, with each server entry's `policy` block under `servers`
   * and a relative `audit` path resolved against the file's directory; `{}` when none.
   */
  readonly policy: Policy.Config
}

type ConfigFile = typeof ConfigFile.Type

const policyOf = (file: ConfigFile, dir: string): Policy.Config => {
  const { audit, ...rules } = file.policy ?? {}
  const global: Policy.Config = audit === undefined ? rules : { ...rules, audit: NodePath.resolve(dir, audit) }
  return [...Object.entries(file.mcpServers ?? {}), ...Object.entries(file.servers ?? {})].reduce(
    (config, [name, entry]) => entry.policy === undefined ? config : Policy.merge(config, { servers: { [name]: entry.policy } }),
    global
  )
}

/**
 * Turns the text of one config file into its servers, in the file's order. `path` is used
 * in errors and to resolve relative `cwd`s; `${VAR}` references are read from `env`.
 *
 * A server whose entry cannot be used (both or neither of `command` and `url`, an unknown
 * `type`, an unset variable) is returned with `problem` set; only a file that is not JSON
 * or whose known fields have the wrong shape fails, with a ConfigError.
 *
 * @since 0.1.0
 */
export const parse = (
  text: string,
  path: string,
  env: Env = process.env
): Either.Either<ReadonlyArray<ServerSpec.ServerSpec>, ConfigError> =>
  Either.map(parseFile(text, path, env), (parsed) => parsed.servers)

/**
 * Like `parse`, with the file's tool policy too. A malformed `policy` block fails the
 * file like any other known field.
 *
 * @since 0.1.0
 */
export const parseFile = (
  text: string,
  path: string,
  env: Env = process.env
): Either.Either<Parsed, ConfigError> => {
  const content = text.replace(/^\uFEFF/, "")
  let json: unknown
  try {
    json = JSON.parse(stripJsonc(content))
  } catch (error) {
    return Either.left(new ConfigError({ path, reason: jsonReason(error, content) }))
  }
  const decoded = decodeConfigFile(json)
  if (Either.isLeft(decoded)) {
    return Either.left(new ConfigError({ path, reason: ParseResult.TreeFormatter.formatErrorSync(decoded.left) }))
  }
  const file = decoded.right
  // Checked here rather than as a Schema filter, whose error would wrap every other one.
  if (file.mcpServers === undefined && file.servers === undefined) {
    return Either.left(new ConfigError({ path, reason: `Expected an object with "mcpServers" or "servers"` }))
  }
  const dir = NodePath.dirname(NodePath.resolve(path))
  const context = { env, dir, workspace: NodePath.basename(dir) === ".vscode" ? NodePath.dirname(dir) : dir }
  const defaults = file.defaults ?? {}
  const fromMcpServers = Object.entries(file.mcpServers ?? {})
  const inServers = new Set(Object.keys(file.servers ?? {}))
  const twice = new Set(fromMcpServers.map(([name]) => name).filter((name) => inServers.has(name)))
  const fromServers = Object.entries(file.servers ?? {}).filter(([name]) => !twice.has(name))
  const servers = [...fromMcpServers, ...fromServers].map(([name, entry]) =>
    toSpec(name, entry, defaults, context, twice.has(name) ? [`defined in both "mcpServers" and "servers"`] : [])
  )
  return Either.right({ servers, policy: policyOf(file, dir) })
}

// --- paths --------------------------------------------------------------------------

/**
 * The files read when no paths are given, lowest precedence first: the user's
 * `~/.config/mcp-fleet/mcp.json`, then the project's `.mcp.json` and `mcp.json`.
 *
 * @since 0.1.0
 */
export const defaultPaths = (cwd: string, home: string): ReadonlyArray<string> => [
  NodePath.join(home, ".config", "mcp-fleet", "mcp.json"),
  NodePath.join(cwd, ".mcp.json"),
  NodePath.join(cwd, "mcp.json")
]

/**
 * The files listed in `MCP_FLEET_CONFIG` (separated by `path.delimiter`, relative ones
 * resolved against `cwd`); none when it is unset or empty.
 *
 * @since 0.1.0
 */
export const listedPaths = (env: Env = process.env, cwd: string = process.cwd()): ReadonlyArray<string> =>
  (env.MCP_FLEET_CONFIG ?? "").split(NodePath.delimiter)
    .filter((entry) => entry.trim() !== "")
    .map((entry) => NodePath.resolve(cwd, entry))

/**
 * The files to read: those listed in `MCP_FLEET_CONFIG`, or else the default paths.
 *
 * @since 0.1.0
 */
export const pathsFromEnv = (
  env: Env = process.env,
  cwd: string = process.cwd(),
  home: string = os.homedir()
): ReadonlyArray<string> => {
  const listed = listedPaths(env, cwd)
  return listed.length > 0 ? listed : defaultPaths(cwd, home)
}

// --- load ---------------------------------------------------------------------------

/**
 * Which files to read and where variables come from.
 *
 * @since 0.1.0
 */
export interface LoadOptions {
  /** The files, lowest precedence first. Default: `pathsFromEnv(env)`. */
  readonly paths?: ReadonlyArray<string> | undefined
  /** The variables for `${VAR}`. Default: `process.env`. */
  readonly env?: Env | undefined
}

/**
 * One file that was looked for.
 *
 * @since 0.1.0
 */
export interface Source {
  readonly path: string
  /** False when the file does not exist; it is then skipped. */
  readonly found: boolean
  /** How many servers the file defines, overridden ones included. */
  readonly servers: number
}

/**
 * The merged config of all files.
 *
 * @since 0.1.0
 */
export interface Loaded {
  readonly servers: ReadonlyArray<ServerSpec.ServerSpec>
  readonly sources: ReadonlyArray<Source>
  /** The file each server's definition came from. */
  readonly origin: Readonly<Record<string, string>>
  /** The tool policy of all files, merged with `Policy.merge` in file order. */
  readonly policy: Policy.Config
}

const readFile = (fs: FileSystem.FileSystem, path: string) =>
  fs.readFileString(path).pipe(
    Effect.map((text): string | undefined => text),
    Effect.catchAll((error) =>
      error._tag === "SystemError" && error.reason === "NotFound"
        ? Effect.succeed(undefined)
        : Effect.fail(new ConfigError({ path, reason: `cannot be read: ${error.message}`, cause: error }))
    )
  )

const loadWith = (fs: FileSystem.FileSystem, paths: ReadonlyArray<string>, env: Env) =>
  Effect.gen(function*() {
    const merged = new Map<string, { readonly spec: ServerSpec.ServerSpec; readonly path: string }>()
    const sources: Array<Source> = []
    let policy: Policy.Config = {}
    for (const path of paths) {
      const text = yield* readFile(fs, path)
      if (text === undefined) {
        sources.push({ path, found: false, servers: 0 })
        continue
      }
      const parsed = yield* parseFile(text, path, env)
      sources.push({ path, found: true, servers: parsed.servers.length })
      // A later file replaces a server of the same name; Map keeps its first position.
      for (const spec of parsed.servers) merged.set(spec.name, { spec, path })
      policy = Policy.merge(policy, parsed.policy)
    }
    const entries = [...merged.values()]
    const loaded: Loaded = {
      servers: entries.map((entry) => entry.spec),
      sources,
      origin: Object.fromEntries(entries.map((entry) => [entry.spec.name, entry.path])),
      policy
    }
    return loaded
  })

/**
 * Reads the files in order and merges their servers by name: a later file wins, so pass
 * the user's file first and the project's last. Missing files are skipped and reported in
 * `sources`; a file that cannot be read or used fails the whole load.
 *
 * @since 0.1.0
 */
export const load = (options: LoadOptions = {}): Effect.Effect<Loaded, ConfigError, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => {
    const env = options.env ?? process.env
    return loadWith(fs, options.paths ?? pathsFromEnv(env), env)
  })

// --- watching -----------------------------------------------------------------------

/**
 * How `changes` reads and watches the files.
 *
 * @since 0.1.0
 */
export interface WatchOptions extends LoadOptions {
  /** How long the files must stay quiet after a change before they are read. Default: 100 ms. */
  readonly debounce?: Duration.DurationInput | undefined
}

// The specs' content and the policy: two loads with the same fingerprint need nothing done.
const fingerprint = (loaded: Loaded): string =>
  JSON.stringify([loaded.servers.map((spec) => [spec.name, ServerSpec.hash(spec)]).sort(), loaded.policy])

// Editors save by writing a new file and renaming it over the old one, which ends a watch
// on the file itself; so the directory is watched and its events filtered by name.
const watchDirectory = (fs: FileSystem.FileSystem, dir: string, names: ReadonlySet<string>) =>
  Stream.fromEffect(fs.stat(dir)).pipe(
    Stream.flatMap(() =>
      Stream.concat(
        // Anything that changed before the watch began is caught by one more read.
        Stream.succeed(undefined),
        fs.watch(dir).pipe(
          Stream.filter((event) => names.has(NodePath.basename(event.path))),
          Stream.as(undefined)
        )
      )
    ),
    // A directory that does not exist yet, or a watch that ended, is tried again later.
    Stream.concat(Stream.fail(`the watch on ${dir} ended`)),
    Stream.tapError((error) =>
      Effect.logDebug(`cannot watch ${dir}: ${typeof error === "string" ? error : error.message}`)
    ),
    Stream.retry(Schedule.spaced("1 second")),
    Stream.catchAll(() => Stream.empty)
  )

/**
 * The merged config now and after every change: the first element is the current config,
 * and a new one follows whenever an edit of any of the files changes some server's spec,
 * the set of servers, or the policy. Each file's directory is watched, and reads wait until the files
 * have been quiet for `debounce`.
 *
 * A file that turns invalid is logged as a warning and nothing is emitted, so the fleet
 * keeps its last good config; the next valid edit is emitted. A deleted file counts as
 * missing and its servers disappear. If the files are invalid at the start, the first
 * element comes once they are valid; run `load` first to fail fast instead.
 *
 * @since 0.1.0
 */
export const changes = (options: WatchOptions = {}): Stream.Stream<Loaded, never, FileSystem.FileSystem> =>
  Stream.unwrap(Effect.map(FileSystem.FileSystem, (fs) => {
    const env = options.env ?? process.env
    const paths = options.paths ?? pathsFromEnv(env)
    const directories = new Map<string, Set<string>>()
    for (const path of paths) {
      const absolute = NodePath.resolve(path)
      const dir = NodePath.dirname(absolute)
      const names = directories.get(dir) ?? new Set<string>()
      names.add(NodePath.basename(absolute))
      directories.set(dir, names)
    }
    const edits = Stream.mergeAll(
      [...directories].map(([dir, names]) => watchDirectory(fs, dir, names)),
      { concurrency: "unbounded" }
    ).pipe(Stream.debounce(options.debounce ?? Duration.millis(100)))

    const reread = (previous: Loaded | undefined) =>
      loadWith(fs, paths, env).pipe(
        Effect.tap((loaded) =>
          Effect.forEach(loaded.sources, (source, i) => {
            const before = previous?.sources[i]
            if (before === undefined || before.found === source.found) return Effect.void
            return Effect.logInfo(
              source.found
                ? `config file ${source.path} appeared`
                : `config file ${source.path} was removed; its servers are dropped`
            ).pipe(Effect.annotateLogs({ path: source.path }))
          }, { discard: true })
        ),
        Effect.map((loaded): readonly [Loaded | undefined, ReadonlyArray<Loaded>] =>
          [loaded, previous === undefined || fingerprint(previous) !== fingerprint(loaded) ? [loaded] : []]
        ),
        Effect.catchAll((error) =>
          Effect.logWarning(`${error.message}; keeping the last good config`).pipe(
            Effect.annotateLogs({ path: error.path }),
            Effect.as([previous, []] as const)
          )
        )
      )

    return Stream.concat(Stream.succeed(undefined), edits).pipe(
      Stream.mapAccumEffect(undefined as Loaded | undefined, (previous) => reread(previous)),
      Stream.flattenIterables
    )
  }))

// --- keeping a registry in step -------------------------------------------------------

/**
 * How `sync` and `layer` keep a registry equal to the files.
 *
 * @since 0.1.0
 */
export interface SyncOptions extends WatchOptions {
  /** Follow edits of the files (hot reload). Default: true. */
  readonly watch?: boolean | undefined
}

const reconcileWith = (registry: ServerRegistry.ServerRegistry, loaded: Loaded) =>
  Effect.flatMap(registry.reconcile(loaded.servers), (result) =>
    result.added.length + result.removed.length + result.restarted.length === 0
      ? Effect.void
      : Effect.logInfo(
        `config applied: added [${result.added.join(", ")}], removed [${result.removed.join(", ")}], restarted [${
          result.restarted.join(", ")
        }], unchanged ${result.unchanged.length}`
      ))

/**
 * Loads the files into the registry in context, failing if they are invalid now; with
 * `watch` (the default) every later edit is applied until the Scope closes, touching only
 * the servers whose spec changed. An invalid edit is reported and the fleet kept as is.
 *
 * @since 0.1.0
 */
export const sync = (
  options: SyncOptions = {}
): Effect.Effect<Loaded, ConfigError, FileSystem.FileSystem | ServerRegistry.ServerRegistry | Scope.Scope> =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.ServerRegistry
    const loaded = yield* load(options)
    yield* reconcileWith(registry, loaded)
    if (options.watch !== false) {
      yield* changes(options).pipe(
        Stream.runForEach((next) => reconcileWith(registry, next)),
        Effect.forkScoped
      )
    }
    return loaded
  })

/**
 * A layer that loads the files (from `paths`, else `MCP_FLEET_CONFIG`, else the default
 * places) into the ServerRegistry and, unless `watch: false`, follows their edits.
 *
 * @since 0.1.0
 */
export const layer = (
  options: SyncOptions = {}
): Layer.Layer<never, ConfigError, FileSystem.FileSystem | ServerRegistry.ServerRegistry> =>
  Layer.scopedDiscard(sync(options))
