/**
 * `trust` and `approve`: the user's own approvals. `trust` lets a project config file
 * (found in the working directory) start its servers, by its content; `approve` makes a
 * drifted tool's new definition its pin, once the user has seen it, so it comes back into
 * the catalog.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodePath from "node:path"
import * as Catalog from "../../Catalog.js"
import * as ConfigTrust from "../../ConfigTrust.js"
import * as Hidden from "../../internal/sanitize.js"
import * as ToolPins from "../../ToolPins.js"
import * as CliError from "../CliError.js"
import * as Fleet from "../Fleet.js"
import * as Prompt from "../Prompt.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as Trust from "../Trust.js"

const trustError = (error: ConfigTrust.TrustError) => CliError.failure(error.message)

// Every trusted file, and whether its content is still the one trusted.
const listTrusted = (settings: Settings.Settings) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const entries = yield* Effect.flatMap(Trust.records(settings), (records) => records.list).pipe(
      Effect.mapError(trustError)
    )
    const rows = yield* Effect.forEach(entries, (entry) =>
      Effect.option(fs.readFileString(entry.path)).pipe(
        Effect.flatMap(Effect.transposeMapOption((text) => Trust.content(entry.path, text))),
        Effect.map((seen) => ({
          ...entry,
          state: Option.match(seen, {
            onNone: () => "missing",
            onSome: (content) => ConfigTrust.digest(content.subject) === entry.digest ? "trusted" : "changed"
          })
        }))
      ))
    if (settings.json) {
      return yield* Render.json(rows)
    }
    yield* Render.lines(Render.table([
      ["file", "state", "trusted at"],
      ...rows.map((row) => [Settings.tilde(row.path), row.state, row.trustedAt])
    ]))
  })

/**
 * `mcp-fleet trust [file]`: trusts a project config file (default: the one found in the
 * working directory) as it is now; `--revoke` forgets it; `--list` shows every trusted file.
 *
 * @since 0.1.0
 */
export const trust = Command.make("trust", {
  ...Settings.options,
  file: Args.text({ name: "file" }).pipe(
    Args.withDescription(
      "The config file; default: the project file found here (./.mcp.json, ./mcp.json, ./.vscode/mcp.json " +
        "or ./.cursor/mcp.json)"
    ),
    Args.optional
  ),
  revoke: Options.boolean("revoke").pipe(
    Options.withDescription("Forget the file instead: it is asked about again before it runs")
  ),
  list: Options.boolean("list").pipe(Options.withDescription("List the trusted files and whether each has changed"))
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    if (given.list) return yield* listTrusted(settings)
    const path = Option.match(given.file, {
      onNone: () => settings.project[0],
      onSome: (file) => NodePath.resolve(file)
    })
    if (path === undefined) {
      return yield* CliError.usage(
        "there is no ./.mcp.json, ./mcp.json, ./.vscode/mcp.json or ./.cursor/mcp.json here to trust; " +
          "name the file: mcp-fleet trust <file>"
      )
    }
    const records = yield* Trust.records(settings)
    if (given.revoke) {
      const revoked = yield* records.revoke(path).pipe(Effect.mapError(trustError))
      if (settings.json) return yield* Render.json({ action: revoked ? "revoked" : "unchanged", file: path })
      return yield* Render.lines([`${Settings.tilde(path)} ${revoked ? "is no longer trusted" : "was not trusted"}`])
    }
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((error) => CliError.usage(`cannot read ${path}: ${error.message}`))
    )
    const seen = yield* Trust.content(path, text)
    const entry = yield* records.trust(path, seen.subject).pipe(Effect.mapError(trustError))
    if (settings.json) return yield* Render.json({ action: "trusted", file: path, digest: entry.digest })
    yield* Render.lines([
      `trusted ${Settings.tilde(path)} (${entry.digest.slice(0, 19)}…); it starts:`,
      ...seen.servers.map((line) => `  ${line}`)
    ])
  })).pipe(
    Command.withDescription("Trust a project config (./.mcp.json) so its servers may start; --revoke, --list")
  )

// The drifts the names stand for, or a usage error naming the drifted tools.
const chosen = (drifts: ReadonlyArray<ToolPins.Drift>, names: ReadonlyArray<string>, all: boolean) => {
  if (all) return Effect.succeed(drifts)
  if (names.length === 0) return Effect.fail(CliError.usage("name the tools to approve, or pass --all"))
  return Effect.forEach(names, (name) => {
    const drift = drifts.find((candidate) => candidate.name === name)
    if (drift !== undefined) return Effect.succeed(drift)
    const suggestions = Catalog.suggest(name, drifts.map((candidate) => candidate.name))
    return Effect.fail(CliError.usage(
      `'${name}' has not changed since it was pinned${
        suggestions.length > 0
          ? `; did you mean '${suggestions[0]}'?`
          : drifts.length > 0
          ? ` (changed: ${drifts.map((candidate) => candidate.name).join(", ")})`
          : " (no tool has)"
      }`
    ))
  })
}

// Each drift's before and after, for the person who approves it.
const review = (drift: ToolPins.Drift): ReadonlyArray<string> => [
  `${drift.name} (server '${Hidden.forTerminal(drift.server)}'): ${ToolPins.describeDrift(drift)}`,
  ...ToolPins.diff(drift).map((line) => `  ${line}`)
]

// The drifts the person approves: all with --yes, else each one asked on the terminal; with
// no terminal to ask on, none, and a sentence saying so.
const consent = (drifts: ReadonlyArray<ToolPins.Drift>, yes: boolean, json: boolean) =>
  Effect.gen(function*() {
    if (yes || drifts.length === 0) return drifts
    if (json || !Prompt.canAsk()) {
      return yield* CliError.usage(
        `approve shows each changed definition and asks before it approves, but there is no terminal to ask on: ` +
          `review them with 'mcp-fleet tools --drifted', then pass --yes`
      )
    }
    const approved: Array<ToolPins.Drift> = []
    for (const drift of drifts) {
      yield* Render.note(review(drift).join("\n"))
      const answer = yield* Prompt.question(`Approve ${drift.name}? [y/N] `)
      if (answer !== undefined && /^y(es)?$/i.test(answer.trim())) approved.push(drift)
    }
    return approved
  })

/**
 * `mcp-fleet approve <name>...`: shows each drifted tool's definition before and after (a
 * diff of each changed field), asks on the terminal, and makes each approved one's new
 * definition its pin, so it is offered again; `--all` takes every drifted tool, `--yes`
 * approves without asking (required when there is no terminal, and with `--json`).
 *
 * @since 0.1.0
 */
export const approve = Command.make("approve", {
  ...Settings.options,
  names: Args.text({ name: "name" }).pipe(
    Args.withDescription("The qualified name of a drifted tool, as 'mcp-fleet tools --drifted' shows it"),
    Args.repeated
  ),
  all: Options.boolean("all").pipe(Options.withDescription("Approve every tool that changed since it was pinned")),
  yes: Options.boolean("yes").pipe(
    Options.withAlias("y"),
    Options.withDescription("Approve without asking (needed when there is no terminal to ask on)")
  )
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const { registry } = yield* Fleet.start(settings)
    const candidates = yield* chosen(yield* registry.drifted, given.names, given.all)
    const drifts = yield* consent(candidates, given.yes, settings.json)
    yield* Effect.forEach(drifts, (drift) => registry.approveTool(drift.server, drift.tool), { discard: true })
    if (settings.json) {
      return yield* Render.json(drifts.map((drift) => ({ name: drift.name, digest: drift.after.digest })))
    }
    yield* Render.lines(drifts.map((drift) =>
      `approved ${drift.name} (${drift.after.digest.slice(0, 19)}…): ${
        Hidden.forTerminal(Render.clip(drift.after.definition.description, 70))
      }`
    ))
    if (drifts.length === 0) {
      yield* Render.note(
        candidates.length > 0 ? "nothing approved" : "no tool changed its definition since it was pinned"
      )
    }
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription("Approve the new definition of tools that changed since they were pinned")
  )
