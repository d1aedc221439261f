/**
 * Trust in config files: a config file starts programs, so one that came with a cloned
 * repository must not run before its user has read and approved it (as Claude Code asks
 * before it uses a project's `.mcp.json`). A file is trusted by its path and the SHA-256 of
 * everything that decides what it runs: its text and the text of each env file its entries
 * name (see `subject`). An edit of either made elsewhere (a `git pull`) needs approval again.
 *
 * Records are kept in `trusted.json` in a directory, by default the user config dir
 * (`$XDG_CONFIG_HOME/mcp-fleet`, else `~/.config/mcp-fleet`). Which files need trust is the
 * caller's choice: the CLI asks for the files it finds in the working directory, and trusts
 * the user's own config (in the user config dir) and the files named by `--config` or
 * `MCP_FLEET_CONFIG` as they are.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomHex, sha256Hex } from "./internal/crypto.js"
import { currentPath, homeOf, type PathOps, posixPath, processEnv } from "./internal/platform.js"

/**
 * The user config dir of mcp-fleet: `$XDG_CONFIG_HOME/mcp-fleet` when that is set to an
 * absolute path, else `~/.config/mcp-fleet`. `env` and `home` default to the runtime's
 * (`process.env`, `HOME`), `path` to @effect/platform's POSIX path operations.
 *
 * @since 0.1.0
 * @category paths
 */
export const userConfigDir = (
  env: Readonly<Record<string, string | undefined>> = processEnv(),
  home: string = homeOf(env),
  path: PathOps = posixPath
): string => {
  const xdg = env.XDG_CONFIG_HOME
  return xdg !== undefined && path.isAbsolute(xdg)
    ? path.join(xdg, "mcp-fleet")
    : path.join(home, ".config", "mcp-fleet")
}

/**
 * `sha256:` and the hex SHA-256 of a file's text.
 *
 * @since 0.1.0
 * @category utils
 */
export const digest = (text: string): string => `sha256:${sha256Hex(text)}`

/**
 * What trust digests for a config file: its text alone when it names no env file, else its
 * text and each env file's path and text (`null` for one that cannot be read), in path order,
 * so that a `NODE_OPTIONS` added to a `.env` is a change like an edit of the file itself.
 *
 * @since 0.4.0
 * @category utils
 */
export const subject = (text: string, envFiles: ReadonlyMap<string, string | undefined> = new Map()): string =>
  envFiles.size === 0 ? text : JSON.stringify({
    config: text,
    envFiles: [...envFiles].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([path, content]) => [
      path,
      content ?? null
    ])
  })

/**
 * One trusted file: its absolute path, the digest of the content trusted, and when.
 *
 * @since 0.1.0
 * @category models
 */
export const Entry = Schema.Struct({
  path: Schema.String,
  digest: Schema.String,
  trustedAt: Schema.String
}).annotations({ identifier: "Entry" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Entry extends Schema.Schema.Type<typeof Entry> {}

/**
 * Whether a file's text is trusted: `Trusted`; `Untrusted` (never trusted); or `Changed`
 * (trusted once, with other content).
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict = Data.TaggedEnum<{
  Trusted: {}
  Untrusted: {}
  Changed: { readonly trustedAt: string }
}>

/**
 * Constructors and matchers of Verdict.
 *
 * @since 0.1.0
 * @category models
 */
export const Verdict = Data.taggedEnum<Verdict>()

/**
 * The trust records cannot be read or written; `reason` says why.
 *
 * @since 0.1.0
 * @category errors
 */
export class TrustError extends Schema.TaggedError<TrustError>()("TrustError", {
  path: Schema.String,
  reason: Schema.String
}) {
  /**
   * A sentence naming the records file and what is wrong.
   */
  override get message(): string {
    return `the trust records ${this.path} ${this.reason}`
  }
}

/**
 * The trust records.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConfigTrust {
  /**
   * The verdict on `text` as the content of `path` (for a file that names env files, its
   * `subject`). Unreadable records trust nothing.
   */
  readonly check: (path: string, text: string) => Effect.Effect<Verdict>
  /** Trusts `text` as the content of `path`, replacing what was trusted before. */
  readonly trust: (path: string, text: string) => Effect.Effect<Entry, TrustError>
  /** Forgets `path`; false when it was not trusted. */
  readonly revoke: (path: string) => Effect.Effect<boolean, TrustError>
  /** Every trusted file, by path. */
  readonly list: Effect.Effect<ReadonlyArray<Entry>, TrustError>
}

/**
 * The ConfigTrust service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export const ConfigTrust = Context.GenericTag<ConfigTrust>("mcp-fleet/ConfigTrust")

const Records = Schema.parseJson(Schema.Struct({
  files: Schema.Record({ key: Schema.String, value: Entry.omit("path") })
}))
const decodeRecords = Schema.decodeUnknownEither(Records)

/**
 * Where the records are kept.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The directory of `trusted.json`. Default: `userConfigDir()`. */
  readonly directory?: string | undefined
}

/**
 * Trust records in `trusted.json` of `options.directory`, written whole by a rename.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<ConfigTrust, never, FileSystem.FileSystem> =>
  Effect.zipWith(FileSystem.FileSystem, currentPath, (fs, paths) => {
    const directory = options.directory ?? userConfigDir(processEnv(), undefined, paths)
    const file = paths.join(directory, "trusted.json")

    const read: Effect.Effect<Map<string, Omit<Entry, "path">>, TrustError> = fs.readFileString(file).pipe(
      Effect.catchAll((error) =>
        error._tag === "SystemError" && error.reason === "NotFound"
          ? Effect.succeed(`{"files": {}}`)
          : Effect.fail(new TrustError({ path: file, reason: `cannot be read: ${error.message}` }))
      ),
      Effect.flatMap((text) =>
        Either.match(decodeRecords(text), {
          onLeft: () => Effect.fail(new TrustError({ path: file, reason: "are damaged; fix or delete the file" })),
          onRight: (records) => Effect.succeed(new Map(Object.entries(records.files)))
        })
      )
    )

    const write = (records: ReadonlyMap<string, Omit<Entry, "path">>) => {
      const temporary = `${file}.${randomHex(4)}.tmp`
      const text = `${JSON.stringify({ files: Object.fromEntries(records) }, null, 2)}\n`
      return fs.makeDirectory(directory, { recursive: true }).pipe(
        Effect.zipRight(fs.writeFileString(temporary, text)),
        Effect.zipRight(fs.rename(temporary, file)),
        Effect.mapError((error) => new TrustError({ path: file, reason: `cannot be written: ${error.message}` }))
      )
    }

    return ConfigTrust.of({
      check: (path, text) =>
        read.pipe(
          Effect.map((records) => {
            const record = records.get(paths.resolve(path))
            return record === undefined
              ? Verdict.Untrusted()
              : record.digest === digest(text)
              ? Verdict.Trusted()
              : Verdict.Changed({ trustedAt: record.trustedAt })
          }),
          Effect.catchAll((error) => Effect.as(Effect.logWarning(error.message), Verdict.Untrusted()))
        ),
      trust: (path, text) =>
        Effect.gen(function*() {
          const records = yield* read
          const now = yield* Clock.currentTimeMillis
          const entry = { path: paths.resolve(path), digest: digest(text), trustedAt: new Date(now).toISOString() }
          records.set(entry.path, { digest: entry.digest, trustedAt: entry.trustedAt })
          yield* write(records)
          return entry
        }),
      revoke: (path) =>
        Effect.gen(function*() {
          const records = yield* read
          if (!records.delete(paths.resolve(path))) return false
          yield* write(records)
          return true
        }),
      list: Effect.map(read, (records) => [...records].map(([path, record]) => ({ path, ...record })))
    })
  })

/**
 * A layer with the trust records of `options.directory`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<ConfigTrust, never, FileSystem.FileSystem> =>
  Layer.effect(ConfigTrust, make(options))
