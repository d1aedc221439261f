/**
 * A lazy server before its first use, as a plain record (internal to the registry): its
 * lists (restored from the catalog cache, pins checked, sanitised: `ServerActor.makeLists`)
 * and its state, Pending until they are restored and Idle after, with no actor, fiber, queue
 * or ref, so a hundred lazy servers cost a hundred records at start. It stands in the
 * registry's map of actors as one: what needs no connection (status, lists, drifts, approval,
 * a review after the pins changed, masking) it answers itself; anything else (a call, read or
 * get, restart, enable, disable, authorize) first makes the actor (`wake`), which takes over
 * its lists as they are, and from then on everything goes to that actor.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { RegistryEvent } from "../../RegistryEvent.js"
import * as ServerSpec from "../../ServerSpec.js"
import { ServerState } from "../../ServerState.js"
import * as ToolPins from "../../ToolPins.js"
import * as Secrets from "../secrets.js"
import * as ServerActor from "./serverActor.js"
import * as Tasks from "./tasks.js"

/**
 * Whether `spec` starts parked: lazy, enabled and without a config problem.
 */
export const parks = (spec: ServerSpec.ServerSpec): boolean =>
  spec.lazy === true && spec.disabled !== true && spec.problem === undefined

/**
 * A parked server, and how it starts.
 */
export interface Parked {
  readonly actor: ServerActor.ServerActor
  /**
   * Restores its cached lists; what it returns shows it Idle with them (run it once the
   * catalog holds them). With nothing cached, it wakes instead (its actor fills the cache).
   */
  readonly restore: Effect.Effect<Effect.Effect<void>>
}

/**
 * Parks `options.spec`. `wake` makes the actor that takes over the lists (restored or not)
 * from `record` (this one, as listed in the registry), starts it as the registry starts any
 * actor and returns it; it is run once.
 */
export const make = (
  options: Omit<ServerActor.Options, "parked">,
  wake: (
    parked: NonNullable<ServerActor.Options["parked"]>,
    record: ServerActor.ServerActor
  ) => Effect.Effect<ServerActor.ServerActor>
): Effect.Effect<Parked> =>
  Effect.gen(function*() {
    const { publish, spec } = options
    const name = spec.name
    const identity = ToolPins.identity(spec)
    const lists = yield* ServerActor.makeLists({ ...options, identity }, publish)
    let state: ServerState = ServerState.Pending()
    ServerActor.count(state, 1)
    const setState = (next: ServerState) =>
      Effect.suspend(() => {
        const previous = state
        state = next
        ServerActor.count(previous, -1)
        ServerActor.count(next, 1)
        return publish(RegistryEvent.ServerStateChanged({ server: name, state: next, previous }))
      })
    // Once, whether the fleet's start or the actor of a first use asks first.
    const restoring = yield* Effect.cached(lists.restore)
    let awake: ServerActor.ServerActor | undefined
    const waking = Effect.unsafeMakeSemaphore(1)
    // The actor, made once; this record's state leaves the count as the actor's enters it.
    const actor = waking.withPermits(1)(Effect.suspend(() => {
      if (awake !== undefined) return Effect.succeed(awake)
      ServerActor.count(state, -1)
      return Effect.tap(wake({ lists, restore: restoring }, record), (made) => Effect.sync(() => awake = made))
    }))
    const woken = <A, E, R>(f: (actor: ServerActor.ServerActor) => Effect.Effect<A, E, R>) => Effect.flatMap(actor, f)
    let masker: Secrets.Masker | undefined
    const masking = () => masker ??= Secrets.make(ServerSpec.secrets(spec))
    let tasks: Tasks.TaskTable | undefined
    const idle: Pick<Tasks.TaskTable, "inFlight"> = { inFlight: () => [] }
    const status = ServerActor.statusOf(spec, {
      states: { now: () => state, lastError: () => undefined },
      shown: lists.shown,
      gate: { client: () => undefined },
      connection: () => undefined,
      info: () => undefined,
      tasks: idle
    })

    const record: ServerActor.ServerActor = {
      name,
      spec,
      identity,
      // Only a later reconcile asks for it (the first compares with no one).
      get hash() {
        return ServerSpec.hash(spec)
      },
      status: () => awake?.status() ?? status(),
      now: () => awake?.now() ?? state,
      lists: lists.shown,
      drifts: lists.drifts,
      approve: lists.approve,
      recheck: lists.recheck,
      get tasks() {
        return awake?.tasks ?? (tasks ??= Tasks.make(name, masking(), publish))
      },
      client: () => awake?.client(),
      masked: (value) => awake?.masked(value) ?? (masking().isEmpty ? value : Secrets.maskValue(masking(), value)),
      tokensMasked: (result) => awake === undefined ? result : awake.tokensMasked(result),
      carriesSecret: (value) => awake?.carriesSecret(value) ?? Secrets.carries(masking(), value),
      withClient: (f, deadline) => woken((made) => made.withClient(f, deadline)),
      restart: woken((made) => made.restart),
      authorize: woken((made) => made.authorize),
      pickUpGrant: Effect.suspend(() => awake?.pickUpGrant ?? Effect.void),
      enable: woken((made) => made.enable),
      disable: woken((made) => made.disable),
      clear: lists.clear,
      run: woken((made) => made.run),
      park: (fork) => woken((made) => made.park(fork)),
      stopParked: Effect.suspend(() =>
        awake?.stopParked ?? (state._tag === "Stopped" ? Effect.void : setState(ServerState.Stopped()))
      )
    }
    const restore = Effect.map(restoring, (cached) => {
      if (!cached) return Effect.asVoid(actor)
      return Effect.flatMap(Clock.currentTimeMillis, (since) =>
        awake !== undefined || state._tag !== "Pending"
          ? Effect.void
          : setState(ServerState.Idle({ since, lazy: true })))
    })
    return { actor: record, restore }
  })
