/**
 * Starts the fleet a command works on: the config files read (a project file once trusted),
 * the servers it needs started with their tools pinned, and a progress line on a terminal
 * while they connect.
 *
 * A one-shot command stops waiting for a server that cannot come up: Failed for good, or the
 * same exit before initialize twice in a row.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import { SystemError, type SystemErrorReason } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Catalog from "../Catalog.js"
import * as CatalogCache from "../CatalogCache.js"
import * as FleetConfig from "../FleetConfig.js"
import type * as Host from "../Host.js"
import * as Secrets from "../internal/secrets.js"
import * as McpError from "../McpError.js"
import * as McpSchema from "../McpSchema.js"
import * as NodeOAuth from "../NodeOAuth.js"
import * as OAuth from "../OAuth.js"
import type * as Policy from "../Policy.js"
import type { RegistryEvent } from "../RegistryEvent.js"
import * as ServerRegistry from "../ServerRegistry.js"
import * as ServerSpec from "../ServerSpec.js"
import { isTerminal } from "../ServerState.js"
import * as Stdio from "../Stdio.js"
import * as ToolPins from "../ToolPins.js"
import * as CliError from "./CliError.js"
import * as HostFeatures from "./HostFeatures.js"
import * as Prompt from "./Prompt.js"
import * as Render from "./Render.js"
import * as Settings from "./Settings.js"
import * as Trust from "./Trust.js"

/**
 * A running fleet and the config it came from.
 *
 * @since 0.1.0
 */
export interface Started {
  readonly registry: ServerRegistry.ServerRegistry
  readonly loaded: FleetConfig.Loaded
}

/**
 * Which servers to start.
 *
 * @since 0.1.0
 */
export interface StartOptions {
  /**
   * Start only this server and wait until it is ready, failing when it cannot be. Without
   * it, every server starts and the command waits until each is ready or has failed once
   * (a timeout is then not an error: the command shows what it has).
   */
  readonly only?: string | undefined
  /**
   * Wait for `only` as a call to it waits for its server, within `readyTimeout` (`call`'s
   * `--ready-timeout`), else within the server's own readyTimeout: the registry decides, as
   * for the call itself (`ServerRegistry.CallToolOptions`). Without it, `--timeout` bounds
   * the wait.
   */
  readonly asCall?: { readonly readyTimeout: Duration.Duration | undefined } | undefined
  /** The config, when the command has read it already. */
  readonly loaded?: FleetConfig.Loaded | undefined
  /**
   * With `only`: a server that cannot be ready (disabled, failing) is no error, the command
   * shows it as it is (`get`).
   */
  readonly asIs?: boolean | undefined
}

// Fails with a clear sentence when there are no config files; names them to a person.
const announce = (settings: Settings.Settings): Effect.Effect<void, CliError.CliError> =>
  settings.paths.length === 0
    ? Settings.noConfig()
    : settings.json
    ? Effect.void
    : Render.note(`config: ${settings.paths.map((path) => Settings.tilde(path)).join(", ")}`)

/**
 * Reads the config files, failing with a clear sentence when there are none; for commands
 * that only read or edit them.
 *
 * @since 0.1.0
 */
export const readConfig = (
  settings: Settings.Settings
): Effect.Effect<FleetConfig.Loaded, CliError.CliError | FleetConfig.ConfigError, FileSystem.FileSystem> =>
  Effect.zipRight(announce(settings), FleetConfig.load({ paths: settings.paths }))

/**
 * Reads the config files of a command that starts their servers: a project file must be
 * trusted first (see Trust), and what is read is what was trusted.
 *
 * @since 0.1.0
 */
export const loadConfig = (
  settings: Settings.Settings
): Effect.Effect<FleetConfig.Loaded, CliError.CliError | FleetConfig.ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    yield* announce(settings)
    yield* Trust.ensure(settings)
    const loaded = yield* FleetConfig.load({
      paths: settings.paths,
      admit: yield* Trust.admit(settings),
      askInput: Prompt.askInput()
    })
    if (!settings.json) yield* Effect.forEach(loaded.warnings, warn, { discard: true })
    return loaded
  })

/**
 * Host services that answer the servers instead of HostFeatures' (the gateway's clients, for
 * `serve`).
 *
 * @since 0.2.0
 */
export type HostServices = Context.Context<Host.Sampling | Host.Elicitation | Host.Roots>

const pinsDir = (settings: Settings.Settings) => NodePath.join(settings.configDir, "pins")
const cacheDir = (settings: Settings.Settings) => NodePath.join(settings.configDir, "catalog-cache")

// How long after the fleet settled a long-running command forgets gone pins: the first
// lists (a host lists right after initialize) are answered first.
const AFTER_SETTLED = "1 second"

// The pins of servers gone from the config files just read (an entry removed, or running
// something else now) are forgotten, so they cannot hold back a server added later.
const forgetGonePins = (settings: Settings.Settings, loaded: FleetConfig.Loaded) =>
  Effect.scoped(Effect.flatMap(ToolPins.makeFile(pinsDir(settings)), (store) =>
    store.retain(
      loaded.sources.filter((source) => source.found).map((source) => NodePath.resolve(source.path)),
      loaded.servers.map(ToolPins.identity)
    )))

// The pins and the catalog cache are a small local file per server, a hundred of them read as
// a gateway over lazy servers starts: each read at once, synchronously, not in four trips to
// libuv's pool (open, stat, read, close) each resuming a fiber. Writes stay asynchronous.
const reasons: Readonly<Record<string, SystemErrorReason>> = {
  ENOENT: "NotFound",
  EACCES: "PermissionDenied",
  EISDIR: "BadResource",
  ENOTDIR: "BadResource"
}
const readsAtOnce = (fs: FileSystem.FileSystem): FileSystem.FileSystem => ({
  ...fs,
  readFileString: (path, encoding) =>
    Effect.try({
      try: () => NodeFs.readFileSync(path, { encoding: (encoding ?? "utf-8") as BufferEncoding }),
      catch: (error) =>
        new SystemError({
          reason: reasons[(error as NodeJS.ErrnoException).code ?? ""] ?? "Unknown",
          module: "FileSystem",
          method: "readFileString",
          pathOrDescriptor: path,
          description: error instanceof Error ? error.message : String(error)
        })
    })
})

/**
 * The CLI's registry: OAuth tokens in the user config dir (`oauth/`), tools pinned there
 * (`pins/`, one file per server identity; pins of servers gone from the config forgotten),
 * each server's lists cached there for lazy servers (`catalog-cache/`),
 * and a tool whose definition changed held back until approved, unless the config says
 * otherwise (`pinning`); the servers answered as HostFeatures says (roots, elicitation on
 * the terminal, sampling by the config's `sampling` command).
 *
 * @since 0.1.0
 */
export const makeRegistry = (
  settings: Settings.Settings,
  sampling: FleetConfig.SamplingCommand | undefined,
  host?: HostServices | undefined
): Effect.Effect<
  ServerRegistry.ServerRegistry,
  CliError.CliError,
  Scope.Scope | FileSystem.FileSystem | Path.Path | ServerRegistry.Requirements
> =>
  Effect.flatMap(
    Effect.updateService(ToolPins.makeFile(pinsDir(settings)), FileSystem.FileSystem, readsAtOnce),
    (store) => {
      const options: ServerRegistry.Options = {
        pinning: "quarantine",
        ...(settings.protocolVersion === undefined ? {} : { client: { protocolVersion: settings.protocolVersion } })
      }
      const cluster = settings.cluster
      const made = cluster === undefined
        ? ServerRegistry.make(options)
        : joinCluster(cluster, options)
      return made.pipe(
        Effect.provideService(ToolPins.PinStore, store),
        Effect.provide(
          CatalogCache.layerFile(cacheDir(settings)).pipe(
            Layer.provide(Layer.effect(FileSystem.FileSystem, Effect.map(FileSystem.FileSystem, readsAtOnce)))
          )
        ),
        Effect.provideService(OAuth.TokenStore, NodeOAuth.makeFileStore(NodeOAuth.storeDir(settings.configDir))),
        Effect.provideService(OAuth.NetworkGuard, NodeOAuth.makeNetworkGuard()),
        host === undefined ? Effect.provide(HostFeatures.layer(settings, sampling)) : Effect.provide(host)
      )
    }
  )

// The fleet as a replica of the cluster (a runner too when `runner` is set); a runner tells
// its address on stdout with --json (see the `runner` command). The cluster's code (Effect
// cluster, SQL, PostgreSQL, msgpack: a seventh of the CLI) is loaded by a command that joins one.
const joinCluster = (cluster: NonNullable<Settings.Settings["cluster"]>, options: ServerRegistry.Options) =>
  Effect.promise(() => import("../cluster/index.js")).pipe(
    Effect.flatMap(({ ClusterRegistry }) =>
      ClusterRegistry.make({ ...options, url: cluster.url, runner: cluster.runner })
    ),
    Effect.map(({ cluster: joined, registry }) => {
      cluster.onJoined?.(joined.runner)
      return registry
    }),
    Effect.mapError((error) => CliError.failure(`cannot join the cluster: ${Secrets.scrubUrls(error.message)}`))
  )

/**
 * The `sampling` command of the config files, read before a command that follows them
 * starts its fleet (the fleet's host features are fixed when it starts). Asks nothing.
 *
 * @since 0.2.0
 */
export const samplingCommand = (
  settings: Settings.Settings
): Effect.Effect<FleetConfig.SamplingCommand | undefined, FleetConfig.ConfigError, FileSystem.FileSystem> =>
  Effect.flatMap(
    Trust.admit(settings),
    (admit) => Effect.map(FleetConfig.load({ paths: settings.paths, admit }), (loaded) => loaded.sampling)
  )

// The command's logs (the gateway's among them) without any secret of the config; each
// server's own logs are masked by the fleet, also for servers added by a later edit.
const maskLogs = (loaded: FleetConfig.Loaded): Effect.Effect<void, never, Scope.Scope> =>
  Secrets.maskLogsScoped(Secrets.make(loaded.servers.flatMap(ServerSpec.secrets)))

/**
 * Shows a warning about the config files on stderr, whatever the log level: an edit that
 * cannot be used, a deleted file.
 *
 * @since 0.1.0
 */
export const warn = (message: string): Effect.Effect<void> => Render.note(`mcp-fleet: warning: ${message}`)

/**
 * A running fleet and its policy that follow the config files as they are edited: servers
 * come, go and restart, and the policy changes, until the Scope closes.
 *
 * @since 0.1.0
 */
export interface Following extends Started {
  readonly policy: Policy.Policy
}

/**
 * Starts every server of the config files and follows their edits (`serve`). The fleet
 * stops, every process ended, when the Scope closes.
 *
 * @since 0.1.0
 */
export const follow = (
  settings: Settings.Settings,
  host?: HostServices | undefined
): Effect.Effect<
  Following,
  CliError.CliError | FleetConfig.ConfigError,
  Scope.Scope | FileSystem.FileSystem | Path.Path | ServerRegistry.Requirements
> =>
  Effect.gen(function*() {
    yield* announce(settings)
    yield* Trust.ensure(settings)
    // The files are read once more below: a fleet answered by `host` has no use for `sampling`.
    const registry = yield* makeRegistry(
      settings,
      host === undefined ? yield* samplingCommand(settings) : undefined,
      host
    )
    const { loaded, policy } = yield* FleetConfig.syncWithPolicy({
      paths: settings.paths,
      admit: yield* Trust.admit(settings),
      askInput: Prompt.askInput(),
      onWarning: warn
    }).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
    yield* maskLogs(loaded)
    // Off the start path: it reads every pins file there is, which would compete with the
    // lazy servers' restores (and the first lists that wait for them) for the same thread.
    yield* registry.awaitReady({ servers: "settled", timeout: settings.timeout }).pipe(
      Effect.ignore,
      Effect.zipRight(Effect.sleep(AFTER_SETTLED)),
      Effect.zipRight(forgetGonePins(settings, loaded)),
      Effect.forkScoped
    )
    return { registry, loaded, policy }
  })

// One line on stderr, redrawn as servers connect, and erased when they have.
const progressLine = (registry: ServerRegistry.ServerRegistry, names: ReadonlySet<string>) =>
  Effect.gen(function*() {
    const events = yield* registry.subscribe
    const draw = Effect.gen(function*() {
      const statuses = (yield* registry.status).filter((status) => names.has(status.name))
      const ready = statuses.filter((status) => status.state._tag === "Ready").length
      const failed = statuses.filter((status) => status.state._tag === "Failed" || isTerminal(status.state)).length
      const waiting = statuses.filter((status) => status.state._tag === "Pending" || status.state._tag === "Connecting")
        .map((status) => status.name)
      const text = `connecting ${statuses.length} server${statuses.length === 1 ? "" : "s"}: ${ready} ready${
        failed > 0 ? `, ${failed} failed` : ""
      }${waiting.length > 0 ? ` (waiting for ${Render.clip(waiting.join(", "), 50)})` : ""}`
      process.stderr.write(`\r\x1b[K${text}`)
    })
    yield* draw
    yield* Queue.take(events).pipe(Effect.zipRight(draw), Effect.forever)
  }).pipe(
    Effect.scoped,
    Effect.ensuring(Effect.sync(() => process.stderr.write("\r\x1b[K")))
  )

// How a server exited before answering its first request (the server/discover probe, or
// initialize) with code, signal and stderr, or undefined for any other failure.
const startupExit = (error: McpError.McpError): string | undefined => {
  const reason = error.reason
  if (reason._tag !== "Closed" || (reason.method !== "initialize" && reason.method !== McpSchema.DISCOVER_METHOD)) {
    return undefined
  }
  if (reason.exitCode == null && reason.signal == null) return undefined
  return JSON.stringify([reason.exitCode, reason.signal, reason.stderrTail ?? ""])
}

// Fails once `server` has exited before answering initialize twice in a row, the same way
// both times: it will do so again, and a command has no reason to wait for it. Failures no
// retry can fix at all (a missing command) end the wait by themselves: Failed for good.
const failsEveryStart = (
  events: Queue.Dequeue<RegistryEvent>,
  server: string
): Effect.Effect<never, McpError.McpError> =>
  Effect.gen(function*() {
    let last: string | undefined
    while (true) {
      const event = yield* Queue.take(events)
      if (event._tag !== "ServerStateChanged" || event.server !== server || event.state._tag !== "Failed") continue
      const exit = startupExit(event.state.error)
      if (exit !== undefined && exit === last) {
        return yield* Effect.fail(McpError.unavailable(server, {
          state: "Failed",
          message:
            `fails the same way at every start (twice in a row), so waiting will not help: ${event.state.error.message}`
        }))
      }
      last = exit
    }
  })

/**
 * Starts the servers a command needs and waits for them as `options.only` says. A command
 * stops waiting for its one server when the server is Failed for good, or fails the same
 * way at every start. The fleet stops, every process ended, when the Scope closes.
 *
 * @since 0.1.0
 */
export const start = (
  settings: Settings.Settings,
  options: StartOptions = {}
): Effect.Effect<
  Started,
  CliError.CliError | FleetConfig.ConfigError | McpError.McpError,
  Scope.Scope | FileSystem.FileSystem | Path.Path | ServerRegistry.Requirements
> =>
  Effect.gen(function*() {
    const loaded = options.loaded ?? (yield* loadConfig(settings))
    yield* maskLogs(loaded)
    yield* forgetGonePins(settings, loaded)
    const only = options.only
    if (only !== undefined) {
      yield* requireServer(loaded, only)
      if (options.asIs !== true && loaded.servers.some((spec) => spec.name === only && spec.disabled === true)) {
        return yield* CliError.failure(`server '${only}' is disabled; switch it on with 'mcp-fleet enable ${only}'`)
      }
    }
    const servers = only === undefined ? loaded.servers : loaded.servers.filter((spec) => spec.name === only)
    const registry = yield* makeRegistry(settings, loaded.sampling)
    const events = yield* registry.subscribe
    yield* registry.reconcile(servers)
    const wait = only === undefined
      ? registry.awaitReady({ servers: "settled", timeout: settings.timeout })
      : Effect.raceFirst(
        options.asCall === undefined
          ? registry.awaitReady({ servers: [only], timeout: settings.timeout })
          : settings.cluster !== undefined
          // On a cluster the server runs on its runner: a replica waits for it to be Ready there.
          ? registry.awaitReady({ servers: [only], timeout: options.asCall.readyTimeout ?? settings.timeout })
          : registry.withClient(only, () => Effect.void, { readyTimeout: options.asCall.readyTimeout }),
        failsEveryStart(events, only)
      )
    const shown = settings.json || !process.stderr.isTTY
      ? wait
      : Effect.raceFirst(wait, progressLine(registry, new Set(servers.map((spec) => spec.name))))
    // When all start, a timeout leaves some connecting; the command shows them as they are.
    yield* only === undefined || options.asIs === true ? Effect.ignore(shown) : shown
    // Disabled servers are no part of "settled"; each is shown once it is Disabled (a wait
    // for it to be ready ends, failing, as soon as it is).
    const disabled = servers.filter((spec) => spec.disabled === true).map((spec) => spec.name)
    yield* Effect.forEach(
      disabled,
      (name) => Effect.ignore(registry.awaitReady({ servers: [name], timeout: settings.timeout })),
      { concurrency: "unbounded", discard: true }
    )
    return { registry, loaded }
  })

// How long a one-shot command's servers have to end once it is done: the stdin close first,
// SIGTERM from 40% of it, SIGKILL from 80% (see Stdio.beginShutdown).
const ONE_SHOT_BUDGET = "500 millis"

/**
 * Runs a one-shot command (`servers`, `call`, …) in a Scope of its own: its error printed the
 * moment it happens (Render.reportNow), and its servers stopped within a short budget once it
 * is done. The process is ending, so a server that ignores its stdin closing, or SIGTERM, is
 * not given the grace a long-running fleet gives it: the answer is out, the exit follows.
 *
 * @since 0.3.0
 */
export const oneShot = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Render.Reported, Exclude<R, Scope.Scope>> =>
  effect.pipe(Render.reportNow, Effect.ensuring(Stdio.beginShutdown(ONE_SHOT_BUDGET)), Effect.scoped)

/**
 * The configured server a qualified name (`mcp__<server>__<tool>`) names: its server part read as
 * everything else reads it (`Catalog.serverOf`), so `call` runs what `tools` lists.
 *
 * @since 0.3.0
 */
export const serverOfQualified = (name: string, specs: ReadonlyArray<ServerSpec.ServerSpec>): string | undefined => {
  const part = Catalog.serverOf(name)
  return part === undefined
    ? undefined
    : specs.find((spec) => Catalog.serverOf(Catalog.qualify(spec.name, "")) === part)?.name
}

/**
 * The argument naming one server of the config (`name` or `server` in the usage).
 *
 * @since 0.1.0
 */
export const serverArg = (name: "name" | "server") =>
  Args.text({ name }).pipe(Args.withDescription("A server's name, as in the config file"))

/**
 * The argument naming one resource (`uri` in the usage), as `mcp-fleet resources` lists it.
 *
 * @since 0.5.0
 */
export const uriArg = Args.text({ name: "uri" }).pipe(
  Args.withDescription("The resource's URI, as `mcp-fleet resources` lists it")
)

/**
 * Fails with a clear sentence, and the closest names, when the config has no such server.
 *
 * @since 0.1.0
 */
export const requireServer = (loaded: FleetConfig.Loaded, name: string): Effect.Effect<void, CliError.CliError> => {
  const known = loaded.servers.map((spec) => spec.name)
  if (known.includes(name)) return Effect.void
  const suggestions = Catalog.suggest(name, known)
  return Effect.fail(CliError.usage(
    `there is no server '${name}' in the config${
      suggestions.length > 0
        ? `; did you mean '${suggestions[0]}'?`
        : known.length > 0
        ? ` (servers: ${known.join(", ")})`
        : ""
    }`
  ))
}
