/**
 * `mcp-fleet import --from claude-desktop|claude-code|vscode|cursor`: copies the servers
 * another host knows (its files where it keeps them on this OS: see
 * `FleetConfig.hostLocations`) into the config file, or the file of `--scope`. A server
 * of a name the file has already is left alone unless `--force`; `--dry-run` only says
 * what would be added.
 *
 * @since 0.5.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as os from "node:os"
import * as NodePath from "node:path"
import * as FleetConfig from "../../FleetConfig.js"
import * as Jsonc from "../../internal/jsonc.js"
import * as CliError from "../CliError.js"
import * as ConfigEdit from "../ConfigEdit.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as Edit from "./edit.js"

type Entry = Record<string, unknown>

interface Found {
  readonly name: string
  readonly file: string
  readonly entry: Entry
}

/**
 * The servers a host knows, by name; of two files naming one server, the later (the one
 * the host prefers) wins. Files that do not exist are skipped; one that is not JSON fails.
 *
 * @since 0.5.0
 */
export const found = (
  host: FleetConfig.Host,
  machine: FleetConfig.Machine
): Effect.Effect<
  { readonly read: ReadonlyArray<string>; readonly servers: ReadonlyArray<Found> },
  CliError.CliError,
  FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const servers = new Map<string, Found>()
    const read = new Set<string>()
    for (const location of FleetConfig.hostLocations(host, machine)) {
      const text = yield* Effect.option(fs.readFileString(location.path))
      if (Option.isNone(text)) continue
      const json = Jsonc.parse(text.value.replace(/^\uFEFF/, ""))
      if (Either.isLeft(json)) {
        return yield* CliError.failure(`${location.path} is not valid JSON: ${Jsonc.describe(json.left)}`)
      }
      read.add(location.path)
      for (const [name, entry] of FleetConfig.hostEntries(json.right, location)) {
        servers.set(name, { name, file: location.path, entry: { ...entry } })
      }
    }
    return { read: [...read], servers: [...servers.values()] }
  })

const summary = (entry: Entry): string =>
  typeof entry.url === "string"
    ? `${String(entry.type ?? "http")}: ${entry.url.replace(/\/\/[^@/]*@/, "//").replace(/\?.*$/, "")}`
    : `stdio: ${[entry.command, ...(Array.isArray(entry.args) ? entry.args : [])].join(" ")}`

// Adds each server the file lacks (every one with `force`), one edit at a time; says which
// were left alone and why.
const plan = (text: string | undefined, path: string, servers: ReadonlyArray<Found>, force: boolean) => {
  let result = text
  const added: Array<Found> = []
  const skipped: Array<{ readonly name: string; readonly reason: string }> = []
  for (const server of servers) {
    const next = result === undefined
      ? Either.right(ConfigEdit.newFile(server.name, server.entry))
      : ConfigEdit.addServer(result, path, server.name, server.entry, force)
    if (Either.isLeft(next)) {
      skipped.push({ name: server.name, reason: next.left })
      continue
    }
    result = next.right
    added.push(server)
  }
  return { text: result, added, skipped }
}

/**
 * `mcp-fleet import`.
 *
 * @since 0.5.0
 */
export const importServers = Command.make("import", {
  ...Settings.options,
  from: Options.choice("from", FleetConfig.hosts).pipe(
    Options.withDescription(
      "The host whose servers to copy: claude-desktop (claude_desktop_config.json), claude-code (~/.claude.json " +
        "and ./.mcp.json), vscode (the user's and ./.vscode/mcp.json), cursor (~/.cursor/mcp.json and ./.cursor/mcp.json)"
    )
  ),
  dryRun: Options.boolean("dry-run").pipe(Options.withDescription("Only show what would be added, and where")),
  scope: Edit.scopeOption,
  force: Options.boolean("force").pipe(Options.withDescription("Replace servers of the same name"))
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const machine = {
      platform: process.platform,
      home: os.homedir(),
      env: process.env,
      cwd: process.cwd(),
      path: NodePath
    }
    const { read, servers } = yield* found(given.from, machine)
    if (read.length === 0) {
      const looked = FleetConfig.hostLocations(given.from, machine).map((location) => Settings.tilde(location.path))
      return yield* CliError.failure(`no ${given.from} config found (looked in ${[...new Set(looked)].join(", ")})`)
    }
    const target = Edit.targetOf(settings, given.scope)
    const fs = yield* FileSystem.FileSystem
    const exists = yield* fs.exists(target).pipe(Effect.orElseSucceed(() => false))
    const before = exists ? yield* Edit.read(target) : undefined
    const planned = plan(before, target, servers, given.force)
    if (!given.dryRun && planned.added.length > 0 && planned.text !== undefined) {
      yield* Edit.write(settings, target, planned.text)
    }
    if (settings.json) {
      return yield* Render.json({
        from: given.from,
        read,
        file: target,
        dryRun: given.dryRun,
        added: planned.added.map((server) => ({ name: server.name, from: server.file })),
        skipped: planned.skipped
      })
    }
    const verb = given.dryRun ? "would add" : "added"
    yield* Render.lines([
      ...planned.added.map((server) =>
        `${verb} '${server.name}' (${Render.clip(summary(server.entry), 70)}) from ${Settings.tilde(server.file)}`
      ),
      ...planned.skipped.map((server) => `skipped '${server.name}': ${server.reason}`)
    ])
    yield* Render.note(
      `${planned.added.length} server${planned.added.length === 1 ? "" : "s"} ${verb} ${given.dryRun ? "to" : "in"} ${
        Settings.tilde(target)
      }${given.dryRun ? " (dry run: nothing written)" : ""}`
    )
  })).pipe(Command.withDescription(
    "Copy the servers Claude Desktop, Claude Code, VS Code or Cursor know into the config (--dry-run: only show them)"
  ))
