/**
 * Tool pinning: the fleet remembers each tool's definition (its name, description,
 * inputSchema and annotations) as a digest the first time it sees it, and notices when a
 * server later offers a different one. A server that rewrites a tool's description after
 * the user accepted it ("rug pull", tool poisoning) is then caught: the tool is reported
 * (`ToolDrifted`) and, in `quarantine` mode, held out of the catalog until someone approves
 * the new definition (`ServerRegistry.approveTool`, `mcp-fleet approve`).
 *
 * Pins live in a {@link PinStore}: in memory by default (`layerMemory`, what a registry
 * uses when none is provided), or one JSON file per server in a directory (`layerFile`,
 * what the CLI uses, under the user config dir). A store's `changes` tell a running fleet
 * that someone else (another process) approved a tool.
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
import * as FileStore from "./internal/toolPins/fileStore.js"
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
 * The parts of a tool's definition a pin covers: what a model reads and what a call sends.
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
  description: tool.description,
  inputSchema: tool.inputSchema,
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
 * `inputSchema`, `annotations`.
 *
 * @since 0.1.0
 * @category utils
 */
export const differences = (before: Definition, after: Definition): ReadonlyArray<keyof Definition> =>
  (["name", "description", "inputSchema", "annotations"] as const).filter((field) =>
    canonicalDigest(before[field] ?? null) !== canonicalDigest(after[field] ?? null)
  )

// --- drifts ----------------------------------------------------------------------

/**
 * A tool whose definition differs from its pin, until it is approved or goes back to it.
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
  /** The pinned definition. */
  readonly before: Pin
  /** The definition the server offers now. */
  readonly after: Pin
  /** Held out of the catalog (`quarantine`), or only reported (`warn`). */
  readonly quarantined: boolean
}

/**
 * The error of a call to `name` when a drift holds it back (quarantine): a Denied reason
 * naming the tool, what changed, and how to approve it. Undefined when no drift holds it.
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
      rule: `pinning "quarantine"`,
      message: `its definition changed since it was pinned (${
        differences(drift.before.definition, drift.after.definition).join(", ")
      }), so it is quarantined until the new definition is approved: run 'mcp-fleet approve ${drift.name}'`
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
 * Where pins are kept, per server: a map from each tool's name to its pin. Reads and writes
 * never fail; a store that cannot read or write logs a warning naming the server and why.
 *
 * @since 0.1.0
 * @category models
 */
export interface PinStore {
  /** The pins of one server's tools, by tool name; empty for a server never seen. */
  readonly load: (server: string) => Effect.Effect<ReadonlyMap<string, Pin>>
  /** Replaces the pins of one server. */
  readonly save: (server: string, pins: ReadonlyMap<string, Pin>) => Effect.Effect<void>
  /**
   * The names of servers whose pins may have changed, written by this store or by another
   * writer of the same place (an `approve` in another process), so a running fleet follows.
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
 * A store in memory: pins last as long as it does.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<PinStore> = Effect.map(PubSub.unbounded<string>(), (saved) => {
  const servers = new Map<string, ReadonlyMap<string, Pin>>()
  return PinStore.of({
    load: (server) => Effect.sync(() => servers.get(server) ?? new Map()),
    save: (server, pins) =>
      Effect.zipRight(Effect.sync(() => servers.set(server, new Map(pins))), PubSub.publish(saved, server)),
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
 * A store of one JSON file per server in `directory` (made when first written), each
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
 * A layer with a store of one JSON file per server in `directory`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFile = (directory: string): Layer.Layer<PinStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.scoped(PinStore, makeFile(directory))
