/**
 * What one server of the fleet should be: how to reach it and how to supervise it. The
 * registry keeps the running fleet equal to a set of these; config files are turned into
 * them by FleetConfig, and programs can build them directly.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Catalog from "./Catalog.js"
import type * as Host from "./Host.js"
import { sha256Hex } from "./internal/crypto.js"
import { bearer } from "./internal/reveal.js"
import * as Launcher from "./Launcher.js"
import type { McpError } from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"
import type * as OAuth from "./OAuth.js"
import * as StreamableHttp from "./StreamableHttp.js"
import type * as ToolPins from "./ToolPins.js"
import type { Transport } from "./Transport.js"

/**
 * A local server: a child process speaking on stdio. The fields are Stdio's own options
 * (secrets in `env` are Redacted; the child gets a safe base environment and `env`, or this
 * process's whole environment with `inheritEnv: true`).
 *
 * @since 0.1.0
 * @category models
 */
export interface StdioTransportSpec
  extends Pick<Launcher.StdioOptions, "command" | "args" | "env" | "inheritEnv" | "cwd">
{
  readonly type: "stdio"
}

/**
 * A remote server over Streamable HTTP (`http`, falling back to HTTP+SSE for servers that
 * predate it), the 2024-11-05 HTTP+SSE transport only (`sse`), or WebSocket (`ws`). The
 * fields are the `url` and `headers` (sent with every request; secrets Redacted) that
 * StreamableHttp and WebSocket share.
 *
 * @since 0.1.0
 * @category models
 */
export interface RemoteTransportSpec
  extends Pick<StreamableHttp.Options, "url" | "headers">, Pick<Launcher.WebSocketOptions, "url" | "headers">
{
  readonly type: "http" | "sse" | "ws"
  /**
   * OAuth settings (`http` and `sse`): used when the fleet has a `OAuth.TokenStore` and the
   * server refuses a connection. All optional; without them the server is still authorized.
   */
  readonly oauth?: OAuth.Config | undefined
}

/**
 * Any other transport, made by an Effect: in-memory servers, tests, custom channels. `key`
 * stands for everything about the connection: change it and the server is restarted.
 *
 * @since 0.1.0
 * @category models
 */
export interface CustomTransportSpec {
  readonly type: "custom"
  readonly key: string
  readonly connect: Effect.Effect<Transport, McpError, Scope.Scope>
}

/**
 * How to reach a server.
 *
 * @since 0.1.0
 * @category models
 */
export type TransportSpec = StdioTransportSpec | RemoteTransportSpec | CustomTransportSpec

/**
 * When and how often a failed server is started again: exponential backoff with jitter,
 * capped, reset once the server has been up for `stableAfter`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RestartPolicy {
  /** The delay before the first retry. Default: 500 ms. */
  readonly initialDelay: Duration.DurationInput
  /** The longest delay. Default: 30 s. */
  readonly maxDelay: Duration.DurationInput
  /** How much the delay grows per failed attempt. Default: 2. */
  readonly factor: number
  /** How much each delay varies at random, as a fraction (0.2 = ±20%). Default: 0.2. */
  readonly jitter: number
  /** How long a server must stay ready for its failures to be forgotten. Default: 60 s. */
  readonly stableAfter: Duration.DurationInput
  /** After this many failed attempts in a row the server stays Failed. Default: no limit. */
  readonly maxAttempts?: number | undefined
}

/**
 * Periodic pings: after `failures` unanswered pings in a row the server is restarted.
 *
 * @since 0.1.0
 * @category models
 */
export interface HealthCheck {
  readonly interval: Duration.DurationInput
  /** How long one ping may take. Default: 10 s. */
  readonly timeout?: Duration.DurationInput | undefined
  /** Failed pings in a row before a restart. Default: 3. */
  readonly failures?: number | undefined
}

/**
 * One server as it should be.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerSpec {
  /** The server's name: unique in the fleet, used in catalog names, errors and logs. */
  readonly name: string
  readonly transport: TransportSpec
  /** A disabled server is known but not started. Default: false. */
  readonly disabled?: boolean | undefined
  /** The fleet is ready only when every required server is. Default: false. */
  readonly required?: boolean | undefined
  /** Overrides of the registry's restart policy. */
  readonly restart?: Partial<RestartPolicy> | undefined
  readonly health?: HealthCheck | undefined
  /** How long initialize may take. Default: 30 s. */
  readonly initializeTimeout?: Duration.DurationInput | undefined
  /** The default timeout of a request (reset by progress for tool calls). Default: 60 s. */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** How long a call waits for the server to become ready. Default: 30 s. */
  readonly readyTimeout?: Duration.DurationInput | undefined
  /** Stop the server after this long without calls and start it on the next one. Default: never. */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /**
   * Not started with the fleet: it waits Idle, its catalog taken from the `CatalogCache` (its
   * lists of the last time it ran), and the first call, read or get starts it. A server the
   * cache has no entry of is started once in the background, after the other servers have
   * settled, to fill it, then goes Idle. Default: false.
   */
  readonly lazy?: boolean | undefined
  /**
   * What happens when one of its tools changes its definition since it was pinned (see
   * ToolPins). Default: the registry's `pinning`.
   */
  readonly pinning?: ToolPins.Mode | undefined
  /**
   * What happens to hidden text (tag characters, zero-width and bidi controls, HTML
   * comments, ANSI escapes) in the names and descriptions of its tools, prompts and
   * resources before the catalog shows them (see `Catalog.sanitize`). Default: the registry's
   * `sanitize`.
   */
  readonly sanitize?: Catalog.SanitizeMode | undefined
  /**
   * The config file the server was read from (absolute path), if any: its tools are
   * pinned per file and entry (see `ToolPins.identity`).
   */
  readonly origin?: string | undefined
  /**
   * Host features this server is not offered even when the fleet has their services
   * (`{ sampling: false }`, ...). Default: all it has.
   */
  readonly host?: Host.Features | undefined
  /**
   * The protocol revision to speak: a stateful one (initialize, no probe) or 2026-07-28
   * (only that). Default: probe with `server/discover`, falling back once to the newest
   * stateful revision when the 2026-07-28 exchanges fail for protocol reasons while
   * connecting.
   */
  readonly protocolVersion?: McpSchema.Revision | undefined
  /** Why the configuration cannot be used; the server then goes straight to Failed. */
  readonly problem?: string | undefined
  /**
   * One instance of the server per principal (the OAuth subject of the gateway's caller):
   * each its own process and credentials (`ServerRegistry.Options.principalCredentials`),
   * started on its first call and stopped when idle (`idleTimeout`, default 5 min); reads,
   * prompts and completions go there too. The server's own instance only lists. Default: false.
   */
  readonly perPrincipal?: boolean | undefined
  /** Set by the registry on a per-principal instance's spec: whose instance it is. */
  readonly principal?: string | undefined
}

/**
 * The default restart policy.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultRestartPolicy: RestartPolicy = {
  initialDelay: "500 millis",
  maxDelay: "30 seconds",
  factor: 2,
  jitter: 0.2,
  stableAfter: "60 seconds"
}

const millis = (input: Duration.DurationInput | undefined) =>
  input === undefined ? undefined : Duration.toMillis(Duration.decode(input))

// Durations as milliseconds and secrets as digests, so equal configs hash equal and the
// hash input never holds a secret in plain text.
const canonical = (value: unknown): unknown => {
  if (Redacted.isRedacted(value)) {
    return { redacted: sha256Hex(String(Redacted.value(value))) }
  }
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const field = (value as Record<string, unknown>)[key]
      if (field !== undefined && typeof field !== "function") out[key] = canonical(field)
    }
    return out
  }
  return value
}

/**
 * A digest of everything that affects how the server runs: two specs with the same hash
 * are the same server, and the registry leaves it running.
 *
 * @since 0.1.0
 * @category utils
 */
export const hash = (spec: ServerSpec): string => {
  let digest = hashes.get(spec)
  if (digest === undefined) {
    digest = computeHash(spec)
    hashes.set(spec, digest)
  }
  return digest
}

// Specs are immutable: config watching, reconcile and the actor all hash the same objects.
const hashes = new WeakMap<ServerSpec, string>()

const computeHash = (spec: ServerSpec): string => {
  const { health, restart, transport, ...rest } = spec
  const normalized = {
    ...rest,
    initializeTimeout: millis(spec.initializeTimeout),
    requestTimeout: millis(spec.requestTimeout),
    readyTimeout: millis(spec.readyTimeout),
    idleTimeout: millis(spec.idleTimeout),
    restart: restart && {
      ...restart,
      initialDelay: millis(restart.initialDelay),
      maxDelay: millis(restart.maxDelay),
      stableAfter: millis(restart.stableAfter)
    },
    health: health && { ...health, interval: millis(health.interval), timeout: millis(health.timeout) },
    transport: transport.type === "custom" ? { type: "custom", key: transport.key } : transport
  }
  return sha256Hex(JSON.stringify(canonical(normalized))).slice(0, 16)
}

// Env names that say their value is a secret even when it is written in the file as is.
const secretName =
  /TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|(?:^|_)(?:PAT|KEY)$/i

const urlSecrets = (url: string): Array<string> => {
  if (!URL.canParse(url)) return []
  const parsed = new URL(url)
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text)
    } catch {
      return text
    }
  }
  const user = decode(parsed.username)
  const password = decode(parsed.password)
  return [user, password, ...(password === "" ? [] : [`${user}:${password}`]), ...parsed.searchParams.values()]
}

/**
 * The secrets of a server's config, which mcp-fleet masks in what the server says (stderr,
 * HTTP error bodies, JSON-RPC errors, log lines) before it shows, logs or returns it: the
 * Redacted `env` values and those whose name says they are secret (`*_TOKEN`, `*_KEY`,
 * `*SECRET*`, `*PASSWORD*`, `*AUTH*`, ...), every header value, and the URL's credentials
 * and query-parameter values. Values shorter than 8 characters and numbers are never masked.
 *
 * @since 0.1.0
 * @category utils
 */
export const secrets = (spec: ServerSpec): ReadonlyArray<Redacted.Redacted<string>> => {
  const transport = spec.transport
  const values: ReadonlyArray<string | Redacted.Redacted<string>> = transport.type === "stdio"
    ? Object.entries(transport.env ?? {}).filter(([name, value]) => Redacted.isRedacted(value) || secretName.test(name))
      .map(([, value]) => value)
    : transport.type === "custom"
    ? []
    : [
      ...Object.values(transport.headers ?? {}),
      ...urlSecrets(transport.url),
      ...(transport.oauth?.clientSecret === undefined ? [] : [transport.oauth.clientSecret]),
      ...(transport.oauth?.privateKey === undefined ? [] : [transport.oauth.privateKey]),
      ...(transport.oauth?.assertion === undefined ? [] : [transport.oauth.assertion]),
      ...(transport.oauth?.enterprise === undefined ? [] : [transport.oauth.enterprise.idToken]),
      ...(transport.oauth?.enterprise?.idpClientSecret === undefined
        ? []
        : [transport.oauth.enterprise.idpClientSecret])
    ]
  return values.map((value) => Redacted.isRedacted(value) ? value : Redacted.make(value))
}

/**
 * Opens the configured transport of a server (for a stdio server: spawns it), without the
 * MCP handshake; an HTTP server's requests carry `auth`: an OAuth access token as a bearer
 * token, or the credentials made per request of a DPoP-bound one. It closes with the Scope.
 * A stdio or ws server is opened by the Launcher in context (`NodeFleet.layer` from
 * `mcp-fleet/node` on Node); without one it fails with a `Config` McpError naming it.
 *
 * @since 0.1.0
 */
export const connect = (
  spec: ServerSpec,
  auth?: Redacted.Redacted<string> | StreamableHttp.RequestAuth | undefined
): Effect.Effect<Transport, McpError, Scope.Scope | HttpClient.HttpClient> => {
  const transport = spec.transport
  switch (transport.type) {
    case "stdio":
      return Launcher.stdio({
        name: spec.name,
        command: transport.command,
        args: transport.args,
        env: transport.env,
        inheritEnv: transport.inheritEnv,
        cwd: transport.cwd
      })
    case "http":
    case "sse":
      return StreamableHttp.make({
        name: spec.name,
        url: transport.url,
        headers: auth === undefined || !Redacted.isRedacted(auth)
          ? transport.headers
          : { ...transport.headers, authorization: bearer(auth) },
        mode: transport.type === "sse" ? "sse" : "auto",
        auth: auth === undefined || Redacted.isRedacted(auth) ? undefined : auth
      })
    case "ws":
      return Launcher.webSocket({ name: spec.name, url: transport.url, headers: transport.headers })
    case "custom":
      return transport.connect
  }
}
