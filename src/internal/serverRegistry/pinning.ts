/**
 * One server's tools held against their pins (see ToolPins): the first sight of a server
 * pins all its tools; after that, a tool whose definition differs from its pin, or a tool it
 * did not list before, is a drift — reported once per new definition, and held out of the
 * catalog in `quarantine` mode — until it is approved or goes back to its pinned definition. The pins are read from the store on every review,
 * so an approval written by another process counts at the next one. `makeFleet` is the
 * registry's side: the store, its changes, and every server's drifts.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Catalog from "../../Catalog.js"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import { RegistryEvent } from "../../RegistryEvent.js"
import type * as ServerSpec from "../../ServerSpec.js"
import * as ToolPins from "../../ToolPins.js"
import { canonicalDigest } from "../canonicalJson.js"

/**
 * What the pinning of one server needs.
 */
export interface Options {
  readonly identity: ToolPins.Identity
  readonly mode: ToolPins.Mode
  readonly store: ToolPins.PinStore
  readonly naming: Catalog.Naming
  /** Publishes an event; must never block. */
  readonly publish: (event: RegistryEvent) => Effect.Effect<void>
}

/**
 * The pinning of one server's tools.
 */
export interface Pinning {
  /**
   * Reviews the tools the server lists against their pins: pins new ones, reports new
   * drifts, and returns the tools the catalog may show.
   */
  readonly review: (tools: ReadonlyArray<McpSchema.Tool>) => Effect.Effect<ReadonlyArray<McpSchema.Tool>>
  /** The drifts of the last review. */
  readonly drifts: () => ReadonlyArray<ToolPins.Drift>
  /** Pins the drifted tool's new definition; false when the tool has no drift. */
  readonly approve: (tool: string) => Effect.Effect<boolean>
}

const announce = (drift: ToolPins.Drift) => {
  const then = drift.quarantined
    ? `it is held out of the catalog until approved ('mcp-fleet approve ${drift.name}')`
    : `it stays in the catalog with its new definition (pinning "warn")`
  return Effect.logWarning(
    `server '${drift.server}': tool '${drift.tool}': ${ToolPins.describeDrift(drift)}; ${then}`
  )
}

// The digest of a pin made before pins covered title and outputSchema (`older`): such a pin
// still matches, and is made anew with the whole definition.
const olderDigest = (tool: McpSchema.Tool) =>
  canonicalDigest({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: tool.annotations
  })

/**
 * Makes the pinning of one server; nothing is read until the first review.
 */
export const make = (options: Options): Pinning => {
  const { identity, mode, store } = options
  const server = identity.server
  let drifts = new Map<string, ToolPins.Drift>()

  const review: Pinning["review"] = (tools) =>
    mode === "off" ? Effect.succeed(tools) : Effect.gen(function*() {
      const pins = yield* store.load(identity)
      const now = yield* Clock.currentTimeMillis
      // The first sight of a server pins all of it; later, a tool it did not list is held.
      const firstSight = pins.size === 0
      const fresh = new Map<string, ToolPins.Pin>()
      const next = new Map<string, ToolPins.Drift>()
      const shown: Array<McpSchema.Tool> = []
      for (const tool of tools) {
        const pinned = pins.get(tool.name)
        const digest = ToolPins.digest(tool)
        if (pinned === undefined ? firstSight : pinned.older === true && pinned.digest === olderDigest(tool)) {
          fresh.set(tool.name, ToolPins.pin(tool, now))
        } else if (pinned === undefined || pinned.digest !== digest) {
          const known = drifts.get(tool.name)
          // The same drift as before keeps its identity, so it is reported once.
          const drift = known !== undefined && known.before?.digest === pinned?.digest && known.after.digest === digest
            ? known
            : {
              server,
              tool: tool.name,
              name: Catalog.qualify(server, tool.name, options.naming),
              before: pinned,
              after: ToolPins.pin(tool, now),
              quarantined: mode === "quarantine"
            }
          next.set(tool.name, drift)
          if (drift.quarantined) continue
        }
        shown.push(tool)
      }
      const reported = [...next.values()].filter((drift) => drifts.get(drift.tool) !== drift)
      drifts = next
      if (fresh.size > 0) yield* store.save(identity, new Map([...pins, ...fresh]))
      yield* Effect.forEach(reported, (drift) =>
        Effect.zipRight(
          announce(drift),
          options.publish(RegistryEvent.ToolDrifted({
            server,
            tool: drift.tool,
            before: drift.before,
            after: drift.after,
            quarantined: drift.quarantined
          }))
        ), { discard: true })
      return shown.length === tools.length ? tools : shown
    })

  const approve: Pinning["approve"] = (tool) =>
    Effect.gen(function*() {
      const drift = drifts.get(tool)
      if (drift === undefined) return false
      const pins = yield* store.load(identity)
      const now = yield* Clock.currentTimeMillis
      yield* store.save(identity, new Map([...pins, [tool, { ...drift.after, at: new Date(now).toISOString() }]]))
      return true
    })

  return { review, drifts: () => [...drifts.values()], approve }
}

/**
 * What every actor's pinning shares: the store, the fleet's mode (a spec may set its own)
 * and the naming of qualified names.
 */
export interface Pins {
  readonly store: ToolPins.PinStore
  readonly mode: ToolPins.Mode
  readonly naming: Catalog.Naming
}

/**
 * What the registry needs of each actor's pinning.
 */
export interface Pinned {
  readonly name: string
  readonly spec: ServerSpec.ServerSpec
  /** `ToolPins.identity(spec)`, taken once. */
  readonly identity: ToolPins.Identity
  readonly drifts: () => ReadonlyArray<ToolPins.Drift>
  readonly approve: (tool: string) => Effect.Effect<boolean>
  readonly recheck: Effect.Effect<void>
}

/**
 * The registry's side of pinning: the store (the one in context, else one in memory),
 * followed so that pins written elsewhere (an approval in another process) are reviewed at
 * once; every actor's drifts; and approval.
 */
export const makeFleet = (
  actors: ReadonlyMap<string, Pinned>,
  mode: ToolPins.Mode,
  naming: Catalog.Naming
): Effect.Effect<
  {
    readonly pins: Pins
    readonly drifted: Effect.Effect<ReadonlyArray<ToolPins.Drift>>
    readonly approve: (actor: Pinned, tool: string) => Effect.Effect<void, McpError.McpError>
  },
  never,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const store = yield* Effect.serviceOption(ToolPins.PinStore).pipe(
      Effect.flatMap(Option.match({ onNone: () => ToolPins.makeMemory, onSome: Effect.succeed }))
    )
    yield* store.changes.pipe(
      Stream.runForEach((key) =>
        Effect.forEach(
          [...actors.values()].filter((actor) => actor.identity.key === key),
          (actor) => actor.recheck,
          { discard: true }
        )
      ),
      Effect.forkScoped
    )
    // A tool with no drift to approve fails with the server's drifted tools closest to its name.
    const approve = (actor: Pinned, tool: string) =>
      actor.approve(tool).pipe(
        Effect.filterOrFail((approved) => approved, () =>
          McpError.notFound(actor.name, {
            what: "drifted tool",
            name: tool,
            suggestions: Catalog.suggest(tool, actor.drifts().map((drift) => drift.tool))
          })),
        Effect.asVoid
      )
    return {
      pins: { store, mode, naming },
      drifted: Effect.sync(() => [...actors.values()].flatMap((actor) => actor.drifts())),
      approve
    }
  })
