/**
 * `add`, `remove`, `enable` and `disable`: edits of the config file in place, touching only
 * the server concerned. A running `watch` or `serve` picks the edit up by itself.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as NodePath from "node:path"
import * as Catalog from "../../Catalog.js"
import * as FleetConfig from "../../FleetConfig.js"
import * as CliError from "../CliError.js"
import * as ConfigEdit from "../ConfigEdit.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as Trust from "../Trust.js"

/**
 * Writes a config file's new text. It must still be a valid config before it replaces the
 * old one, and it replaces it in one rename, so a watcher never reads half a file. A file
 * this command creates (its folder too), or one trusted before the edit, stays trusted: the
 * edit is the user's own.
 *
 * @since 0.5.0
 */
export const write = (settings: Settings.Settings, path: string, text: string) =>
  Effect.gen(function*() {
    yield* FleetConfig.parse(text, path, process.env, NodePath).pipe(
      Effect.mapError((error) => CliError.failure(`the edit would make ${error.message}; ${path} was left as it was`))
    )
    const fs = yield* FileSystem.FileSystem
    const trust = yield* Trust.records(settings)
    const before = yield* Effect.option(fs.readFileString(path))
    const trusted = Option.isNone(before) || (yield* trust.check(path, before.value))._tag === "Trusted"
    const temporary = NodePath.join(NodePath.dirname(path), `.${NodePath.basename(path)}.${process.pid}.tmp`)
    if (Option.isNone(before)) yield* fs.makeDirectory(NodePath.dirname(path), { recursive: true }).pipe(Effect.ignore)
    yield* fs.writeFileString(temporary, text).pipe(
      Effect.zipRight(fs.rename(temporary, path)),
      Effect.mapError((error) => CliError.failure(`cannot write ${path}: ${error.message}`))
    )
    if (trusted) yield* trust.trust(path, text).pipe(Effect.mapError((error) => CliError.failure(error.message)))
  })

/**
 * A config file's text, or a failure naming it.
 *
 * @since 0.5.0
 */
export const read = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
    Effect.mapError((error) => CliError.failure(`cannot read ${path}: ${error.message}`))
  )

const edited = (result: Either.Either<string, string>) =>
  Either.match(result, { onLeft: (reason) => Effect.fail(CliError.usage(reason)), onRight: Effect.succeed })

const done = (settings: Settings.Settings, action: string, server: string, path: string) =>
  settings.json
    ? Render.json({ action, server, file: path })
    : Render.lines([`${action} server '${server}' in ${Settings.tilde(path)}`])

/**
 * `KEY=VALUE` words of a repeatable `--<flag>` as a record (undefined when none was given),
 * or a usage error naming the word that is not one.
 *
 * @since 0.5.0
 */
export const pairs = (entries: ReadonlyArray<string>, flag: string) =>
  Effect.forEach(entries, (entry) => {
    const at = entry.indexOf("=")
    return at > 0
      ? Effect.succeed([entry.slice(0, at), entry.slice(at + 1)] as const)
      : Effect.fail(CliError.usage(`--${flag} '${entry}' is not KEY=VALUE`))
  }).pipe(Effect.map((list) => list.length === 0 ? undefined : Object.fromEntries(list)))

/**
 * The options that describe a server besides its command (`add`, and `test` with no config).
 *
 * @since 0.5.0
 */
export const entryOptions = {
  url: Options.text("url").pipe(
    Options.withPseudoName("url"),
    Options.withDescription("The URL of a remote server (instead of a command)"),
    Options.optional
  ),
  type: Options.choice("type", ["stdio", "http", "sse", "ws"]).pipe(
    Options.withDescription(
      "The transport: stdio, http (Streamable HTTP), sse (HTTP+SSE of 2024-11-05) or ws (WebSocket); " +
        "default: stdio for a command, else from the URL's scheme"
    ),
    Options.optional
  ),
  env: Options.text("env").pipe(
    Options.withAlias("e"),
    Options.withPseudoName("KEY=VALUE"),
    Options.withDescription("A variable of the server's environment (repeatable)"),
    Options.repeated
  ),
  header: Options.text("header").pipe(
    Options.withAlias("H"),
    Options.withPseudoName("Name=Value"),
    Options.withDescription("A header sent with every HTTP request to a remote server (repeatable)"),
    Options.repeated
  ),
  cwd: Options.text("cwd").pipe(
    Options.withPseudoName("dir"),
    Options.withDescription("The server's working directory"),
    Options.optional
  )
}

/**
 * What `entryOptions` parsed to.
 *
 * @since 0.5.0
 */
export interface EntryGiven {
  readonly url: Option.Option<string>
  readonly type: Option.Option<"stdio" | "http" | "sse" | "ws">
  readonly env: ReadonlyArray<string>
  readonly header: ReadonlyArray<string>
  readonly cwd: Option.Option<string>
}

/**
 * A config entry from a command line: the command (and its arguments) or `--url`, with the
 * other `entryOptions`; a usage error names what is missing or contradictory.
 *
 * @since 0.5.0
 */
export const entryOf = (
  usage: string,
  words: ReadonlyArray<string>,
  given: EntryGiven,
  hint = ""
): Effect.Effect<Record<string, unknown>, CliError.CliError> =>
  Effect.gen(function*() {
    const [command, ...args] = words
    if (command === undefined && Option.isNone(given.url)) {
      return yield* CliError.usage(`${usage} needs a command or a URL${hint}`)
    }
    if (command !== undefined && Option.isSome(given.url)) {
      return yield* CliError.usage(`${usage} gets a command (after --) or a URL (--url), not both`)
    }
    const env = yield* pairs(given.env, "env")
    const headers = yield* pairs(given.header, "header")
    return {
      ...(Option.isSome(given.type) ? { type: given.type.value } : {}),
      ...(command !== undefined
        ? { command, ...(args.length > 0 ? { args } : {}) }
        : { url: Option.getOrThrow(given.url) }),
      ...(env !== undefined ? { env } : {}),
      ...(headers !== undefined ? { headers } : {}),
      ...(Option.isSome(given.cwd) ? { cwd: given.cwd.value } : {})
    }
  })

const nameArg = Args.text({ name: "name" }).pipe(
  Args.withDescription("The new server's name: letters, digits, _ and -, not starting with mcp__")
)

// The naming rule's refusals (`__`, a trailing `_`, too long) first, then the characters.
const checkName = (name: string) => {
  const error = Catalog.serverNameError(name)
  if (error !== undefined) return CliError.usage(`server name '${name}' ${error}`)
  const problem = Catalog.serverNameProblem(name)
  return problem === undefined
    ? Effect.void
    : CliError.usage(`server name '${name}' ${problem}; use letters, digits, _ and - only`)
}

/**
 * `--scope`: which file a new server goes to (see `targetOf`).
 *
 * @since 0.5.0
 */
export const scopeOption = Options.choice("scope", ["local", "project", "user"]).pipe(
  Options.withDescription(
    "Where the server goes, as in Claude Code: project (./.mcp.json, shared with the project), user " +
      "(~/.config/mcp-fleet/mcp.json, every project of yours), local (this project only, private to you: " +
      "~/.config/mcp-fleet/projects/<folder>-<hash>.json). Default: the config file in use, else ./.mcp.json"
  ),
  Options.optional
)

/**
 * The file a new server goes to: the scope's, else the config file in use with the highest
 * precedence (not the local-scope one), else a new ./.mcp.json.
 *
 * @since 0.5.0
 */
export const targetOf = (settings: Settings.Settings, scope: Option.Option<"local" | "project" | "user">) => {
  const cwd = process.cwd()
  // The local file is read when it exists, but only `--scope local` writes to it.
  const local = Settings.localPath(settings.configDir, cwd)
  if (Option.isNone(scope)) {
    return settings.paths.filter((path) => path !== local).at(-1) ?? NodePath.resolve(cwd, ".mcp.json")
  }
  switch (scope.value) {
    case "project":
      return NodePath.join(cwd, ".mcp.json")
    case "user":
      return NodePath.join(settings.configDir, "mcp.json")
    case "local":
      return local
  }
}

/**
 * Adds `entry` as server `name` to the file of `scope` (see `add --scope`), creating it
 * when there is none, and says so; `force` replaces a server of that name.
 *
 * @since 0.5.0
 */
export const addEntry = (
  settings: Settings.Settings,
  scope: Option.Option<"local" | "project" | "user">,
  name: string,
  entry: Record<string, unknown>,
  force: boolean
) =>
  Effect.gen(function*() {
    const path = targetOf(settings, scope)
    const fs = yield* FileSystem.FileSystem
    const exists = yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false))
    const text = exists
      ? yield* edited(ConfigEdit.addServer(yield* read(path), path, name, entry, force))
      : ConfigEdit.newFile(name, entry)
    yield* write(settings, path, text)
    yield* done(settings, exists ? "added" : "created config with", name, path)
  })

/**
 * `mcp-fleet add`: adds a stdio server (`add <name> -- <command> [args...]`) or a remote
 * one (`add <name> --url <url>`) to the config file, or to the file of `--scope`.
 *
 * @since 0.1.0
 */
export const add = Command.make("add", {
  ...Settings.options,
  ...entryOptions,
  name: nameArg,
  command: Args.text({ name: "command" }).pipe(
    Args.withDescription("After --: the program that runs a stdio server, and its arguments"),
    Args.repeated
  ),
  scope: scopeOption,
  disabled: Options.boolean("disabled").pipe(Options.withDescription("Add it switched off")),
  force: Options.boolean("force").pipe(Options.withDescription("Replace a server of the same name"))
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    yield* checkName(given.name)
    const entry = yield* entryOf(
      `server '${given.name}'`,
      given.command,
      given,
      `: mcp-fleet add ${given.name} -- <command> [args...], or mcp-fleet add ${given.name} --url <url>`
    )
    yield* addEntry(
      settings,
      given.scope,
      given.name,
      given.disabled ? { ...entry, disabled: true } : entry,
      given.force
    )
  })).pipe(Command.withDescription("Add a server: add <name> -- <command> [args...], or add <name> --url <url>"))

/**
 * `mcp-fleet add-json <name> '<json>'`: adds a server from its config entry as JSON (as
 * `claude mcp add-json`), checked like any other entry before it is written.
 *
 * @since 0.5.0
 */
export const addJson = Command.make("add-json", {
  ...Settings.options,
  name: nameArg,
  entry: Args.text({ name: "json" }).pipe(
    Args.withDescription(`The server's entry as JSON, e.g. '{"command":"npx","args":["-y","pkg"]}'`)
  ),
  scope: scopeOption,
  force: Options.boolean("force").pipe(Options.withDescription("Replace a server of the same name"))
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    yield* checkName(given.name)
    const entry = yield* Effect.try({
      try: () => JSON.parse(given.entry) as unknown,
      catch: (error) => CliError.usage(`the JSON of server '${given.name}' is not valid: ${(error as Error).message}`)
    })
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      return yield* CliError.usage(`the JSON of server '${given.name}' must be an object such as {"command": "..."}`)
    }
    yield* usable(given.name, entry as Record<string, unknown>)
    yield* addEntry(settings, given.scope, given.name, entry as Record<string, unknown>, given.force)
  })).pipe(Command.withDescription(`Add a server from its JSON entry: add-json <name> '{"command": ...}'`))

/**
 * Fails with a usage error naming the server when `entry` is no usable server (neither
 * command nor url, an unknown type, ...); unset variables are no reason, they may be set later.
 *
 * @since 0.5.0
 */
export const usable = (name: string, entry: Record<string, unknown>) =>
  Effect.gen(function*() {
    const parsed = yield* FleetConfig.parse(JSON.stringify({ mcpServers: { [name]: entry } }), "(given)", {}, NodePath)
      .pipe(Effect.mapError((error) => CliError.usage(`server '${name}': ${error.reason}`)))
    const problems = (parsed[0]?.problem ?? "").split("; ").filter((problem) =>
      problem !== "" && !/^variable \S+ is not set|^input "|^envFile /.test(problem)
    )
    if (problems.length > 0) return yield* CliError.usage(`server '${name}' cannot be used: ${problems.join("; ")}`)
  })

// The file that defines the server (the last one, when several do).
const fileOf = (settings: Settings.Settings, name: string) =>
  Effect.gen(function*() {
    const loaded = yield* Fleet.readConfig(settings)
    yield* Fleet.requireServer(loaded, name)
    return loaded.origin[name]!
  })

const editCommand = (
  name: "remove" | "enable" | "disable",
  description: string,
  edit: (text: string, path: string, server: string) => Either.Either<string, string>,
  action: string
) =>
  Command.make(name, { ...Settings.options, server: Fleet.serverArg("name") }, (given) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings(given)
      const path = yield* fileOf(settings, given.server)
      yield* write(settings, path, yield* edited(edit(yield* read(path), path, given.server)))
      yield* done(settings, action, given.server, path)
    })).pipe(Command.withDescription(description))

/**
 * `mcp-fleet remove <name>`: removes a server from the file that defines it.
 *
 * @since 0.1.0
 */
export const remove = editCommand("remove", "Remove a server from its config file", ConfigEdit.removeServer, "removed")

/**
 * `mcp-fleet enable <name>`: switches a disabled server back on.
 *
 * @since 0.1.0
 */
export const enable = editCommand(
  "enable",
  "Switch a server on (removes \"disabled\": true)",
  (text, path, server) => ConfigEdit.setEnabled(text, path, server, true),
  "enabled"
)

/**
 * `mcp-fleet disable <name>`: switches a server off without removing it.
 *
 * @since 0.1.0
 */
export const disable = editCommand(
  "disable",
  "Switch a server off (writes \"disabled\": true)",
  (text, path, server) => ConfigEdit.setEnabled(text, path, server, false),
  "disabled"
)
