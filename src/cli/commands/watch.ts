/**
 * `mcp-fleet watch`: the fleet live. On a terminal, a screen redrawn on every change (the
 * status of each server and the latest events); otherwise, and with `--json`, one line per
 * event (NDJSON with `--json`), for scripts and tests. Edits of the config files are applied
 * as they are saved. It runs until interrupted (Ctrl-C, SIGTERM), then stops every server.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as FleetConfig from "../../FleetConfig.js"
import * as Hidden from "../../internal/sanitize.js"
import type { RegistryEvent } from "../../RegistryEvent.js"
import * as ServerRegistry from "../../ServerRegistry.js"
import { describe } from "../../ServerState.js"
import * as ToolPins from "../../ToolPins.js"
import * as Fleet from "../Fleet.js"
import * as Prompt from "../Prompt.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"
import * as Trust from "../Trust.js"

/**
 * One thing that happened, as printed: a registry event, or a config edit applied.
 *
 * @since 0.1.0
 */
export type Happening = RegistryEvent | {
  readonly _tag: "ConfigApplied"
  readonly result: ServerRegistry.ReconcileResult
} | {
  /** An edit that cannot be used, or a deleted file: the fleet keeps its last good config. */
  readonly _tag: "ConfigWarning"
  readonly message: string
}

const names = (items: ReadonlyArray<{ readonly name?: string; readonly uri?: string }>) =>
  items.map((item) => item.name ?? item.uri ?? "")

/**
 * A happening as a JSON object (one NDJSON line of `watch --json`).
 *
 * @since 0.1.0
 */
export const toJson = (happening: Happening, now: number): Record<string, unknown> => {
  const base = { time: new Date(now).toISOString(), type: happening._tag }
  switch (happening._tag) {
    case "ConfigApplied":
      return { ...base, ...happening.result }
    case "ConfigWarning":
      return { ...base, message: happening.message }
    case "ServerStateChanged":
      return {
        ...base,
        server: happening.server,
        state: happening.state._tag,
        previous: happening.previous._tag,
        detail: describe(happening.state, now)
      }
    case "ToolsChanged":
    case "ResourcesChanged":
    case "ResourceTemplatesChanged":
    case "PromptsChanged":
      return {
        ...base,
        server: happening.server,
        added: names(happening.added),
        removed: names(happening.removed),
        changed: names(happening.changed)
      }
    case "ToolDrifted":
      return {
        ...base,
        server: happening.server,
        tool: happening.tool,
        quarantined: happening.quarantined,
        changed: ToolPins.differences(happening.before?.definition, happening.after.definition),
        before: happening.before?.digest ?? null,
        after: happening.after.digest
      }
    case "ToolFlagged":
      return {
        ...base,
        server: happening.server,
        kind: happening.kind,
        name: happening.name,
        fields: happening.fields,
        found: happening.found,
        action: happening.action
      }
    case "RefreshFailed":
      return { ...base, server: happening.server, list: happening.list, error: happening.error.message }
    case "ResourceUpdated":
      return { ...base, server: happening.server, uri: happening.uri }
    case "LogMessage":
      return {
        ...base,
        server: happening.server,
        level: happening.level,
        logger: happening.logger ?? null,
        data: happening.data
      }
    case "TaskStatusChanged":
      return {
        ...base,
        server: happening.server,
        taskId: happening.taskId,
        tool: happening.tool,
        status: happening.status,
        statusMessage: happening.statusMessage ?? null
      }
  }
}

const list = (label: string, items: ReadonlyArray<string>) => items.length === 0 ? [] : [`${label} ${items.join(", ")}`]

/**
 * A happening as one line of text.
 *
 * @since 0.1.0
 */
export const toText = (happening: Happening, now: number): string => {
  const time = new Date(now).toISOString().slice(11, 23)
  switch (happening._tag) {
    case "ConfigApplied": {
      const { added, removed, restarted, unchanged } = happening.result
      const parts = [...list("added", added), ...list("removed", removed), ...list("restarted", restarted)]
      return `${time}  config: ${parts.length > 0 ? parts.join("; ") : "no change"} (${unchanged.length} unchanged)`
    }
    case "ConfigWarning":
      return `${time}  config: ${happening.message}`
    case "ServerStateChanged":
      return `${time}  ${happening.server}: ${happening.previous._tag} → ${
        Render.clip(describe(happening.state, now), 100)
      }`
    case "ToolsChanged":
    case "ResourcesChanged":
    case "ResourceTemplatesChanged":
    case "PromptsChanged": {
      const what = happening._tag.replace("Changed", "").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()
      const parts = [
        ...list("+", names(happening.added)),
        ...list("-", names(happening.removed)),
        ...list("~", names(happening.changed))
      ]
      return `${time}  ${happening.server}: ${what} ${Render.clip(parts.join(" "), 100)}`
    }
    case "ToolDrifted":
      return `${time}  ${happening.server}: tool ${happening.tool}: ${ToolPins.describeDrift(happening)}${
        happening.quarantined ? "; held back until approved" : ""
      }`
    case "ToolFlagged":
      return `${time}  ${happening.server}: ${happening.kind} ${happening.name} hides text (${
        happening.found.join(", ")
      }); ${happening.action}`
    case "RefreshFailed":
      return `${time}  ${happening.server}: re-listing ${happening.list} failed: ${happening.error.message}`
    case "ResourceUpdated":
      return `${time}  ${happening.server}: updated ${happening.uri}`
    case "LogMessage":
      return `${time}  ${happening.server}: [${happening.level}] ${
        Render.clip(typeof happening.data === "string" ? happening.data : JSON.stringify(happening.data), 100)
      }`
    case "TaskStatusChanged":
      return `${time}  ${happening.server}: task ${happening.taskId} (${happening.tool}) ${happening.status}${
        happening.statusMessage === undefined ? "" : `: ${Render.clip(happening.statusMessage, 100)}`
      }`
  }
}

const RECENT = 15

// The terminal view: the status table and the latest events, redrawn in place.
const screen = (registry: ServerRegistry.ServerRegistry, recent: ReadonlyArray<string>, now: number) =>
  Effect.map(registry.status, (statuses) =>
    [
      `mcp-fleet watch — ${statuses.length} servers, ${
        statuses.filter((status) => status.state._tag === "Ready").length
      } ready (Ctrl-C to stop)`,
      "",
      ...Render.statusTable(statuses, now),
      "",
      "recent events:",
      ...recent
    ].join("\n"))

/**
 * `mcp-fleet watch`.
 *
 * @since 0.1.0
 */
export const watch = Command.make("watch", Settings.options, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    if (settings.paths.length === 0) return yield* Settings.noConfig()
    yield* Trust.ensure(settings)
    const registry = yield* Fleet.makeRegistry(settings, yield* Fleet.samplingCommand(settings))
    const happenings = yield* Queue.unbounded<Happening>()
    yield* registry.events.pipe(Stream.runForEach((event) => Queue.offer(happenings, event)), Effect.forkScoped)
    // Fails now on a broken config; later broken edits are reported and skipped.
    yield* FleetConfig.sync({
      paths: settings.paths,
      admit: yield* Trust.admit(settings),
      askInput: Prompt.askInput(),
      onApplied: ({ result }) => Queue.offer(happenings, { _tag: "ConfigApplied", result }),
      onWarning: (message) => Queue.offer(happenings, { _tag: "ConfigWarning", message })
    }).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
    const tty = !settings.json && process.stdout.isTTY === true
    if (!tty && !settings.json) {
      yield* Render.note(`watching ${settings.paths.map((path) => Settings.tilde(path)).join(", ")}`)
    }
    const recent: Array<string> = []
    return yield* Effect.forever(Effect.gen(function*() {
      const happening = yield* Queue.take(happenings)
      const now = yield* Clock.currentTimeMillis
      if (settings.json) return yield* Render.lines([JSON.stringify(toJson(happening, now))])
      if (!tty) return yield* Render.lines([toText(happening, now)])
      recent.push(toText(happening, now))
      if (recent.length > RECENT) recent.shift()
      // Home and clear, then the whole view: one write, no flicker of half a screen.
      process.stdout.write(`\x1b[H\x1b[2J${Hidden.forTerminal(yield* screen(registry, recent, now))}\n`)
    }))
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription("Watch the fleet live: status per server and events as they happen, following config edits")
  )
