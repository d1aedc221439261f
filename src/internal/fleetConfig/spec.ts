/**
 * One server entry of a config file turned into a ServerSpec: its transport, supervision
 * fields merged with the file's defaults, and every problem found on the way.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Redacted from "effect/Redacted"
import type * as Types from "effect/Types"
import type * as Catalog from "../../Catalog.js"
import type * as Host from "../../Host.js"
import type * as OAuth from "../../OAuth.js"
import type * as ServerSpec from "../../ServerSpec.js"
import type * as ToolPins from "../../ToolPins.js"
import type * as EnvFile from "./envFile.js"
import type { Defaults, ServerEntry } from "./schema.js"
import { type Context as Variables, expand, expandRecord } from "./variables.js"

/** What one file's entries are read with: its variables, and the env files read for it. */
export interface Context extends Variables {
  /** The env files read so far, by absolute path. */
  readonly envFiles: ReadonlyMap<string, EnvFile.Parsed>
  /** The env files named by entries and not read yet. */
  readonly unread: Set<string>
}

// A server whose config cannot be used still gets a spec, so status can show its problem
// and the transport it was meant to have.
const placeholder = (kind: Kind | undefined): ServerSpec.TransportSpec =>
  kind === undefined || kind === "stdio" ? { type: "stdio", command: "" } : { type: kind, url: "" }

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

// The values of the entry's `envFile`, all Redacted; a file not read yet is noted in `unread`.
const envFileValues = (entry: ServerEntry, context: Context): Record<string, Redacted.Redacted<string>> => {
  if (entry.envFile === undefined) return {}
  const before = context.problems.length
  const path = context.path.resolve(context.workspace, expand(entry.envFile, "envFile", context).value)
  if (context.problems.length > before) return {}
  const read = context.envFiles.get(path)
  if (read === undefined) {
    context.unread.add(path)
    context.problems.push(`envFile ${path} has not been read`)
    return {}
  }
  for (const problem of read.problems) context.problems.push(`envFile ${path}: ${problem}`)
  return Object.fromEntries(Object.entries(read.values).map(([key, value]) => [key, Redacted.make(value)]))
}

const stdioTransport = (entry: ServerEntry, context: Context): ServerSpec.StdioTransportSpec => {
  const command = expand(entry.command ?? "", "command", context).value
  if (command.trim() === "") context.problems.push(`"command" is empty`)
  const transport: Types.Mutable<ServerSpec.StdioTransportSpec> = { type: "stdio", command }
  if (entry.args !== undefined && entry.args.length > 0) {
    transport.args = entry.args.map((arg, i) => expand(arg, `args[${i}]`, context).value)
  }
  // The entry's own `env` wins over its `envFile`.
  const env = { ...envFileValues(entry, context), ...expandRecord(entry.env, "env", context) }
  if (Object.keys(env).length > 0) transport.env = env
  if (entry.inheritEnv !== undefined) transport.inheritEnv = entry.inheritEnv
  if (entry.cwd !== undefined) {
    // Relative to the project, as an editor means it (`.vscode/`'s and `.cursor/`'s parent).
    transport.cwd = context.path.resolve(context.workspace, expand(entry.cwd, "cwd", context).value)
  }
  return transport
}

const remoteTransport = (
  kind: "http" | "sse" | "ws",
  entry: ServerEntry,
  context: Context
): ServerSpec.RemoteTransportSpec => {
  const url = expand(entry.url ?? "", "url", context).value
  const schemes = kind === "ws" ? /^wss?:$/ : /^https?:$/
  // The url may hold a token: the problem names the field, never the value.
  if (!schemes.test(URL.canParse(url) ? new URL(url).protocol : "")) {
    context.problems.push(`"url" is not ${kind === "ws" ? "a ws or wss" : "an http or https"} URL`)
  }
  const headers = expandRecord(entry.headers, "headers", context)
  const oauth = oauthConfig(entry, context)
  return { type: kind, url, ...(headers === undefined ? {} : { headers }), ...(oauth === undefined ? {} : { oauth }) }
}

// A secret of the OAuth block, expanded and Redacted.
const secret = (value: string, where: string, context: Context) => Redacted.make(expand(value, where, context).value)

// The entry's OAuth settings, its secrets expanded and Redacted.
const oauthConfig = (entry: ServerEntry, context: Context): OAuth.Config | undefined => {
  const given = entry.oauth
  if (given === undefined) return undefined
  const config: Types.Mutable<OAuth.Config> = {}
  if (given.clientId !== undefined) config.clientId = expand(given.clientId, "oauth.clientId", context).value
  if (given.clientSecret !== undefined) config.clientSecret = secret(given.clientSecret, "oauth.clientSecret", context)
  if (given.scopes !== undefined) config.scopes = given.scopes
  if (given.callbackPort !== undefined) config.callbackPort = given.callbackPort
  if (given.clientMetadataUrl !== undefined) config.clientMetadataUrl = given.clientMetadataUrl
  if (given.dpop !== undefined) config.dpop = given.dpop
  const idp = given.enterprise
  if (idp !== undefined) {
    config.enterprise = {
      idpTokenEndpoint: expand(idp.idpTokenEndpoint, "oauth.enterprise.idpTokenEndpoint", context).value,
      idToken: secret(idp.idToken, "oauth.enterprise.idToken", context),
      ...(idp.idpClientId === undefined
        ? {}
        : { idpClientId: expand(idp.idpClientId, "oauth.enterprise.idpClientId", context).value }),
      ...(idp.idpClientSecret === undefined
        ? {}
        : { idpClientSecret: secret(idp.idpClientSecret, "oauth.enterprise.idpClientSecret", context) })
    }
  }
  return config
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

const healthCheck = (
  defaults: Defaults,
  entry: ServerEntry,
  problems: Array<string>
): ServerSpec.HealthCheck | undefined => {
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

// Only what is turned off is written, so `"sampling": true` and no field hash the same.
const hostFeatures = (entry: ServerEntry): Host.Features | undefined => {
  const off: Types.Mutable<Host.Features> = {}
  for (const feature of ["sampling", "elicitation", "roots"] as const) {
    if (entry[feature] === false) off[feature] = false
  }
  return Object.keys(off).length === 0 ? undefined : off
}

/**
 * One server entry as a spec; a server that cannot be used gets a placeholder and a
 * `problem`. `defaults` holds the file's `defaults` block and its top-level `pinning`,
 * `sanitize` and `lazy`.
 */
export const toSpec = (
  name: string,
  entry: ServerEntry,
  defaults: Defaults & {
    readonly pinning?: ToolPins.Mode | undefined
    readonly sanitize?: Catalog.SanitizeMode | undefined
    readonly lazy?: boolean | undefined
  },
  context: Omit<Context, "problems">,
  extraProblems: ReadonlyArray<string>
): ServerSpec.ServerSpec => {
  const problems: Array<string> = [...extraProblems]
  if (name.trim() === "") problems.push("the server name is empty")
  const scoped: Context = { ...context, problems }
  const kind = kindOf(entry, problems)
  const transport = kind === undefined
    ? placeholder(kind)
    : kind === "stdio"
    ? stdioTransport(entry, scoped)
    : remoteTransport(kind, entry, scoped)

  const spec: Types.Mutable<ServerSpec.ServerSpec> = { name, transport }
  // Only `true` is written, so `"required": false` and no field hash the same.
  if (entry.disabled === true || entry.enabled === false) spec.disabled = true
  if (entry.required === true) spec.required = true
  if ((entry.lazy ?? defaults.lazy) === true) spec.lazy = true
  if (entry.perPrincipal === true) spec.perPrincipal = true
  const host = hostFeatures(entry)
  if (host !== undefined) spec.host = host
  if (entry.protocolVersion !== undefined) spec.protocolVersion = entry.protocolVersion
  const pinning = entry.pinning ?? defaults.pinning
  if (pinning !== undefined) spec.pinning = pinning
  const sanitize = entry.sanitize ?? defaults.sanitize
  if (sanitize !== undefined) spec.sanitize = sanitize
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
    spec.transport = placeholder(kind)
    spec.problem = [...new Set(problems)].join("; ")
  }
  return spec
}
