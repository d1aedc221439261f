/**
 * The supervised fiber of one configured server (internal to the registry). It connects,
 * lists what the server offers, keeps the lists fresh on list_changed, pings it if asked,
 * and when anything fails closes the connection's scope (process tree and pending calls
 * with it) and starts again under the restart policy. Calls go through it, so a call made
 * during a restart waits for the server instead of failing.
 *
 * This module holds the actor's state and status; the parts live beside it: `session`
 * (one connection), `supervisor` (the restart loop), `callGate` (calls waiting for
 * readiness), `listing` (lists and their changes) and `pinning` (tools against their pins:
 * the catalog gets what the server lists minus the tools quarantined).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as MetricLabel from "effect/MetricLabel"
import * as Queue from "effect/Queue"
import type * as Redacted from "effect/Redacted"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import type * as CatalogCache from "../../CatalogCache.js"
import type * as McpClient from "../../McpClient.js"
import type * as McpError from "../../McpError.js"
import type * as OAuth from "../../OAuth.js"
import { RegistryEvent } from "../../RegistryEvent.js"
import type { ClientOptions, Requirements, ServerStatus as Status } from "../../ServerRegistry.js"
import * as ServerSpec from "../../ServerSpec.js"
import { isRestart, ServerState } from "../../ServerState.js"
import * as Telemetry from "../../Telemetry.js"
import * as ToolPins from "../../ToolPins.js"
import type { Transport } from "../../Transport.js"
import * as Secrets from "../secrets.js"
import { AuthState } from "./auth.js"
import * as CallGate from "./callGate.js"
import * as FleetCatalog from "./fleetCatalog.js"
import * as Lazy from "./lazy.js"
import { changes } from "./listing.js"
import * as Pinning from "./pinning.js"
import type * as Session from "./session.js"
import { supervise, type Switch } from "./supervisor.js"
import * as Tasks from "./tasks.js"

/**
 * What an actor needs besides its spec.
 */
export interface Options {
  readonly spec: ServerSpec.ServerSpec
  /** The fleet-wide restart policy; the spec's own fields override it. */
  readonly restart: ServerSpec.RestartPolicy
  /** How long to wait after list_changed for more before re-listing. */
  readonly refreshDebounce: Duration.DurationInput
  /** How mcp-fleet presents itself to servers. */
  readonly client: ClientOptions
  /** The lists of the actor this one replaces, so only real differences are published. */
  readonly initialLists?: Catalog.ServerLists | undefined
  /** Publishes an event; must never block. */
  readonly publish: (event: RegistryEvent) => Effect.Effect<void>
  /** Called with the server's lists whenever they change. */
  readonly listsChanged: (server: string, lists: Catalog.ServerLists) => Effect.Effect<void>
  /** Where its tools' pins are kept, and the mode unless the spec sets its own. */
  readonly pins: Pinning.Pins
  /** What is done with hidden text in its lists, unless the spec says. */
  readonly sanitize: Catalog.SanitizeMode
  /** Where its lists are saved, and restored from while it is lazy. */
  readonly cache: CatalogCache.CatalogCache
  /** When and how a lazy server fills the cache. */
  readonly fills: Lazy.FillSlots
  /**
   * The lists of the parked record this actor takes over (`parked.ts`) and their restore from
   * the cache (run once, whoever asks first): its pins' drifts and shown lists go on as they are.
   */
  readonly parked?: { readonly lists: Lists; readonly restore: Effect.Effect<boolean> } | undefined
}

/**
 * One supervised server.
 */
export interface ServerActor {
  readonly name: string
  readonly spec: ServerSpec.ServerSpec
  /** Whose pins and catalog cache entry it has (`ToolPins.identity(spec)`, taken once). */
  readonly identity: ToolPins.Identity
  /** The hash of the spec it runs. */
  readonly hash: string
  readonly status: () => Status
  /** Its state as `status` gives it, without making the rest of the status. */
  readonly now: () => ServerState
  /** The lists in the catalog: what the server lists, minus its quarantined tools. */
  readonly lists: () => Catalog.ServerLists
  /** Its tools whose definition differs from their pin. */
  readonly drifts: () => ReadonlyArray<ToolPins.Drift>
  /** Pins a drifted tool's new definition and puts the tool back; false when it has no drift. */
  readonly approve: (tool: string) => Effect.Effect<boolean>
  /** Reviews its tools against the store again (another writer changed its pins). */
  readonly recheck: Effect.Effect<void>
  /** Its tool calls that run as tasks. */
  readonly tasks: Tasks.TaskTable
  /** The ready connection, if there is one. */
  readonly client: () => McpClient.McpClient | undefined
  /** What the server said, its secrets masked: for what reaches a caller directly (a call's logs). */
  readonly masked: (value: unknown) => unknown
  /**
   * A call's result with the server's OAuth tokens masked: the result is the user's (its
   * configured secrets stay), but a token the fleet holds for it never was.
   */
  readonly tokensMasked: <A>(result: A) => A
  /** Whether `value` carries one of its secrets (configured or OAuth), in any form masking finds. */
  readonly carriesSecret: (value: unknown) => boolean
  /** Runs `f` with a ready connection, waiting for one (within the call's ready wait) if the server is starting. */
  readonly withClient: CallGate.CallGate["withClient"]
  /** Closes the connection and connects again now, forgetting past failures. */
  readonly restart: Effect.Effect<void>
  /** Runs its OAuth authorization with the Authorizer of the context, then connects again. */
  readonly authorize: Effect.Effect<void, McpError.McpError, OAuth.Authorizer | OAuth.TokenStore>
  /** In NeedsAuth, connects again when the token store holds a new grant for it. */
  readonly pickUpGrant: Effect.Effect<void>
  readonly enable: Effect.Effect<void>
  readonly disable: Effect.Effect<void>
  /** Empties the lists, publishing the removals (for a server leaving the fleet). */
  readonly clear: Effect.Effect<void>
  /** The supervision loop; it runs until interrupted, and then the server is Stopped. */
  readonly run: Effect.Effect<never, never, Requirements>
  /**
   * How its loop starts: `fork` (which forks `run`) at once, or for a lazy server, parked:
   * `fork` is kept for its first control (a call's wake, a restart, enable, disable) and the
   * returned effect restores its cached lists (forking at once when nothing is cached: it
   * fills the cache). What it returns shows a restored server Idle with them, no fiber
   * running: run it once the catalog holds them. Call it right after `make`.
   */
  readonly park: (fork: Effect.Effect<void>) => Effect.Effect<Effect.Effect<void>>
  /** A parked server leaving the fleet: Stopped, its loop never started. Nothing otherwise. */
  readonly stopParked: Effect.Effect<void>
}

// Server-originated text in an event: a failed refresh's error, a log message's data.
const maskEvent = (masker: Secrets.Masker, event: RegistryEvent): RegistryEvent => {
  switch (event._tag) {
    case "RefreshFailed":
      return RegistryEvent.RefreshFailed({ ...event, error: Secrets.maskError(masker, event.error) })
    case "LogMessage":
      return masker.isEmpty
        ? event
        : RegistryEvent.LogMessage({ ...event, data: Secrets.maskValue(masker, event.data) })
    default:
      return event
  }
}

// What the server says reaches no one with its configured secrets in it: its errors,
// events and connection diagnostics (which may quote a line it wrote) pass through these,
// and its fibers log through the masker.
const masking = (spec: ServerSpec.ServerSpec, publish: Options["publish"]) => {
  // OAuth tokens join the configured secrets as the server's authorization learns them.
  const masker = Secrets.growing(ServerSpec.secrets(spec))
  const tokens = Secrets.growing([])
  return {
    masker,
    tokens,
    learn: (secrets: ReadonlyArray<Redacted.Redacted<string>>) => {
      masker.add(secrets)
      tokens.add(secrets)
    },
    mask: (error: McpError.McpError) => Secrets.maskError(masker, error),
    publish: (event: RegistryEvent) => publish(maskEvent(masker, event)),
    info: (transport: Transport | undefined) => Secrets.maskValue(masker, transport?.info()) as Status["connection"]
  }
}

const stateTags = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
/**
 * Counts a server in or out of the fleet's servers by state (`mcp_fleet.servers`); a Stopped
 * one has left the fleet.
 */
export const count = (state: ServerState, delta: number): void => {
  if (state._tag === "Stopped") return
  let tags = stateTags.get(state._tag)
  if (tags === undefined) {
    tags = [MetricLabel.make(Telemetry.Attributes.serverState, state._tag)]
    stateTags.set(state._tag, tags)
  }
  Telemetry.serversByState.unsafeModify(delta, tags)
}

// The server's state as status and calls see it, which runs ahead of the published state
// when a ready connection is seen closed, until the supervisor publishes what follows.
const makeStates = (
  name: string,
  state: SubscriptionRef.SubscriptionRef<ServerState>,
  publish: Options["publish"]
) => {
  let now: ServerState = ServerState.Pending()
  let published: ServerState = now
  let lastError: McpError.McpError | undefined
  const serverTags = [MetricLabel.make(Telemetry.ServerName, name)]
  count(published, 1)
  const mark = (next: ServerState) => {
    now = next
    if (next._tag === "Failed" || next._tag === "NeedsAuth") lastError = next.error
  }
  const setState = (next: ServerState) =>
    Effect.suspend(() => {
      const previous = published
      published = next
      count(previous, -1)
      count(next, 1)
      if (isRestart(previous, next)) Telemetry.restarts.unsafeUpdate(1, serverTags)
      mark(next)
      return Effect.zipRight(
        SubscriptionRef.set(state, next),
        publish(RegistryEvent.ServerStateChanged({ server: name, state: next, previous }))
      )
    })
  return { now: () => now, lastError: () => lastError, mark, setState }
}

/**
 * What the server lists (`offered`), and what of it the catalog shows (`shown`): its tools
 * reviewed against their pins, the quarantined ones left out; only differences published.
 */
export const makeLists = (
  options: Omit<Options, "parked" | "client" | "restart" | "refreshDebounce" | "fills"> & {
    readonly identity: ToolPins.Identity
  },
  publish: Options["publish"]
) =>
  Effect.gen(function*() {
    const { spec } = options
    const name = spec.name
    let offered = options.initialLists ?? Catalog.emptyLists
    let shown = offered
    // Replaces the lists shown and publishes what differs.
    const show = (next: Catalog.ServerLists) =>
      Effect.suspend(() => {
        const events = changes(name, shown, next)
        // Hidden text can come or go with the stripped text the same: the catalog says so too.
        const hiddenMoved = JSON.stringify(shown.hidden) !== JSON.stringify(next.hidden)
        shown = next
        if (events.length === 0 && !hiddenMoved) return Effect.void
        return Effect.zipRight(options.listsChanged(name, next), Effect.forEach(events, publish, { discard: true }))
      })
    const identity = options.identity
    const pinning = Pinning.make({
      identity,
      mode: spec.pinning ?? options.pins.mode,
      store: options.pins.store,
      naming: options.pins.naming,
      publish
    })
    // Pins hash the raw text; the catalog gets it sanitised.
    const sanitize = FleetCatalog.sanitizer(name, spec.sanitize ?? options.sanitize, publish)
    // One review at a time: a re-list and a change of the store may come together.
    const reviewing = yield* Effect.makeSemaphore(1)
    const held = [MetricLabel.make(Telemetry.ServerName, name)]
    const review = (next: Catalog.ServerLists) =>
      reviewing.withPermits(1)(Effect.suspend(() => {
        offered = next
        return Effect.flatMap(pinning.review(next.tools), (tools) => {
          Telemetry.heldTools.unsafeUpdate(next.tools.length - tools.length, held)
          return Effect.flatMap(sanitize(tools === next.tools ? next : { ...next, tools }), show)
        })
      }))
    const recheck = Effect.suspend(() => offered === Catalog.emptyLists ? Effect.void : review(offered))
    const cache = Lazy.link(spec, identity, options.cache)
    return {
      offered: () => offered,
      shown: () => shown,
      // What the server sent is saved for the next time it is lazy; empty lists are no news.
      setLists: (next: Catalog.ServerLists) => Effect.zipRight(review(next), cache.remember(next)),
      clearLists: review(Catalog.emptyLists),
      restore: Effect.flatMap(
        cache.restore,
        (cached) => cached === undefined ? Effect.succeed(false) : Effect.as(review(cached), true)
      ),
      recheck,
      drifts: pinning.drifts,
      approve: (tool: string) =>
        Effect.flatMap(
          pinning.approve(tool),
          (approved) => approved ? Effect.as(recheck, true) : Effect.succeed(false)
        ),
      clear: Effect.suspend(() => {
        Telemetry.heldTools.unsafeUpdate(0, held)
        offered = Catalog.emptyLists
        return show(Catalog.emptyLists)
      })
    }
  })

/**
 * One server's lists, pinning and cache link (`makeLists`).
 */
export type Lists = Effect.Effect.Success<ReturnType<typeof makeLists>>

/**
 * The status of the server at one moment.
 */
export const statusOf = (
  spec: ServerSpec.ServerSpec,
  parts: {
    readonly states: Pick<ReturnType<typeof makeStates>, "now" | "lastError">
    readonly shown: () => Catalog.ServerLists
    readonly gate: Pick<CallGate.CallGate, "client">
    readonly connection: () => Transport | undefined
    readonly info: (transport: Transport | undefined) => Status["connection"]
    readonly tasks: Pick<Tasks.TaskTable, "inFlight">
  }
) =>
(): Status => {
  const client = parts.gate.client()
  const connection = parts.connection()
  const shown = parts.shown()
  return {
    name: spec.name,
    state: parts.states.now(),
    // What the connection turned out to be: an http server may have fallen back to sse.
    transport: client !== undefined && connection?.kind === "sse" ? "sse" : spec.transport.type,
    required: spec.required === true,
    perPrincipal: spec.perPrincipal === true ? true : undefined,
    protocolVersion: client?.protocolVersion,
    serverInfo: client?.serverInfo,
    instructions: client?.instructions,
    counts: {
      tools: shown.tools.length,
      resources: shown.resources.length,
      templates: shown.templates.length,
      prompts: shown.prompts.length
    },
    lastError: parts.states.lastError(),
    connection: client === undefined ? undefined : parts.info(connection),
    tasks: parts.tasks.inFlight()
  }
}

/**
 * Makes an actor; nothing runs until `run` is forked.
 */
export const make = (options: Options): Effect.Effect<ServerActor> =>
  Effect.gen(function*() {
    const { spec } = options
    const name = spec.name
    const state = yield* SubscriptionRef.make<ServerState>(ServerState.Pending())
    const control = yield* Queue.unbounded<Session.Control>()
    const toggle: Switch = { disabled: spec.disabled === true }
    const { info, learn, mask, masker, publish, tokens } = masking(spec, options.publish)
    const states = makeStates(name, state, publish)
    const identity = ToolPins.identity(spec)
    const lists = options.parked?.lists ?? (yield* makeLists({ ...options, identity }, publish))
    let connection: Transport | undefined
    // A parked actor's fork, run by its first control.
    let parked: Effect.Effect<void> | undefined
    const unpark = Effect.suspend(() => {
      const fork = parked
      parked = undefined
      return fork ?? Effect.void
    })
    const send = (c: Session.Control) => Effect.zipRight(Queue.offer(control, c), unpark)
    // Once, whether the parked restore or the loop asks first.
    const restore = options.parked?.restore ?? (yield* Effect.cached(lists.restore))
    const gate = CallGate.make({
      server: name,
      state,
      now: states.now,
      lastError: states.lastError,
      wake: send("wake"),
      mask
    })
    const tasks = Tasks.make(name, masker, publish)
    const auth = new AuthState(spec, learn)
    const core: Session.Core = {
      spec,
      client: options.client,
      refreshDebounce: options.refreshDebounce,
      gate,
      lists: lists.offered,
      setLists: lists.setLists,
      clearLists: lists.clearLists,
      lazy: spec.lazy === true
        ? { restore, fills: options.fills, idle: () => states.now()._tag === "Idle" }
        : undefined,
      setState: states.setState,
      mark: states.mark,
      setConnection: (transport) => connection = transport,
      publish,
      mask,
      masker,
      control,
      auth,
      fallback: { version: undefined }
    }

    return {
      name,
      spec,
      identity,
      hash: ServerSpec.hash(spec),
      status: statusOf(spec, { states, shown: lists.shown, gate, connection: () => connection, info, tasks }),
      now: states.now,
      lists: lists.shown,
      drifts: lists.drifts,
      approve: lists.approve,
      recheck: lists.recheck,
      tasks,
      client: gate.client,
      masked: (value) => masker.isEmpty ? value : Secrets.maskValue(masker, value),
      carriesSecret: (value) => Secrets.carries(masker, value),
      tokensMasked: (result) => tokens.isEmpty ? result : Secrets.maskValue(tokens, result) as typeof result,
      withClient: gate.withClient,
      restart: send("restart"),
      authorize: Effect.zipRight(auth.authorize, send("restart")),
      pickUpGrant: Effect.suspend(() =>
        states.now()._tag !== "NeedsAuth" ? Effect.void : Effect.flatMap(auth.granted, (granted) =>
          granted
            ? Effect.zipRight(Effect.sync(() => auth.ready()), send("restart"))
            : Effect.void)
      ),
      enable: Effect.zipRight(Effect.sync(() => toggle.disabled = false), send("enable")),
      disable: Effect.zipRight(Effect.sync(() => toggle.disabled = true), send("disable")),
      clear: lists.clear,
      run: Secrets.maskLogs(masker)(supervise(core, { ...options.restart, ...spec.restart }, toggle)),
      park: (fork) => {
        if (spec.lazy !== true || toggle.disabled || spec.problem !== undefined) return Effect.as(fork, Effect.void)
        parked = fork
        const showIdle = Effect.flatMap(Clock.currentTimeMillis, (since) => {
          if (parked === undefined) return Effect.void
          // Marked at once: a loop started from here on finds it Idle already.
          const idle = ServerState.Idle({ since, lazy: true })
          states.mark(idle)
          return states.setState(idle)
        })
        return Effect.flatMap(restore, (cached) => cached ? Effect.succeed(showIdle) : Effect.as(unpark, Effect.void))
      },
      stopParked: Effect.suspend(() => {
        if (parked === undefined) return Effect.void
        parked = undefined
        return states.setState(ServerState.Stopped())
      })
    } satisfies ServerActor
  })
