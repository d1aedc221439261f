/**
 * `ClusterRegistry.make`: a `ServerRegistry` whose servers are entities of @effect/cluster.
 * Every replica (runner or gateway) reads the fleet from PostgreSQL (`directory.ts`) and
 * routes to the entities (`routes.ts`); a runner also hosts entities (`host.ts`), and the
 * runner that holds the `mcp-fleet/desired` singleton writes the desired set of servers (its
 * config) for every replica to see, and forgets old call claims.
 *
 * @since 0.3.0
 */
import type * as Sharding from "@effect/cluster/Sharding"
import * as Singleton from "@effect/cluster/Singleton"
import type * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import * as McpHost from "../../Host.js"
import * as McpError from "../../McpError.js"
import * as ServerRegistry from "../../ServerRegistry.js"
import * as ServerSpec from "../../ServerSpec.js"
import { isTerminal } from "../../ServerState.js"
import * as Secrets from "../secrets.js"
import * as Directory from "./directory.js"
import { ServerEntity } from "./entity.js"
import * as Host from "./host.js"
import * as Instance from "./instance.js"
import * as Routes from "./routes.js"
import * as Store from "./store.js"

/** What `make` needs beyond the registry options. */
export interface Settings {
  readonly registry: ServerRegistry.Options
  readonly readyTimeout: Duration.Duration
  readonly requestTimeout: Duration.Duration
  readonly refreshInterval: Duration.DurationInput
  readonly instanceIdleTime: Duration.DurationInput
  /** The runner's address and its local registry, when this process hosts entities. */
  readonly hosting: Host.Hosting | undefined
}

/** This process's specs as the desired set, written by whoever holds the singleton. */
const desiredSingleton = (specs: SubscriptionRef.SubscriptionRef<ReadonlyArray<ServerSpec.ServerSpec>>) =>
  Singleton.make(
    "mcp-fleet/desired",
    Effect.gen(function*() {
      // On every change, and again every few seconds: a runner whose config lagged behind may
      // have written a row of a server removed since.
      const write = (changed: boolean) =>
        Effect.flatMap(
          SubscriptionRef.get(specs),
          (current) =>
            Store.writeDesired(current.map((spec) => ({ name: spec.name, digest: ServerSpec.hash(spec) }))).pipe(
              Effect.flatMap((gone) => changed || gone.length > 0 ? Store.notify("*") : Effect.void),
              Effect.ignoreLogged
            )
        )
      yield* specs.changes.pipe(Stream.runForEach(() => write(true)), Effect.forkScoped)
      yield* write(false).pipe(Effect.repeat(Schedule.spaced("5 seconds")), Effect.forkScoped)
      yield* Store.pruneClaims(3600).pipe(Effect.ignoreLogged, Effect.repeat(Schedule.spaced("1 minute")))
    }).pipe(Effect.scoped)
  )

const ready = (status: ServerRegistry.ServerStatus) => status.state._tag === "Ready"

// The servers `target` names that are not there yet; fails when a required one cannot be.
const laggards = (statuses: ReadonlyArray<ServerRegistry.ServerStatus>, target: ServerRegistry.AwaitTarget) => {
  const named = typeof target === "string" ? undefined : new Set(target)
  const waiting = statuses.filter((status) =>
    named ? named.has(status.name) : target === "required" ? status.required : status.state._tag !== "Disabled"
  )
  const settled = (status: ServerRegistry.ServerStatus) =>
    ready(status) || (target === "settled" && (status.state._tag === "Failed" || isTerminal(status.state)))
  return waiting.filter((status) => !settled(status)).map((status) => status.name)
}

const awaitReady = (directory: Directory.Directory): ServerRegistry.ServerRegistry["awaitReady"] => (options = {}) =>
  Effect.gen(function*() {
    const target = options.servers ?? "required"
    const timeout = Duration.decode(options.timeout ?? "30 seconds")
    const statuses = () => [...directory.entries().values()].map((entry) => entry.status)
    const done = Effect.sync(() =>
      laggards(statuses(), target).length === 0 &&
      (typeof target === "string" || target.every((name) => directory.entries().has(name)))
    )
    yield* done.pipe(
      Effect.repeat({ until: (ok) => ok, schedule: Schedule.spaced("100 millis") }),
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () =>
          McpError.unavailable(undefined, {
            state: "Pending",
            message: `servers not ready within ${Duration.format(timeout)}: ${laggards(statuses(), target).join(", ")}`
          })
      })
    )
  })

/** Makes the cluster's registry (`ClusterRegistry.make`). */
export const make = (
  settings: Settings
): Effect.Effect<
  { readonly registry: ServerRegistry.ServerRegistry; readonly directory: Directory.Directory },
  never,
  Scope.Scope | Sharding.Sharding | SqlClient.SqlClient | PgClient.PgClient
> =>
  Effect.gen(function*() {
    const naming: Catalog.Naming = { ...Catalog.defaultNaming, ...settings.registry.naming }
    const directory = yield* Directory.make({ naming, refreshInterval: settings.refreshInterval })
    const client = yield* ServerEntity.client
    const specs = yield* SubscriptionRef.make<ReadonlyArray<ServerSpec.ServerSpec>>([])
    // The servers that run one instance per principal, as this process's config says.
    const perPrincipal = { current: new Set<string>() }
    // The caller's side of its calls: what their servers ask is answered by `host`.
    const routes = Routes.make({
      ...settings,
      directory,
      client,
      host: yield* McpHost.services(),
      instances: yield* Instance.InstanceEntity.client,
      perPrincipal: (server) => perPrincipal.current.has(server),
      background: yield* Effect.scope
    })
    const hosting = settings.hosting
    if (hosting !== undefined) {
      const context = yield* Effect.context<Sharding.Sharding | SqlClient.SqlClient>()
      yield* Layer.buildWithScope(
        Layer.mergeAll(
          Host.entityLayer(hosting),
          Instance.layer(hosting, settings.instanceIdleTime),
          desiredSingleton(specs)
        ).pipe(
          Layer.provide(Layer.succeedContext(context))
        ),
        yield* Effect.scope
      )
      yield* Host.keeper(hosting, "250 millis")
    }
    // Each server's secrets, for the Policy to refuse arguments that carry one.
    const maskers = { current: new Map<string, Secrets.Masker>() }
    yield* specs.changes.pipe(
      Stream.runForEach((current) =>
        Effect.sync(() => {
          maskers.current = new Map(current.map((spec) => [spec.name, Secrets.make(ServerSpec.secrets(spec))]))
          perPrincipal.current = new Set(current.filter((spec) => spec.perPrincipal === true).map((spec) => spec.name))
        })
      ),
      Effect.forkScoped
    )
    const reconcile = reconciler(specs, hosting, directory)
    if (settings.registry.servers !== undefined) yield* reconcile(settings.registry.servers)
    const local = hosting?.local
    const onLocal = <A, R>(
      server: string,
      f: (registry: ServerRegistry.ServerRegistry) => Effect.Effect<A, McpError.McpError, R>
    ): Effect.Effect<A, McpError.McpError, R> =>
      local !== undefined && hosting!.hosted.has(server)
        ? f(local)
        : Effect.fail(McpError.unsupported(server, { message: "this needs the server's runner (it runs on another)" }))
    const registry = ServerRegistry.ServerRegistry.of({
      reconcile,
      enable: (server) => routes.control(server, "enable"),
      disable: (server) => routes.control(server, "disable"),
      restart: (server) => routes.control(server, "restart"),
      authorize: (server) => onLocal(server, (registry) => registry.authorize(server)),
      status: Effect.sync(() => [...directory.entries().values()].map((entry) => entry.status)),
      awaitReady: awaitReady(directory),
      events: Stream.fromPubSub(directory.pubsub),
      subscribe: PubSub.subscribe(directory.pubsub),
      catalog: directory.catalog,
      callTool: routes.callTool,
      callServerTool: routes.callServerTool,
      followTask: routes.followTask,
      readResource: routes.readResource,
      getPrompt: routes.getPrompt,
      complete: routes.complete,
      drifted: local === undefined ? Effect.succeed([]) : local.drifted,
      approveTool: (server, tool) => routes.control(server, "approve", tool),
      secretIn: (value) => {
        for (const [name, masker] of maskers.current) {
          if (Secrets.carries(masker, value)) return name
        }
        return undefined
      },
      withClient: (server, f, options) => onLocal(server, (registry) => registry.withClient(server, f, options))
    })
    return { registry, directory }
  })

// Reconcile: this process's specs change; a runner applies them to the servers it hosts, and
// the singleton's holder writes them as the desired set. The result compares with the
// previous specs by their digest.
const reconciler = (
  specs: SubscriptionRef.SubscriptionRef<ReadonlyArray<ServerSpec.ServerSpec>>,
  hosting: Host.Hosting | undefined,
  directory: Directory.Directory
): ServerRegistry.ServerRegistry["reconcile"] =>
(desired) =>
  Effect.gen(function*() {
    const before = new Map((yield* SubscriptionRef.get(specs)).map((spec) => [spec.name, ServerSpec.hash(spec)]))
    const after = new Map(desired.map((spec) => [spec.name, ServerSpec.hash(spec)]))
    const result: ServerRegistry.ReconcileResult = {
      added: [...after.keys()].filter((name) => !before.has(name)),
      removed: [...before.keys()].filter((name) => !after.has(name)),
      restarted: [...after].filter(([name, hash]) => before.has(name) && before.get(name) !== hash).map(([n]) => n),
      unchanged: [...after].filter(([name, hash]) => before.get(name) === hash).map(([name]) => name)
    }
    yield* SubscriptionRef.set(specs, desired)
    if (hosting !== undefined) {
      hosting.specs.clear()
      for (const spec of desired) hosting.specs.set(spec.name, spec)
      yield* hosting.sync
    }
    yield* directory.refresh
    return result
  })
