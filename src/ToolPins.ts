/**
 * Tool pinning: the fleet remembers each tool's whole definition (name, title,
 * description, inputSchema, outputSchema, annotations; the raw text the server sent, before
 * any sanitising) as a digest, and notices when a server later offers a different one. A
 * server that rewrites a tool's description after the user accepted it ("rug pull", tool
 * poisoning) is then caught: the tool is reported (`ToolDrifted`) and, in `quarantine` mode,
 * held out of the catalog until someone approves the new definition
 * (`ServerRegistry.approveTool`, `mcp-fleet approve`).
 *
 * The first sight of a server pins all its tools. After that, a tool the server did not
 * list before is a drift too (with no `before`): a tool dropped and offered again under a
 * new name is not trusted on sight.
 *
 * Pins are kept per server identity ({@link identity}), not per name: the config file and
 * entry the server was read from and what it runs (command, arguments and working
 * directory, or URL). Two projects that both name a server `docs` keep apart pins, and
 * editing what an entry runs starts its pins afresh. `PinStore.retain` forgets the pins of
 * entries that are gone.
 *
 * Pins live in a {@link PinStore}: in memory by default (`layerMemory`, what a registry
 * uses when none is provided), or one JSON file per server identity in a directory
 * (`layerFile`, what the CLI uses, under the user config dir; a file of the older
 * one-per-name layout is taken over by the first identity of that name that loads it). A
 * store's `changes` tell a running fleet that someone else (another process) approved a tool.
 *
 * Every list a server sends passes through its pins before the catalog sees it, so a
 * quarantined tool is in no catalog, and a call to it (registry, Policy, gateway) fails with
 * `heldBack`.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Catalog from "./Catalog.js"
import { canonicalDigest } from "./internal/canonicalJson.js"
import * as PinDiff from "./internal/toolPins/diff.js"
import * as FileStore from "./internal/toolPins/fileStore.js"
import * as PinIdentity from "./internal/toolPins/identity.js"
import * as PinSchema from "./internal/toolPins/schema.js"
import * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"

// --- definitions and digests --------------------------------------------------------

/**
 * What happens when a tool's definition differs from its pin: `off` checks nothing;
 * `warn` publishes `ToolDrifted` and logs a warning, and the tool stays in the catalog
 * with its new definition; `quarantine` does the same and holds the tool out of the
 * catalog (calls to it are refused) until the new definition is approved. New tools are
 * pinned on first sight in `warn` and `quarantine` alike.
 *
 * @since 0.1.0
 * @category models
 */
export const Mode = PinSchema.Mode

/**
 * @since 0.1.0
 * @category models
 */
export type Mode = typeof Mode.Type

/**
 * The parts of a tool's definition a pin covers: what a model reads, what a call sends
 * and what it gets back.
 *
 * @since 0.1.0
 * @category models
 */
export const Definition = PinSchema.Definition

/**
 * @since 0.1.0
 * @category models
 */
export interface Definition extends Schema.Schema.Type<typeof Definition> {}

/**
 * A tool's definition with its digest, and when it was pinned (for the `after` of a drift:
 * when that definition was seen).
 *
 * @since 0.1.0
 * @category models
 */
export const Pin = PinSchema.Pin

/**
 * @since 0.1.0
 * @category models
 */
export interface Pin extends Schema.Schema.Type<typeof Pin> {}

/**
 * The pinned parts of a tool, nothing else (other fields, `_meta` included, may change
 * freely).
 *
 * @since 0.1.0
 * @category utils
 */
export const definitionOf = (tool: McpSchema.Tool): Definition => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: tool.inputSchema,
  outputSchema: tool.outputSchema,
  annotations: tool.annotations
})

/**
 * `sha256:` and the hex SHA-256 of the canonical JSON (keys sorted) of a tool's pinned
 * parts: the same for the same definition whatever its key order.
 *
 * @since 0.1.0
 * @category utils
 */
export const digest = (tool: McpSchema.Tool | Definition): string => canonicalDigest(definitionOf(tool))

/**
 * A pin of `tool` made at `at` (epoch milliseconds).
 *
 * @since 0.1.0
 * @category constructors
 */
export const pin = (tool: McpSchema.Tool, at: number): Pin => ({
  digest: digest(tool),
  at: new Date(at).toISOString(),
  definition: definitionOf(tool)
})

/**
 * Which pinned parts differ between two definitions, for people: `description`,
 * `inputSchema`, `annotations`... With no `before` (a new tool), every part `after` has.
 *
 * @since 0.1.0
 * @category utils
 */
export const differences = (
  before: Definition | undefined,
  after: Definition
): ReadonlyArray<keyof Definition> =>
  (["name", "title", "description", "inputSchema", "outputSchema", "annotations"] as const).filter((field) =>
    before === undefined
      ? after[field] !== undefined
      : canonicalDigest(before[field] ?? null) !== canonicalDigest(after[field] ?? null)
  )

/**
 * What a drift is, for people: "it is new since the server's tools were approved", or
 * "its definition changed since it was pinned (description, inputSchema)".
 *
 * @since 0.3.0
 * @category utils
 */
export const describeDrift = (drift: Pick<Drift, "before" | "after">): string =>
  drift.before === undefined
    ? "it is new since the server's tools were pinned"
    : `its definition changed since it was pinned (${
      differences(drift.before.definition, drift.after.definition).join(", ")
    })`

/**
 * A drift for a person to review: each field that differs, as `field:` and a line diff
 * under it (`- ` before, `+ ` after; every field added for a new tool). Hidden characters
 * and control sequences are shown as code points, so the lines are safe to print.
 *
 * @since 0.3.0
 * @category utils
 */
export const diff = (drift: Pick<Drift, "before" | "after">): ReadonlyArray<string> =>
  PinDiff.definitionDiff(drift.before?.definition, drift.after.definition)

// --- identities -----------------------------------------------------------------

/**
 * Whose pins: a server as its config file and entry and what it runs. `key` is what the
 * pins are kept under (the name and a digest of the rest, so it holds no secret).
 *
 * @since 0.3.0
 * @category models
 */
export interface Identity extends PinIdentity.Identity {}

/**
 * What an identity is made of: a `ServerSpec`'s name, origin and transport (every
 * ServerSpec is one).
 *
 * @since 0.3.0
 * @category models
 */
export interface IdentitySource extends PinIdentity.Source {}

// What runs: environment and headers are left out (a rotated token is the same server).
const runs = (transport: IdentitySource["transport"]): unknown => {
  switch (transport.type) {
    case "stdio":
      return { command: transport.command, args: transport.args ?? [], cwd: transport.cwd }
    case "custom":
      return { key: transport.key }
    default:
      return { url: transport.url }
  }
}

/**
 * The identity of a server's pins: its name, its config file (`spec.origin`) and what it
 * runs (command, arguments and cwd; URL; a custom transport's key).
 *
 * @since 0.3.0
 * @category constructors
 */
export const identity = (spec: IdentitySource): Identity => ({
  key: `${spec.name}@${
    canonicalDigest({ server: spec.name, origin: spec.origin, runs: runs(spec.transport) }).slice(7, 23)
  }`,
  server: spec.name,
  origin: spec.origin
})

// --- drifts ----------------------------------------------------------------------

/**
 * A tool whose definition differs from its pin, or a tool new on a server whose tools were
 * pinned before (no `before`), until it is approved or goes back to its pin.
 *
 * @since 0.1.0
 * @category models
 */
export interface Drift {
  readonly server: string
  /** The tool's own name on its server. */
  readonly tool: string
  /** The qualified name it has (or would have) in the catalog. */
  readonly name: string
  /** The pinned definition; undefined for a tool the server did not list when pinned. */
  readonly before: Pin | undefined
  /** The definition the server offers now. */
  readonly after: Pin
  /** Held out of the catalog (`quarantine`), or only reported (`warn`). */
  readonly quarantined: boolean
}

/**
 * The error of a call to `name` when a drift holds it back (quarantine): a Denied reason
 * (rule `tool pinning`) naming the tool, what changed, and how to approve it. Undefined
 * when no drift holds it.
 *
 * @since 0.1.0
 * @category errors
 */
export const heldBack = (drifts: ReadonlyArray<Drift>, name: string): McpError.McpError | undefined => {
  const drift = drifts.find((candidate) => candidate.quarantined && candidate.name === name)
  if (drift === undefined) return undefined
  return McpError.denied(
    drift.server,
    {
      tool: drift.name,
      rule: "tool pinning",
      message: `${
        describeDrift(drift)
      }; it is held until the definition is approved: run 'mcp-fleet approve ${drift.name}'`
    }
  )
}

/**
 * The error of a call to a tool the catalog does not have: held back by a drift, else not
 * found, with suggestions from `known` (a fleet-wide failure: it names no server).
 *
 * @since 0.1.0
 * @category errors
 */
export const missingTool = (
  drifts: ReadonlyArray<Drift>,
  name: string,
  known: Iterable<string>
): McpError.McpError =>
  heldBack(drifts, name) ??
    McpError.notFound(
      undefined,
      { what: "tool", name, suggestions: Catalog.suggest(name, known) }
    )

// --- stores -------------------------------------------------------------------------

/**
 * Where pins are kept, per server identity: a map from each tool's name to its pin. Reads
 * and writes never fail; a store that cannot read or write logs a warning naming the server
 * and why.
 *
 * @since 0.1.0
 * @category models
 */
export interface PinStore {
  /** The pins of one server's tools, by tool name; empty for a server never seen. */
  readonly load: (identity: Identity) => Effect.Effect<ReadonlyMap<string, Pin>>
  /** Replaces the pins of one server. */
  readonly save: (identity: Identity, pins: ReadonlyMap<string, Pin>) => Effect.Effect<void>
  /**
   * Forgets the pins of servers that are gone, given the config files just read whole
   * (`origins`) and the servers they gave (`keep`): pins of an entry of one of `origins`
   * that is no longer there, or whose command or URL changed (its identity is not in `keep`;
   * an entry overridden by another file's of the same name stays), and pins whose config
   * file is deleted.
   */
  readonly retain: (origins: ReadonlyArray<string>, keep: ReadonlyArray<Identity>) => Effect.Effect<void>
  /**
   * The keys of identities whose pins may have changed, written by this store or by
   * another writer of the same place (an `approve` in another process), so a running
   * fleet follows.
   */
  readonly changes: Stream.Stream<string>
}

/**
 * The PinStore service tag. A registry without one in context keeps pins in memory.
 *
 * @since 0.1.0
 * @category tags
 */
export const PinStore = Context.GenericTag<PinStore>("mcp-fleet/ToolPins/PinStore")

/**
 * Whether the pins of `identity` are of a server gone from `origins`, the config files just
 * read whole that gave the servers `keep` (see `PinStore.retain`).
 *
 * @since 0.3.0
 * @category utils
 */
export const isGone: (
  identity: Identity,
  origins: ReadonlyArray<string>,
  keep: ReadonlyArray<Identity>
) => boolean = PinIdentity.isGone

/**
 * A store in memory: pins last as long as it does.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<PinStore> = Effect.map(PubSub.unbounded<string>(), (saved) => {
  const servers = new Map<string, { readonly identity: Identity; readonly pins: ReadonlyMap<string, Pin> }>()
  return PinStore.of({
    load: (identity) => Effect.sync(() => servers.get(identity.key)?.pins ?? new Map()),
    save: (identity, pins) =>
      Effect.zipRight(
        Effect.sync(() => servers.set(identity.key, { identity, pins: new Map(pins) })),
        PubSub.publish(saved, identity.key)
      ),
    retain: (origins, keep) =>
      Effect.sync(() => {
        for (const [key, { identity }] of servers) {
          if (isGone(identity, origins, keep)) servers.delete(key)
        }
      }),
    changes: Stream.fromPubSub(saved)
  })
})

/**
 * A layer with a store in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<PinStore> = Layer.effect(PinStore, makeMemory)

/**
 * A store of one JSON file per server identity in `directory` (made when first written), each
 * written whole by a rename so a reader never sees half a file. `changes` watches the
 * directory. A file that cannot be read or decoded counts as no pins, with a warning.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFile = (
  directory: string
): Effect.Effect<PinStore, never, FileSystem.FileSystem | Path.Path | Scope.Scope> =>
  Effect.map(FileStore.make(directory), PinStore.of)

/**
 * A layer with a store of one JSON file per server identity in `directory`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFile = (directory: string): Layer.Layer<PinStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.scoped(PinStore, makeFile(directory))
