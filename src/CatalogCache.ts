/**
 * The catalog cache: what each server offered (tools, resources, templates, prompts) the last
 * time it ran, so a lazy server (`ServerSpec.lazy`) is listed, searched and shown to a model
 * without being started. Entries are kept per server identity (`ToolPins.identity`: config
 * file, entry and what it runs) with a {@link digest} of everything that decides what the
 * server offers (transport, command, arguments, environment, URL, headers): an entry whose
 * digest differs from the current spec's is dropped, never shown.
 *
 * The cache holds the raw lists a server sent, before pins and sanitising: a cached tool
 * passes the same pin review as a live one (a drifted tool is quarantined as today), and the
 * same hidden-text step. The registry writes an entry whenever a server's lists change, and
 * only when they differ from the entry it holds.
 *
 * In memory by default (`layerMemory`); the CLI keeps one JSON file per identity in its config
 * dir (`layerFile`, `catalog-cache/`, beside the pins).
 *
 * @since 0.6.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Catalog from "./Catalog.js"
import { canonicalDigest } from "./internal/canonicalJson.js"
import * as FileStore from "./internal/catalogCache/fileStore.js"
import { sha256Hex } from "./internal/crypto.js"
import type * as ServerSpec from "./ServerSpec.js"
import * as ToolPins from "./ToolPins.js"

/**
 * One server's lists as it last offered them.
 *
 * @since 0.6.0
 * @category models
 */
export interface Entry {
  /** The {@link digest} of the spec the server ran with. */
  readonly digest: string
  /** When the lists were saved (Clock milliseconds). */
  readonly savedAt: number
  /** What the server listed, before pins and sanitising (no `hidden`). */
  readonly lists: Omit<Catalog.ServerLists, "hidden">
}

/**
 * Where entries are kept, per server identity. Reads and writes never fail: a store that
 * cannot read or write logs a warning naming the server and why, and counts as empty.
 *
 * @since 0.6.0
 * @category models
 */
export interface CatalogCache {
  /** The entry of one server, if it has one. */
  readonly load: (identity: ToolPins.Identity) => Effect.Effect<Entry | undefined>
  /** Replaces the entry of one server. */
  readonly save: (identity: ToolPins.Identity, entry: Entry) => Effect.Effect<void>
}

/**
 * The CatalogCache service tag. A registry without one in context keeps its entries in
 * memory, for its own life.
 *
 * @since 0.6.0
 * @category tags
 */
export const CatalogCache = Context.GenericTag<CatalogCache>("mcp-fleet/CatalogCache")

// A secret counts by a digest of its value: the digest changes with it, and never holds it.
const unredacted = (record: Readonly<Record<string, unknown>> | undefined) =>
  record === undefined ? undefined : Object.fromEntries(
    Object.entries(record).map((
      [name, value]
    ) => [name, Redacted.isRedacted(value) ? { secret: sha256Hex(String(Redacted.value(value))) } : value])
  )

/**
 * `sha256:` and a digest of what decides what a server offers: its transport type, command,
 * arguments, working directory, environment and `inheritEnv`; or URL and headers; or a custom
 * transport's key (secret values enter as digests of themselves).
 *
 * @since 0.6.0
 * @category utils
 */
export const digest = (spec: ServerSpec.ServerSpec): string => {
  const transport = spec.transport
  switch (transport.type) {
    case "stdio":
      return canonicalDigest({
        type: "stdio",
        command: transport.command,
        args: transport.args ?? [],
        cwd: transport.cwd,
        env: unredacted(transport.env),
        inheritEnv: transport.inheritEnv === true
      })
    case "custom":
      return canonicalDigest({ type: "custom", key: transport.key })
    default:
      return canonicalDigest({ type: transport.type, url: transport.url, headers: unredacted(transport.headers) })
  }
}

/**
 * The cached lists of `spec` when the cache holds an entry of its identity made with the same
 * {@link digest}; an entry of another digest is no entry.
 *
 * @since 0.6.0
 * @category utils
 */
export const lookup = (cache: CatalogCache, spec: ServerSpec.ServerSpec): Effect.Effect<Entry | undefined> =>
  Effect.map(
    cache.load(ToolPins.identity(spec)),
    (entry) => entry !== undefined && entry.digest === digest(spec) ? entry : undefined
  )

/**
 * A cache in memory: entries last as long as it does.
 *
 * @since 0.6.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<CatalogCache> = Effect.sync(() => {
  const entries = new Map<string, Entry>()
  return CatalogCache.of({
    load: (identity) => Effect.sync(() => entries.get(identity.key)),
    save: (identity, entry) => Effect.sync(() => void entries.set(identity.key, entry))
  })
})

/**
 * A layer with a cache in memory.
 *
 * @since 0.6.0
 * @category layers
 */
export const layerMemory: Layer.Layer<CatalogCache> = Layer.effect(CatalogCache, makeMemory)

/**
 * A cache of one JSON file per server identity in `directory` (made when first written), each
 * written whole by a rename so a reader never sees half a file. A file that cannot be read or
 * decoded counts as no entry, with a warning.
 *
 * @since 0.6.0
 * @category constructors
 */
export const makeFile = (
  directory: string
): Effect.Effect<CatalogCache, never, FileSystem.FileSystem | Path.Path> =>
  Effect.map(FileStore.make(directory), CatalogCache.of)

/**
 * A layer with a cache of one JSON file per server identity in `directory`.
 *
 * @since 0.6.0
 * @category layers
 */
export const layerFile = (directory: string): Layer.Layer<CatalogCache, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(CatalogCache, makeFile(directory))
