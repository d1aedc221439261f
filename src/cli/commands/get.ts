/**
 * `mcp-fleet get <name>`: one server as `claude mcp get` shows it, and what the fleet knows
 * of it once started: its config (secrets masked), state, revision, capabilities, counts,
 * last error with its stderr tail, and pid.
 *
 * @since 0.5.0
 */
import * as Command from "@effect/cli/Command"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Secrets from "../../internal/secrets.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import * as ServerSpec from "../../ServerSpec.js"
import { describe } from "../../ServerState.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"

// A value that came from a variable, an env file or an input is a secret; so is a literal
// one whose name says it is (API_KEY, Authorization, ...): shown as *** either way.
const secretName = /key|token|secret|passw|auth|cookie|credential|session/i

const masked = (
  record: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
): Record<string, string> | undefined =>
  record === undefined ? undefined : Object.fromEntries(
    Object.entries(record).map((
      [key, value]
    ) => [key, Redacted.isRedacted(value) || secretName.test(key) ? Secrets.MASK : value])
  )

/**
 * A server's config as it may be shown: env and header values that are secrets masked, the
 * URL without credentials or query, any secret in the arguments masked.
 *
 * @since 0.5.0
 */
export const configJson = (spec: ServerSpec.ServerSpec): Record<string, unknown> => {
  const masker = Secrets.make(ServerSpec.secrets(spec))
  const transport = spec.transport
  const fields: Record<string, unknown> = transport.type === "stdio"
    ? {
      type: "stdio",
      command: masker.text(transport.command),
      args: (transport.args ?? []).map((arg) => masker.text(arg)),
      cwd: transport.cwd ?? null,
      env: masked(transport.env) ?? {}
    }
    : transport.type === "custom"
    ? { type: "custom" }
    : { type: transport.type, url: Secrets.safeUrl(transport.url), headers: masked(transport.headers) ?? {} }
  return {
    ...fields,
    disabled: spec.disabled === true,
    required: spec.required === true,
    ...(spec.problem === undefined ? {} : { problem: spec.problem })
  }
}

const capabilityNames = (capabilities: McpSchema.ServerCapabilities | undefined) =>
  capabilities === undefined ? [] : Object.keys(capabilities).filter((key) => key !== "experimental")

const statusJson = (
  status: ServerRegistry.ServerStatus,
  capabilities: McpSchema.ServerCapabilities | undefined,
  now: number
) => ({
  state: status.state._tag,
  detail: describe(status.state, now),
  protocolVersion: status.protocolVersion ?? null,
  serverInfo: status.serverInfo ?? null,
  capabilities: capabilities ?? null,
  counts: status.counts,
  pid: typeof status.connection?.pid === "number" ? status.connection.pid : null,
  error: status.lastError === undefined
    ? null
    : { reason: status.lastError.reason._tag, message: status.lastError.message }
})

type Shown = ReturnType<typeof statusJson>

// `label:  value` lines, the labels aligned.
const aligned = (rows: ReadonlyArray<readonly [string, string]>): ReadonlyArray<string> => {
  const width = Math.max(...rows.map(([label]) => label.length)) + 2
  return rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`)
}

// The env of a stdio server or the headers of a remote one, masked already.
const variables = (config: Record<string, unknown>): ReadonlyArray<readonly [string, string]> => {
  const label = config.type === "stdio" ? "env" : "headers"
  const entries = Object.entries((config[label] ?? {}) as Record<string, string>)
  return entries.length === 0 ? [] : [[label, entries.map(([key, value]) => `${key}=${value}`).join(" ")]]
}

const show = (name: string, file: string, config: Record<string, unknown>, status: Shown) => {
  const where = config.type === "stdio"
    ? [config.command, ...(config.args as Array<string>)].join(" ")
    : String(config.url ?? "")
  const { counts } = status
  const rows: Array<readonly [string, string]> = [
    ["server", name],
    ["file", Settings.tilde(file)],
    ["transport", `${String(config.type)}: ${where}`],
    ...(typeof config.cwd === "string" ? [["cwd", config.cwd] as const] : []),
    ...variables(config),
    ["state", status.detail],
    ["protocol", status.protocolVersion ?? ""],
    ["server info", status.serverInfo === null ? "" : `${status.serverInfo.name} ${status.serverInfo.version}`],
    ["capabilities", capabilityNames(status.capabilities ?? undefined).join(", ")],
    [
      "counts",
      `${counts.tools} tools, ${counts.resources} resources, ${counts.templates} templates, ${counts.prompts} prompts`
    ],
    ["pid", status.pid === null ? "" : String(status.pid)]
  ]
  const error = status.error === null ? [] : ["", `last error: ${status.error.message}`]
  return Render.lines([...aligned(rows), ...error])
}

/**
 * `mcp-fleet get <name>`.
 *
 * @since 0.5.0
 */
export const get = Command.make(
  "get",
  { ...Settings.options, server: Fleet.serverArg("name") },
  (given) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings(given)
      const { loaded, registry } = yield* Fleet.start(settings, { only: given.server, asIs: true })
      const spec = loaded.servers.find((candidate) => candidate.name === given.server)!
      const status = (yield* registry.status).find((candidate) => candidate.name === given.server)!
      const capabilities = status.state._tag === "Ready"
        ? yield* Effect.option(registry.withClient(given.server, (client) => Effect.succeed(client.capabilities)))
        : Option.none()
      const shown = statusJson(status, Option.getOrUndefined(capabilities), yield* Clock.currentTimeMillis)
      const config = configJson(spec)
      const file = loaded.origin[spec.name]!
      if (settings.json) return yield* Render.json({ name: spec.name, file, config, ...shown })
      yield* show(spec.name, file, config, shown)
    }).pipe(Fleet.oneShot)
).pipe(Command.withDescription(
  "Show one server: its config (secrets masked), state, revision, capabilities, counts, pid and last error"
))
