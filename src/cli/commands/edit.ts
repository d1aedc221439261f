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

// The new text must still be a valid config before it replaces the old one, and it
// replaces it in one rename, so a watcher never reads half a file. A file this command
// creates, or one trusted before the edit, stays trusted: the edit is the user's own.
const write = (settings: Settings.Settings, path: string, text: string) =>
  Effect.gen(function*() {
    yield* FleetConfig.parse(text, path, process.env, NodePath).pipe(
      Effect.mapError((error) => CliError.failure(`the edit would make ${error.message}; ${path} was left as it was`))
    )
    const fs = yield* FileSystem.FileSystem
    const trust = yield* Trust.records(settings)
    const before = yield* Effect.option(fs.readFileString(path))
    const trusted = Option.isNone(before) || (yield* trust.check(path, before.value))._tag === "Trusted"
    const temporary = NodePath.join(NodePath.dirname(path), `.${NodePath.basename(path)}.${process.pid}.tmp`)
    yield* fs.writeFileString(temporary, text).pipe(
      Effect.zipRight(fs.rename(temporary, path)),
      Effect.mapError((error) => CliError.failure(`cannot write ${path}: ${error.message}`))
    )
    if (trusted) yield* trust.trust(path, text).pipe(Effect.mapError((error) => CliError.failure(error.message)))
  })

const read = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
    Effect.mapError((error) => CliError.failure(`cannot read ${path}: ${error.message}`))
  )

const edited = (result: Either.Either<string, string>) =>
  Either.match(result, { onLeft: (reason) => Effect.fail(CliError.usage(reason)), onRight: Effect.succeed })

const done = (settings: Settings.Settings, action: string, server: string, path: string) =>
  settings.json
    ? Render.json({ action, server, file: path })
    : Render.lines([`${action} server '${server}' in ${Settings.tilde(path)}`])

const pairs = (entries: ReadonlyArray<string>, flag: string) =>
  Effect.forEach(entries, (entry) => {
    const at = entry.indexOf("=")
    return at > 0
      ? Effect.succeed([entry.slice(0, at), entry.slice(at + 1)] as const)
      : Effect.fail(CliError.usage(`--${flag} '${entry}' is not KEY=VALUE`))
  }).pipe(Effect.map((list) => list.length === 0 ? undefined : Object.fromEntries(list)))

/**
 * `mcp-fleet add`: adds a stdio server (`add <name> -- <command> [args...]`) or a remote
 * one (`add <name> --url <url>`) to the config file.
 *
 * @since 0.1.0
 */
export const add = Command.make("add", {
  ...Settings.options,
  name: Args.text({ name: "name" }).pipe(
    Args.withDescription("The new server's name: letters, digits, _ and -, not starting with mcp__")
  ),
  command: Args.text({ name: "command" }).pipe(
    Args.withDescription("After --: the program that runs a stdio server, and its arguments"),
    Args.repeated
  ),
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
  ),
  disabled: Options.boolean("disabled").pipe(Options.withDescription("Add it switched off")),
  force: Options.boolean("force").pipe(Options.withDescription("Replace a server of the same name"))
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const [command, ...args] = given.command
    const error = Catalog.serverNameError(given.name)
    if (error !== undefined) return yield* CliError.usage(`server name '${given.name}' ${error}`)
    const problem = Catalog.serverNameProblem(given.name)
    if (problem !== undefined) {
      return yield* CliError.usage(`server name '${given.name}' ${problem}; use letters, digits, _ and - only`)
    }
    if (command === undefined && Option.isNone(given.url)) {
      return yield* CliError.usage(
        `server '${given.name}' needs a command or a URL: mcp-fleet add ${given.name} -- <command> [args...], ` +
          `or mcp-fleet add ${given.name} --url <url>`
      )
    }
    if (command !== undefined && Option.isSome(given.url)) {
      return yield* CliError.usage(
        `server '${given.name}' gets a command (after --) or a URL (--url), not both`
      )
    }
    const env = yield* pairs(given.env, "env")
    const headers = yield* pairs(given.header, "header")
    const entry: Record<string, unknown> = {
      ...(Option.isSome(given.type) ? { type: given.type.value } : {}),
      ...(command !== undefined
        ? { command, ...(args.length > 0 ? { args } : {}) }
        : { url: Option.getOrThrow(given.url) }),
      ...(env !== undefined ? { env } : {}),
      ...(headers !== undefined ? { headers } : {}),
      ...(Option.isSome(given.cwd) ? { cwd: given.cwd.value } : {}),
      ...(given.disabled ? { disabled: true } : {})
    }
    // The file with the highest precedence, or a new ./.mcp.json.
    const path = settings.paths.at(-1) ?? NodePath.resolve(".mcp.json")
    const fs = yield* FileSystem.FileSystem
    const exists = yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false))
    const text = exists
      ? yield* edited(ConfigEdit.addServer(yield* read(path), path, given.name, entry, given.force))
      : ConfigEdit.newFile(given.name, entry)
    yield* write(settings, path, text)
    yield* done(settings, exists ? "added" : "created config with", given.name, path)
  })).pipe(Command.withDescription("Add a server: add <name> -- <command> [args...], or add <name> --url <url>"))

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
