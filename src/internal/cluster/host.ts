/**
 * The runner side: the servers this runner hosts, each as a server entity whose actor runs in
 * a local `ServerRegistry` (today's actors, unchanged). An entity that wakes adds its server to
 * the local registry; one that stops (its shard moved, the runner stopping) removes it. What
 * the actor reports (status, lists) is written to `mcp_fleet_servers` and told to every
 * replica.
 *
 * A call is claimed in PostgreSQL before its tool runs. A second delivery of the same call
 * (the cluster sends a dead runner's calls again to the new one) finds the claim: it runs
 * again only when the tool says it may (`ServerRegistry.mayRetry`: `idempotentHint` or
 * `readOnlyHint`), else it fails `InDoubt` (the single-process rule's reason), naming the lost
 * runner.
 *
 * A keeper wakes the entities of the shards this runner holds, so every server runs without
 * waiting for a first call, and again right after a move.
 *
 * @since 0.3.0
 */
import * as Entity from "@effect/cluster/Entity"
import * as EntityId from "@effect/cluster/EntityId"
import * as Sharding from "@effect/cluster/Sharding"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Host from "../../Host.js"
import * as McpError from "../../McpError.js"
import * as ServerRegistry from "../../ServerRegistry.js"
import type * as ServerSpec from "../../ServerSpec.js"
import * as Calls from "./calls.js"
import { type Call, type Follow, ServerEntity } from "./entity.js"
import * as Store from "./store.js"
import * as Wire from "./wire.js"

/** How a runner makes per-principal instances (`instance.ts`). */
export interface Instances {
  /** The token store: each principal's credentials for a server. */
  readonly credentials: ServerRegistry.PrincipalCredentials
  /** A registry of one server, a principal's instance, for the Scope's lifetime. */
  readonly make: (spec: ServerSpec.ServerSpec) => Effect.Effect<ServerRegistry.ServerRegistry, never, Scope.Scope>
}

/** The servers this process knows the config of, and those it hosts now. */
export interface Hosting {
  readonly runner: string
  readonly local: ServerRegistry.ServerRegistry
  readonly specs: Map<string, ServerSpec.ServerSpec>
  readonly hosted: Set<string>
  /** The calls in flight here for callers anywhere: their events, their input requests. */
  readonly calls: Calls.Calls
  /** Makes the local registry run the hosted servers whose config this process has. */
  readonly sync: Effect.Effect<void>
  readonly instances: Instances
}

/**
 * Makes the hosting state: a local registry of `options`, and the per-principal instances
 * that `instances` makes, whose host services pass a server's requests to the caller of its
 * call (`Calls.hostServices`).
 */
export const makeHosting = <R>(
  runner: string,
  options: ServerRegistry.Options,
  instances: Effect.Effect<Instances, never, R>
): Effect.Effect<Hosting, never, Scope.Scope | ServerRegistry.Requirements | R> =>
  Effect.gen(function*() {
    const calls = Calls.make()
    const services = yield* Calls.hostServices(calls, yield* Host.services())
    const toCallers = <A, E, R2>(effect: Effect.Effect<A, E, R2>) =>
      effect.pipe(
        Effect.provideService(Host.Sampling, services.sampling),
        Effect.provideService(Host.Elicitation, services.elicitation),
        Effect.provideService(Host.Roots, services.roots)
      )
    const local = yield* toCallers(ServerRegistry.make(options))
    const made = yield* toCallers(instances)
    const lock = yield* Effect.makeSemaphore(1)
    const specs = new Map<string, ServerSpec.ServerSpec>()
    const hosted = new Set<string>()
    const sync = lock.withPermits(1)(
      Effect.suspend(() => local.reconcile([...specs.values()].filter((spec) => hosted.has(spec.name)))).pipe(
        Effect.asVoid
      )
    )
    return { runner, local, specs, hosted, calls, sync, instances: made }
  })

const sqlFailure = (server: string) => (error: unknown) =>
  McpError.unavailable(server, { state: "Ready", message: `the cluster's database failed: ${String(error)}` })

// The single-process rule's failure, for a call cut off on its runner: the runner died, or
// gave the server up (its shard moved, or its shard locks could not be refreshed).
const inDoubt = (server: string, tool: string, runner: string) =>
  McpError.inDoubt(server, { tool, message: `the call was cut off on runner ${runner}, lost or no longer hosting it` })

// A delivery that finds its call claimed already: retried when the tool allows it.
const secondDelivery = (
  hosting: Hosting,
  server: string,
  call: { readonly id: string; readonly tool: string },
  runner: string
) =>
  Effect.gen(function*() {
    const { id, tool } = call
    const catalog = yield* hosting.local.catalog.get
    const entry = catalog.tools.find((candidate) => candidate.server === server && candidate.tool.name === tool)
    if (!ServerRegistry.mayRetry(entry?.tool)) return yield* Effect.fail(inDoubt(server, tool, runner))
    yield* Effect.logInfo(`server '${server}': retrying call ${id} of '${tool}' after its runner stopped`)
    yield* Effect.mapError(Store.reclaim(id, hosting.runner), sqlFailure(server))
  })

type CallPayload = typeof Call.payloadSchema.Type
type FollowPayload = typeof Follow.payloadSchema.Type

const ms = (value: number | undefined) => value === undefined ? undefined : Duration.millis(value)

// A call's events: claimed first, then run with the callbacks that tell its caller.
// `hosting.local` runs the server: the runner's registry, or a principal's instance's.
const call = (hosting: Hosting, server: string, payload: CallPayload) =>
  Calls.stream(hosting.calls, server, payload.callId, payload.tells, (callbacks) =>
    Effect.gen(function*() {
      // Claimed once its server is Ready: a delivery interrupted while it waited (its entity
      // moved on) never reached the tool, so the next delivery runs it instead of failing InDoubt.
      yield* hosting.local.awaitReady({ servers: [server], timeout: Duration.millis(payload.readyTimeout ?? 30_000) })
      const claim = yield* Effect.mapError(
        Store.claim(payload.callId, server, payload.tool, hosting.runner),
        sqlFailure(server)
      )
      if (claim._tag === "Existing") {
        yield* secondDelivery(hosting, server, { id: payload.callId, tool: payload.tool }, claim.runner)
      }
      return yield* hosting.local.callServerTool(server, payload.tool, payload.args, {
        ...callbacks,
        readyTimeout: ms(payload.readyTimeout),
        timeout: ms(payload.timeout),
        maxTotalTimeout: ms(payload.maxTotalTimeout),
        resetTimeoutOnProgress: payload.resetTimeoutOnProgress,
        task: payload.task,
        progressToken: payload.progressToken,
        meta: payload.meta,
        stateful: payload.stateful
      })
    }))

// A task taken up by its id: no claim (following runs nothing again).
const follow = (hosting: Hosting, server: string, payload: FollowPayload) =>
  Calls.stream(
    hosting.calls,
    server,
    payload.callId,
    payload.tells,
    (callbacks) =>
      hosting.local.followTask(server, payload.taskId, {
        ...callbacks,
        readyTimeout: ms(payload.readyTimeout),
        progressToken: payload.progressToken
      })
  )

// Writes the server's status and lists whenever its actor reports a change, coalesced.
const publish = (hosting: Hosting, server: string) =>
  Effect.gen(function*() {
    const wake = yield* Queue.sliding<void>(1)
    const write = Effect.gen(function*() {
      const status = (yield* hosting.local.status).find((candidate) => candidate.name === server)
      // A server gone from the config writes nothing: its row is the singleton's to delete.
      if (status === undefined || !hosting.specs.has(server)) return
      const lists = Wire.listsOf(yield* hosting.local.catalog.get, server)
      // Starting here after a move, it has listed nothing yet: the lists stored stay, so no
      // replica's catalog loses its tools meanwhile (a call to one waits for the server).
      const unlisted = status.state._tag !== "Ready" && Object.values(lists).every((list) => list.length === 0)
      yield* Store.writeHosted(server, hosting.runner, Wire.statusOut(status), unlisted ? undefined : lists)
      yield* Store.notify(server)
    })
    yield* hosting.local.events.pipe(
      Stream.filter((event) => "server" in event && event.server === server),
      Stream.merge(hosting.local.catalog.changes),
      Stream.runForEach(() => Queue.offer(wake, undefined)),
      Effect.forkScoped
    )
    yield* Queue.offer(wake, undefined)
    yield* Queue.take(wake).pipe(
      Effect.zipRight(Effect.ignoreLogged(write)),
      Effect.forever,
      Effect.forkScoped
    )
  })

const missing = (server: string, runner: string) =>
  McpError.config(server, { message: `runner ${runner} has no config for this server` })

type Local = ServerRegistry.ServerRegistry

const quiet: Calls.Tells = { progress: false, log: false }

/**
 * The entity's handlers for `server`, each run by `on` with the registry that runs it (or its
 * failure: no config, no instance).
 */
export const handlers = (
  hosting: Hosting,
  server: string,
  on: <A, R>(f: (local: Local) => Effect.Effect<A, McpError.McpError, R>) => Effect.Effect<A, McpError.McpError, R>
) => {
  // A stream of events made with the registry that runs the server.
  const streamOn = <A, R>(f: (local: Local) => Stream.Stream<A, McpError.McpError, R>) =>
    Stream.unwrap(on((local) => Effect.succeed(f(local))))
  // A read and a prompt ask their caller as a call does (no progress, no log messages).
  const asking = (
    callId: string,
    run: (local: Local, asked: Pick<Calls.Callbacks, "onInput">) => Effect.Effect<unknown, McpError.McpError>
  ) => streamOn((local) => Calls.stream(hosting.calls, server, callId, quiet, ({ onInput }) => run(local, { onInput })))
  return ServerEntity.of({
    Ensure: () => on(() => Effect.void),
    Call: ({ payload }) => streamOn((local) => call({ ...hosting, local }, server, payload)),
    Follow: ({ payload }) => streamOn((local) => follow({ ...hosting, local }, server, payload)),
    // An answer finds its call among this runner's, whichever entity runs it.
    Answer: ({ payload }) => Calls.answer(hosting.calls, payload.callId, payload.requestId, payload),
    Read: ({ payload }) => asking(payload.callId, (local, asked) => local.readResource(server, payload.uri, asked)),
    GetPrompt: ({ payload }) =>
      asking(payload.callId, (local, asked) => local.getPrompt(server, payload.name, payload.args, asked)),
    Complete: ({ payload }) =>
      on((local) =>
        local.complete(
          server,
          payload.ref as Parameters<Local["complete"]>[1],
          payload.argument,
          payload.context as Parameters<Local["complete"]>[3]
        )
      ),
    Control: ({ payload }) =>
      on((local) =>
        payload.command === "approve" ? local.approveTool(server, payload.tool ?? "") : local[payload.command](server)
      )
  })
}

/** The server entity's handlers on this runner; entities never stop for being idle. */
export const entityLayer = (hosting: Hosting): Layer.Layer<never, never, Sharding.Sharding | SqlClient.SqlClient> =>
  ServerEntity.toLayer(
    Effect.gen(function*() {
      const address = yield* Entity.CurrentAddress
      const server = address.entityId
      const known = hosting.specs.has(server)
      const local = hosting.local
      if (known) {
        hosting.hosted.add(server)
        // Leaving (a move, a stop): the server stops here and its row waits for the next host.
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => hosting.hosted.delete(server)).pipe(
            Effect.zipRight(hosting.sync),
            Effect.zipRight(Effect.ignoreLogged(Store.writeLeft(server, hosting.runner))),
            Effect.zipRight(Effect.ignoreLogged(Store.notify(server)))
          )
        )
        yield* hosting.sync
        yield* publish(hosting, server)
      }
      return handlers(hosting, server, (f) => known ? f(local) : Effect.fail(missing(server, hosting.runner)))
    }),
    { maxIdleTime: Duration.infinity, concurrency: "unbounded", disableFatalDefects: true }
  )

/**
 * Wakes, every `interval`, the entity of each configured server whose shard this runner
 * holds and that is not hosted yet.
 */
export const keeper = (hosting: Hosting, interval: Duration.DurationInput) =>
  Effect.gen(function*() {
    const sharding = yield* Sharding.Sharding
    const client = yield* ServerEntity.client
    const waking = new Set<string>()
    const wake = (server: string) =>
      client(server).Ensure().pipe(
        Effect.timeout("30 seconds"),
        Effect.ignoreLogged,
        Effect.ensuring(Effect.sync(() => waking.delete(server))),
        Effect.forkScoped
      )
    const round = Effect.suspend(() =>
      Effect.forEach(hosting.specs.keys(), (server) => {
        if (hosting.hosted.has(server) || waking.has(server)) return Effect.void
        if (!sharding.hasShardId(sharding.getShardId(EntityId.make(server), "default"))) return Effect.void
        waking.add(server)
        return wake(server)
      }, { discard: true })
    )
    yield* round.pipe(Effect.zipRight(Effect.sleep(interval)), Effect.forever, Effect.forkScoped)
  })
