/**
 * Config files turned into ServerSpecs: the `mcpServers` format of Claude Code, Claude
 * Desktop and Cursor, and the `servers` format of VS Code, with `${VAR}` and
 * `${VAR:-default}` expansion, a user file and project files merged by server name, and a
 * stream of the merged config that follows edits for hot reload.
 *
 * A file's `policy` blocks are decoded with Policy's own schema. `layer` keeps a
 * ServerRegistry equal to the files; `layerWithPolicy` also provides the Policy of the
 * files and keeps it in step, so an edit of a rule or limit takes effect without
 * restarting a server (the policy is no part of a ServerSpec).
 *
 * The implementation sits in `internal/fleetConfig/`: the file schema, JSON with comments,
 * variables, one entry to a spec, and watching.
 *
 * Neutral: files are read and watched with @effect/platform's `FileSystem` and paths taken
 * apart with its `Path`, both from context (`NodeFleet.layer` gives Node's; without a `Path`
 * the package's POSIX one serves), and the defaults of `env`, the working directory and the
 * home directory come from the runtime's `process` where there is one (`internal/platform.ts`).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as EnvFile from "./internal/fleetConfig/envFile.js"
import * as File from "./internal/fleetConfig/file.js"
import * as Hosts from "./internal/fleetConfig/hosts.js"
import * as Variables from "./internal/fleetConfig/variables.js"
import * as Watch from "./internal/fleetConfig/watch.js"
import { currentPath, homeOf, type PathOps, posixPath, processCwd, processEnv } from "./internal/platform.js"
import * as Policy from "./Policy.js"
import * as ServerRegistry from "./ServerRegistry.js"
import type * as ServerSpec from "./ServerSpec.js"

// --- errors -------------------------------------------------------------------------

/**
 * A config file that cannot be used: it was named but does not exist (`missing`), it cannot
 * be read, is not JSON, or its known fields have the wrong shape. `reason` says which, with
 * one sentence per bad entry for a schema error.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  path: Schema.String,
  reason: Schema.String,
  /** The file was named (in `paths` or `MCP_FLEET_CONFIG`) but does not exist. */
  missing: Schema.optional(Schema.Boolean),
  cause: Schema.optional(Schema.Defect)
}) {
  /**
   * A sentence naming the file and what is wrong with it.
   */
  override get message(): string {
    return this.missing === true
      ? `config file ${this.path} does not exist`
      : `invalid config file ${this.path}: ${this.reason}`
  }
}

// --- variables ----------------------------------------------------------------------

/**
 * The variables `${VAR}` references are read from.
 *
 * @since 0.1.0
 * @category models
 */
export type Env = Readonly<Record<string, string | undefined>>

/**
 * The environment variable that supplies a VS Code `${input:id}`: `MCP_FLEET_INPUT_` and the
 * id in capitals, other characters as `_` (`${input:github-token}`: `MCP_FLEET_INPUT_GITHUB_TOKEN`).
 *
 * @since 0.1.0
 * @category variables
 */
export const inputVariable: (id: string) => string = Variables.inputVariable

/**
 * A VS Code `${input:id}` that no environment variable supplies, to ask the user for.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputRequest {
  readonly id: string
  /** The `description` of the file's `inputs` entry of that id, if any. */
  readonly description?: string | undefined
  /** Whether the answer is a secret, to be typed unseen (`password` in `inputs`). */
  readonly password: boolean
  /** The environment variable that would have supplied it. */
  readonly variable: string
}

// --- parse --------------------------------------------------------------------------

/**
 * What one config file holds: its servers, in the file's order, and its tool policy.
 *
 * @since 0.1.0
 * @category models
 */
export interface Parsed {
  readonly servers: ReadonlyArray<ServerSpec.ServerSpec>
  /**
   * The top-level `policy` block, with each server entry's `policy` block under `servers`
   * and a relative `audit` path resolved against the file's directory; `{}` when none.
   */
  readonly policy: Policy.Config
  /** What works but is likely a mistake: a server name that qualified names must change. */
  readonly warnings: ReadonlyArray<string>
  /** The top-level `sampling` block: the program that answers sampling (the CLI's). */
  readonly sampling?: SamplingCommand | undefined
}

/**
 * A program that answers `sampling/createMessage`: it reads the request's params as JSON on
 * stdin and writes a `CreateMessageResult` as JSON on stdout. It runs in the folder of the
 * config file that names it.
 *
 * @since 0.2.0
 * @category models
 */
export interface SamplingCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly timeout?: Duration.Duration | undefined
}

/**
 * Turns the text of one config file into its servers, in the file's order. `path` is used
 * in errors and to resolve relative `cwd`s; `${VAR}` references are read from `env`, and
 * `${input:id}` from `MCP_FLEET_INPUT_<ID>` (see `inputVariable`). Parsing reads no other
 * file and asks nothing: a server with an `envFile`, or an `${input:id}` that no variable
 * supplies, is marked with a problem; `load` reads the env files and can ask for inputs.
 *
 * A server whose entry cannot be used (both or neither of `command` and `url`, an unknown
 * `type`, an unset variable) is returned with `problem` set; only a file that is not JSON
 * or whose known fields have the wrong shape fails, with a ConfigError that lists every bad
 * entry (`mcpServers.memory.command: expected a string, got 5`). `env` defaults to the
 * runtime's, `paths` (how relative paths resolve against the file's) to POSIX: on Node, pass
 * `node:path` for Windows paths.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (
  text: string,
  path: string,
  env: Env = processEnv(),
  paths: PathOps = posixPath
): Either.Either<ReadonlyArray<ServerSpec.ServerSpec>, ConfigError> =>
  Either.map(parseFile(text, path, env, paths), (parsed) => parsed.servers)

/**
 * Like `parse`, with the file's tool policy too. A malformed `policy` block fails the
 * file like any other known field.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseFile = (
  text: string,
  path: string,
  env: Env = processEnv(),
  paths: PathOps = posixPath
): Either.Either<Parsed, ConfigError> => {
  const decoded = File.decode(text)
  if (Either.isLeft(decoded)) return Either.left(new ConfigError({ path, reason: decoded.left }))
  return Either.right(File.read(decoded.right, path, env, { inputs: new Map(), envFiles: new Map() }, paths).parsed)
}

/**
 * A config file as trust sees it (see ConfigTrust): its servers, resolved with the env files
 * their entries name, and the text of each of those files by absolute path (`undefined` for
 * one that cannot be read). Nothing is asked: an `${input:id}` comes from its variable only.
 *
 * @since 0.4.0
 * @category models
 */
export interface Resolved {
  readonly servers: ReadonlyArray<ServerSpec.ServerSpec>
  readonly envFiles: ReadonlyMap<string, string | undefined>
}

/**
 * Resolves one config file's text with its env files read (see `Resolved`). Fails with a
 * ConfigError when the text is not a config file.
 *
 * @since 0.4.0
 * @category parsing
 */
export const resolveFile = (
  text: string,
  path: string,
  env: Env = processEnv(),
  paths: PathOps = posixPath
): Effect.Effect<Resolved, ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = yield* Either.mapLeft(File.decode(text), (reason) => new ConfigError({ path, reason }))
    const texts = new Map<string, string | undefined>()
    const envFiles = new Map<string, EnvFile.Parsed>()
    for (;;) {
      const read = File.read(file, path, env, { inputs: new Map(), envFiles }, paths)
      const toRead = [...read.unread].filter((envFile) => !envFiles.has(envFile))
      if (toRead.length === 0) return { servers: read.parsed.servers, envFiles: texts }
      for (const envFile of toRead) {
        const content = yield* Effect.orElseSucceed(fs.readFileString(envFile), () => undefined)
        texts.set(envFile, content)
        envFiles.set(
          envFile,
          content === undefined ? { values: {}, problems: ["cannot be read"] } : EnvFile.parse(content)
        )
      }
    }
  })

// --- paths --------------------------------------------------------------------------

export type {
  /**
   * The path operations the pure functions take: a part of @effect/platform's `Path`, which
   * Node's `node:path` has too (pass it on Node for Windows paths); POSIX by default.
   *
   * @since 0.4.0
   * @category paths
   */
  PathOps
} from "./internal/platform.js"

/**
 * The files read when no paths are given, lowest precedence first: the user's
 * `~/.config/mcp-fleet/mcp.json`, then the project's `.mcp.json` and `mcp.json`. `path`:
 * the platform's path operations (@effect/platform's `Path`; its POSIX one by default, as
 * for `listedPaths` and `pathsFromEnv`, while `load` and `changes` use the one in context).
 *
 * @since 0.1.0
 * @category paths
 */
export const defaultPaths = (cwd: string, home: string, path: PathOps = posixPath): ReadonlyArray<string> => [
  path.join(home, ".config", "mcp-fleet", "mcp.json"),
  path.join(cwd, ".mcp.json"),
  path.join(cwd, "mcp.json")
]

/**
 * The files listed in `MCP_FLEET_CONFIG` (separated by `;` with Windows paths, else `:`,
 * relative ones resolved against `cwd`); none when it is unset or empty. The defaults of
 * `env` and `cwd` are the runtime's (`process`), where it has them.
 *
 * @since 0.1.0
 * @category paths
 */
export const listedPaths = (
  env: Env = processEnv(),
  cwd: string = processCwd(),
  path: PathOps = posixPath
): ReadonlyArray<string> =>
  (env.MCP_FLEET_CONFIG ?? "").split(path.sep === "\\" ? ";" : ":")
    .filter((entry) => entry.trim() !== "")
    .map((entry) => path.resolve(cwd, entry))

/**
 * The files to read: those listed in `MCP_FLEET_CONFIG`, or else the default paths.
 *
 * @since 0.1.0
 * @category paths
 */
export const pathsFromEnv = (
  env: Env = processEnv(),
  cwd: string = processCwd(),
  home: string = homeOf(env),
  path: PathOps = posixPath
): ReadonlyArray<string> => {
  const listed = listedPaths(env, cwd, path)
  return listed.length > 0 ? listed : defaultPaths(cwd, home, path)
}

// --- other hosts --------------------------------------------------------------------

/**
 * The hosts whose config files mcp-fleet knows: `claude-desktop`, `claude-code`, `vscode`,
 * `cursor`.
 *
 * @since 0.5.0
 * @category hosts
 */
export const hosts: typeof Hosts.hosts = Hosts.hosts

/**
 * One of `hosts`.
 *
 * @since 0.5.0
 * @category hosts
 */
export type Host = Hosts.Host

/**
 * Where a host's file is, and (Claude Code's local scope) the project whose servers in it
 * are meant.
 *
 * @since 0.5.0
 * @category hosts
 */
export type HostLocation = Hosts.Location

/**
 * What a host's file locations depend on: the OS, home, environment, working directory.
 *
 * @since 0.5.0
 * @category hosts
 */
export type Machine = Hosts.Machine

/**
 * The files a host reads its servers from on `machine`, lowest precedence first, as each
 * host documents them.
 *
 * @since 0.5.0
 * @category hosts
 */
export const hostLocations: (host: Host, machine: Machine) => ReadonlyArray<HostLocation> = Hosts.locations

/**
 * The server entries of a host's parsed file at `location`, by name.
 *
 * @since 0.5.0
 * @category hosts
 */
export const hostEntries: (
  json: unknown,
  location: HostLocation
) => ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>]> = Hosts.entriesOf

// --- load ---------------------------------------------------------------------------

/**
 * Which files to read and where variables come from.
 *
 * @since 0.1.0
 * @category models
 */
export interface LoadOptions {
  /**
   * The files, lowest precedence first; each must exist. Default: the files listed in
   * `MCP_FLEET_CONFIG` (which must exist too), else the default places (which need not).
   */
  readonly paths?: ReadonlyArray<string> | undefined
  /** The variables for `${VAR}`. Default: the runtime's (`process.env`), or none. */
  readonly env?: Env | undefined
  /**
   * A check each file's text must pass before it is used, such as a ConfigTrust verdict:
   * its failure fails the load, or, when watching, skips the edit as an invalid one.
   */
  readonly admit?: ((path: string, text: string) => Effect.Effect<void, ConfigError>) | undefined
  /**
   * Asks for an `${input:id}` that no `MCP_FLEET_INPUT_<ID>` supplies (the CLI asks on the
   * terminal); `undefined` leaves it unanswered. Each id is asked once per load, or once
   * for as long as the files are followed. Default: nobody is asked, and a server that
   * needs the input is marked with a problem.
   */
  readonly askInput?: ((request: InputRequest) => Effect.Effect<string | undefined>) | undefined
}

/**
 * One file that was looked for.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source {
  readonly path: string
  /** False when a default place holds no file; it is then skipped. */
  readonly found: boolean
  /** How many servers the file defines, overridden ones included. */
  readonly servers: number
}

/**
 * The merged config of all files.
 *
 * @since 0.1.0
 * @category models
 */
export interface Loaded {
  readonly servers: ReadonlyArray<ServerSpec.ServerSpec>
  readonly sources: ReadonlyArray<Source>
  /** The file each server's definition came from. */
  readonly origin: Readonly<Record<string, string>>
  /** The tool policy of all files, merged with `Policy.merge` in file order. */
  readonly policy: Policy.Config
  /** The files' warnings (see `Parsed`), each naming its file; also logged. */
  readonly warnings: ReadonlyArray<string>
  /** The `sampling` block of the last file that has one. */
  readonly sampling?: SamplingCommand | undefined
}

// The files to read, and whether each must exist: named ones must, default places need not.
interface Files {
  readonly paths: ReadonlyArray<string>
  readonly required: boolean
}

const filesOf = (options: LoadOptions, env: Env, path: PathOps): Files => {
  if (options.paths !== undefined) return { paths: options.paths, required: true }
  const listed = listedPaths(env, processCwd(), path)
  return listed.length > 0
    ? { paths: listed, required: true }
    : { paths: defaultPaths(processCwd(), homeOf(env), path), required: false }
}

const readFile = (fs: FileSystem.FileSystem, path: string, required: boolean) =>
  fs.readFileString(path).pipe(
    Effect.map((text): string | undefined => text),
    Effect.catchAll((error) =>
      error._tag === "SystemError" && error.reason === "NotFound"
        ? required
          ? Effect.fail(new ConfigError({ path, reason: "does not exist", missing: true, cause: error }))
          : Effect.succeed(undefined)
        : Effect.fail(new ConfigError({ path, reason: `cannot be read: ${error.message}`, cause: error }))
    )
  )

// Answers to `${input:id}`, kept for one load or for as long as the files are followed.
interface Inputs {
  readonly answers: Map<string, string>
  readonly asked: Set<string>
  readonly ask: LoadOptions["askInput"]
}

const inputsOf = (options: LoadOptions): Inputs => ({ answers: new Map(), asked: new Set(), ask: options.askInput })

const readEnvFile = (fs: FileSystem.FileSystem, path: string) =>
  fs.readFileString(path).pipe(
    Effect.map(EnvFile.parse),
    Effect.catchAll((error) =>
      Effect.succeed<EnvFile.Parsed>({
        values: {},
        problems: [
          error._tag === "SystemError" && error.reason === "NotFound"
            ? "does not exist"
            : `cannot be read: ${error.message}`
        ]
      })
    )
  )

// Reads one file, asking for its inputs and reading its env files until nothing more can
// be supplied.
const loadFile = (
  { env, fs, inputs, path: paths }: Pick<Reader, "env" | "fs" | "inputs" | "path">,
  text: string,
  path: string
) =>
  Effect.gen(function*() {
    const file = yield* Either.mapLeft(File.decode(text), (reason) => new ConfigError({ path, reason }))
    const envFiles = new Map<string, EnvFile.Parsed>()
    for (;;) {
      const read = File.read(file, path, env, { inputs: inputs.answers, envFiles }, paths)
      const ask = inputs.ask
      const toAsk = ask === undefined ? [] : [...read.unanswered].filter((id) => !inputs.asked.has(id))
      const toRead = [...read.unread].filter((envFile) => !envFiles.has(envFile))
      if (toAsk.length === 0 && toRead.length === 0) return read.parsed
      for (const id of toAsk) {
        inputs.asked.add(id)
        const answer = yield* ask!(File.inputRequest(file, id))
        if (answer !== undefined) inputs.answers.set(id, answer)
      }
      for (const envFile of toRead) envFiles.set(envFile, yield* readEnvFile(fs, envFile))
    }
  })

// One load, or one watch, of the files: where they are, the variables, the check each text
// must pass, and the answers to inputs, shared by every read so that nobody is asked twice.
interface Reader {
  readonly fs: FileSystem.FileSystem
  readonly path: PathOps
  readonly files: Files
  readonly env: Env
  readonly inputs: Inputs
  readonly admit: LoadOptions["admit"]
}

const readerOf = (options: LoadOptions): Effect.Effect<Reader, never, FileSystem.FileSystem> =>
  Effect.zipWith(FileSystem.FileSystem, currentPath, (fs, path) => {
    const env = options.env ?? processEnv()
    return { fs, path, files: filesOf(options, env, path), env, inputs: inputsOf(options), admit: options.admit }
  })

const loadWith = (reader: Reader) =>
  Effect.gen(function*() {
    const { admit, files, fs } = reader
    const merged = new Map<string, { readonly spec: ServerSpec.ServerSpec; readonly path: string }>()
    const sources: Array<Source> = []
    let policy: Policy.Config = {}
    let sampling: SamplingCommand | undefined
    const warnings: Array<string> = []
    for (const path of files.paths) {
      const text = yield* readFile(fs, path, files.required)
      if (text === undefined) {
        sources.push({ path, found: false, servers: 0 })
        continue
      }
      if (admit !== undefined) yield* admit(path, text)
      const parsed = yield* loadFile(reader, text, path)
      sources.push({ path, found: true, servers: parsed.servers.length })
      // A later file replaces a server of the same name; Map keeps its first position.
      for (const spec of parsed.servers) merged.set(spec.name, { spec, path })
      policy = Policy.merge(policy, parsed.policy)
      sampling = parsed.sampling ?? sampling
      for (const warning of parsed.warnings) warnings.push(warning)
    }
    const entries = [...merged.values()]
    const loaded: Loaded = {
      servers: entries.map((entry) => entry.spec),
      sources,
      origin: Object.fromEntries(entries.map((entry) => [entry.spec.name, entry.path])),
      policy,
      warnings,
      ...(sampling === undefined ? {} : { sampling })
    }
    return loaded
  })

/**
 * Reads the files in order and merges their servers by name: a later file wins, so pass
 * the user's file first and the project's last. A named file that does not exist fails the
 * load (`missing`), as does a file that cannot be read or used; of the default places, those
 * that hold no file are skipped and reported in `sources`. Warnings are returned, not logged.
 *
 * @since 0.1.0
 * @category loading
 */
export const load = (options: LoadOptions = {}): Effect.Effect<Loaded, ConfigError, FileSystem.FileSystem> =>
  Effect.flatMap(readerOf(options), loadWith)

// --- watching -----------------------------------------------------------------------

/**
 * How `changes` reads and watches the files.
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchOptions extends LoadOptions {
  /** How long the files must stay quiet after a change before they are read. Default: 100 ms. */
  readonly debounce?: Duration.DurationInput | undefined
  /**
   * Runs with each warning about the files as they change, besides logging it: an invalid
   * edit, a deleted file. For a program that shows them itself at any log level.
   */
  readonly onWarning?: ((message: string) => Effect.Effect<void>) | undefined
}

/**
 * The merged config now and after every change: the first element is the current config,
 * and a new one follows whenever an edit of any of the files changes some server's spec,
 * the set of servers, or the policy. Each file's directory is watched, and reads wait until the files
 * have been quiet for `debounce`.
 *
 * A file that turns invalid, or a named file that is deleted, is a warning (logged, and
 * passed to `onWarning`) and nothing is emitted, so the fleet keeps its last good config;
 * the next valid edit is emitted. A file of the default places that is deleted is a
 * warning too, and its servers go. If the files are invalid at the start, the first element
 * comes once they are valid; run `load` first to fail fast instead.
 *
 * @since 0.1.0
 * @category loading
 */
export const changes = (options: WatchOptions = {}): Stream.Stream<Loaded, never, FileSystem.FileSystem> =>
  Stream.unwrap(Effect.map(readerOf(options), (reader) => watchWith(reader, options, undefined)))

// A warning about the files: logged, and passed to `onWarning`.
const warn = (options: WatchOptions, message: string) =>
  Effect.zipRight(Effect.logWarning(message), options.onWarning?.(message) ?? Effect.void)

// What changed between two good reads that a person should hear of: files that came or
// went, and warnings that are new.
const news = (options: WatchOptions, previous: Loaded | undefined, loaded: Loaded) =>
  Effect.zipRight(
    Effect.forEach(loaded.sources, (source, i) => {
      const before = previous?.sources[i]
      if (before === undefined || before.found === source.found) return Effect.void
      return source.found
        ? Effect.logInfo(`config file ${source.path} appeared`)
        : warn(options, `config file ${source.path} was deleted; its servers are stopped`)
    }, { discard: true }),
    Effect.forEach(
      loaded.warnings.filter((warning) => !previous?.warnings.includes(warning)),
      (warning) => warn(options, warning),
      { discard: true }
    )
  )

// The files' changes after `initial` (the config already in force, if any): a new config
// for each edit that changes it, a warning for each that cannot be used.
const watchWith = (reader: Reader, options: WatchOptions, initial: Loaded | undefined) => {
  const reread = (previous: Loaded | undefined) =>
    loadWith(reader).pipe(
      Effect.tap((loaded) => news(options, previous, loaded)),
      Effect.map((
        loaded
      ): readonly [Loaded | undefined, ReadonlyArray<Loaded>] => [
        loaded,
        previous === undefined || Watch.fingerprint(previous) !== Watch.fingerprint(loaded) ? [loaded] : []
      ]),
      Effect.catchAll((error) =>
        warn(
          options,
          previous === undefined
            ? `${error.message}; waiting for a valid config`
            : error.missing === true
            ? `config file ${error.path} was deleted; keeping the last good config until it is back`
            : `${error.message}; keeping the last good config`
        ).pipe(Effect.as([previous, []] as const))
      )
    )
  const edits = Watch.edits(reader.fs, reader.path, reader.files.paths, options.debounce ?? Duration.millis(100))
  // A first read now when no config is in force; else the watch's own read once it has begun
  // (see Watch.watchDirectory) catches an edit made since `initial`, and one more read while a
  // fleet is starting would only compete with it.
  return Stream.concat(initial === undefined ? Stream.succeed(undefined) : Stream.empty, edits).pipe(
    Stream.mapAccumEffect(initial, (previous) => reread(previous)),
    Stream.flattenIterables
  )
}

// --- keeping a registry and a policy in step ------------------------------------------

/**
 * One config put in force: the files as loaded, and what the registry did with them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Applied {
  readonly loaded: Loaded
  readonly result: ServerRegistry.ReconcileResult
}

/**
 * How `sync` and the layers keep a registry (and a policy) equal to the files.
 *
 * @since 0.1.0
 * @category models
 */
export interface SyncOptions extends WatchOptions {
  /** Follow edits of the files (hot reload). Default: true. */
  readonly watch?: boolean | undefined
  /** Runs after each config is put in force, the first included: to show it, say. */
  readonly onApplied?: ((applied: Applied) => Effect.Effect<void>) | undefined
}

// Puts one config in force: the servers first, then the policy, so a tool that a new
// server brings is judged by the new rules from its first listing on.
const apply = (
  registry: ServerRegistry.ServerRegistry,
  policy: Policy.Policy | undefined,
  loaded: Loaded,
  options: SyncOptions
) =>
  Effect.gen(function*() {
    const result = yield* registry.reconcile(loaded.servers)
    if (policy !== undefined) yield* policy.update(loaded.policy)
    if (result.added.length + result.removed.length + result.restarted.length > 0) {
      yield* Effect.logInfo(
        `config applied: added [${result.added.join(", ")}], removed [${result.removed.join(", ")}], restarted [${
          result.restarted.join(", ")
        }], unchanged ${result.unchanged.length}`
      )
    }
    if (options.onApplied !== undefined) yield* options.onApplied({ loaded, result })
  })

// Applies `loaded` now and, with `watch`, every later edit until the Scope closes.
// Loads the files and applies them now and, with `watch`, every later edit until the Scope closes.
const follow = (registry: ServerRegistry.ServerRegistry, makePolicy: boolean, options: SyncOptions) =>
  Effect.gen(function*() {
    const reader = yield* readerOf(options)
    const loaded = yield* loadWith(reader)
    const policy = makePolicy ? yield* Policy.make(loaded.policy) : undefined
    yield* news(options, undefined, loaded)
    yield* apply(registry, policy, loaded, options)
    if (options.watch !== false) {
      // The watch begins with a fresh read, which is news only if it differs from `loaded`.
      yield* watchWith(reader, options, loaded).pipe(
        Stream.runForEach((next) => apply(registry, policy, next, options)),
        Effect.forkScoped
      )
    }
    return { loaded, policy }
  })

/**
 * Loads the files into the registry in context, failing with a ConfigError if they are
 * invalid now; with `watch` (the default) every later edit is applied until the Scope
 * closes, touching only the servers whose spec changed. An invalid edit is reported and the
 * fleet kept as is. The files' `policy` blocks are not applied: see `syncWithPolicy`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sync = (
  options: SyncOptions = {}
): Effect.Effect<Loaded, ConfigError, FileSystem.FileSystem | ServerRegistry.ServerRegistry | Scope.Scope> =>
  Effect.map(
    Effect.flatMap(ServerRegistry.ServerRegistry, (registry) => follow(registry, false, options)),
    (followed) => followed.loaded
  )

/**
 * A fleet and its policy that follow the files.
 *
 * @since 0.1.0
 * @category models
 */
export interface Synced {
  /** The config as first loaded. */
  readonly loaded: Loaded
  /** The policy of the files, updated on every edit of a `policy` block. */
  readonly policy: Policy.Policy
}

/**
 * Like `sync`, and makes the Policy of the files' `policy` blocks (with the Approval and
 * AuditSink in context, if any), which every later edit updates too: an edit of a
 * `policy` block changes what the policy allows without restarting a server.
 *
 * @since 0.1.0
 * @category constructors
 */
export const syncWithPolicy = (
  options: SyncOptions = {}
): Effect.Effect<Synced, ConfigError, FileSystem.FileSystem | ServerRegistry.ServerRegistry | Scope.Scope> =>
  Effect.flatMap(
    ServerRegistry.ServerRegistry,
    (registry) => Effect.map(follow(registry, true, options), ({ loaded, policy }) => ({ loaded, policy: policy! }))
  )

/**
 * A layer that loads the files (from `paths`, else `MCP_FLEET_CONFIG`, else the default
 * places) into the ServerRegistry and, unless `watch: false`, follows their edits. Their
 * `policy` blocks are not applied: use `layerWithPolicy` for that.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: SyncOptions = {}
): Layer.Layer<never, ConfigError, FileSystem.FileSystem | ServerRegistry.ServerRegistry> =>
  Layer.scopedDiscard(sync(options))

/**
 * A layer that does what `layer` does and provides the Policy of the files, kept in step
 * with their edits as the registry is. Provide an Approval or an AuditSink to it as needed.
 *
 * @example
 * ```ts
 * const Fleet = FleetConfig.layerWithPolicy({ paths: ["mcp.json"] }).pipe(
 *   Layer.provideMerge(ServerRegistry.layer()),
 *   Layer.provide(NodeContext.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithPolicy = (
  options: SyncOptions = {}
): Layer.Layer<Policy.Policy, ConfigError, FileSystem.FileSystem | ServerRegistry.ServerRegistry> =>
  Layer.scoped(Policy.Policy, Effect.map(syncWithPolicy(options), (synced) => synced.policy))
