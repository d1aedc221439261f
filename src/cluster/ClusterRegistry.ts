/**
 * The fleet on a cluster: each configured server is an entity of @effect/cluster, keyed by its
 * name, hosted by exactly one runner at a time, over PostgreSQL (runners, shard locks and the
 * fleet's own tables). `layer` provides the same `ServerRegistry` service as the single-process
 * one, so the Policy, the Gateway, the model bridges and the CLI run on it unchanged.
 *
 * - **Runners** (`runner` set) host entities: a server's actor runs on its runner exactly as
 *   in one process (a local `ServerRegistry` of the servers it hosts). Every runner needs the
 *   config of every server (the same config file): a custom transport cannot travel.
 * - **Gateway replicas** (`runner` unset) host none; they read the fleet and send to it.
 * - **Catalog and events** reach every process through the `mcp_fleet_servers` table and
 *   PostgreSQL `LISTEN/NOTIFY`: the hosting runner writes its server's status and lists, every
 *   replica reads them (again on each notification, and every `refreshInterval`).
 * - **Config**: each runner applies `reconcile` to the servers it hosts; the runner holding
 *   the `mcp-fleet/desired` cluster singleton writes the desired set that every replica shows.
 * - **Failover**: a killed runner's shards move (runner health pings, shard locks short-lived,
 *   see `Failover`); its servers start on the others. A call it had accepted is sent again by
 *   the cluster to the new runner, where its claim (taken in PostgreSQL before the tool ran)
 *   is found: the call runs again only when the tool is annotated `idempotentHint: true` or
 *   `readOnlyHint: true`; otherwise it fails with a Closed error naming the server and saying
 *   the call may have run. A tool never runs twice unless it says it may.
 * - **Per-principal servers** (`perPrincipal: true`): a call with a principal (the gateway's
 *   OAuth subject) goes to that principal's own instance, an entity of its own placed on any
 *   runner, made there with the principal's credentials (`principalCredentials`, else the
 *   `mcp_fleet_credentials` table: server, principal, credentials as a JSON object of env or
 *   header names to values) and stopped after `instanceIdleTime`. Its reads, prompts,
 *   completions and tasks followed go there too. Without a principal, each is refused. Status
 *   shows each server's instances (principal, runner, state).
 *
 * **Calls are streams**: a call's progress, log messages and task statuses reach the caller's
 * callbacks, and the server's input requests (sampling, elicitation, roots) are answered by
 * the caller: its `onInput`, else the `Host` services of its own layer (a runner declares
 * every capability to its servers; the caller's services refuse what they do not answer);
 * so are a read's and a prompt's. The runner ends a call at its own limits, the wait for the
 * caller's answers included (`timeout`, as in one process). A task is followed (`followTask`)
 * from any process. `withClient` and `authorize` run only on
 * the server's own runner.
 *
 * @since 0.3.0
 */
import type * as RunnerAddress from "@effect/cluster/RunnerAddress"
import type * as SocketServer from "@effect/platform/SocketServer"
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlError from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as CatalogCache from "../CatalogCache.js"
import * as Host from "../internal/cluster/host.js"
import * as Instance from "../internal/cluster/instance.js"
import * as Registry from "../internal/cluster/registry.js"
import * as Sharding from "../internal/cluster/sharding.js"
import * as Store from "../internal/cluster/store.js"
import * as ServerRegistry from "../ServerRegistry.js"

/**
 * How fast a dead runner's servers move. The defaults move them in a few seconds
 * (@effect/cluster's own take about 35 s); every process of a cluster must use the same
 * `shardsPerGroup`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Failover {
  /** Shards per group. Default: 64. */
  readonly shardsPerGroup?: number | undefined
  /**
   * How often a runner refreshes its shard locks. Default: 3 s. It is also the deadline of
   * each lock operation: a runner whose refresh misses it gives up all its shards (its servers
   * restart elsewhere), so a busy PostgreSQL or machine needs it well above a query's time.
   */
  readonly lockRefresh?: Duration.DurationInput | undefined
  /** When an unrefreshed shard lock expires. Default: 10 s (at least 3 × `lockRefresh`). */
  readonly lockExpiration?: Duration.DurationInput | undefined
  /** How often shard assignments are read again. Default: 1 s. */
  readonly refreshAssignments?: Duration.DurationInput | undefined
  /** How often runners ping each other. Default: 1 s. */
  readonly healthCheck?: Duration.DurationInput | undefined
}

/**
 * How this process joins the cluster.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options extends ServerRegistry.Options {
  /** The PostgreSQL URL, e.g. `postgres://postgres@127.0.0.1:5432/postgres`. */
  readonly url: string | Redacted.Redacted<string>
  /**
   * Host entities, listening on `host:port` (port 0: any free port) and announced to the
   * others as `advertise` (default: `host`). Unset: a gateway replica that hosts none.
   */
  readonly runner?: {
    readonly host?: string | undefined
    readonly port?: number | undefined
    readonly advertise?: string | undefined
  } | undefined
  /** How long a call waits for its server (through a move), by default. Default: 30 s. */
  readonly readyTimeout?: Duration.DurationInput | undefined
  /** How long a call may take once sent, by default. Default: 60 s. */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** How often every replica reads the fleet's rows even without a notification. Default: 2 s. */
  readonly refreshInterval?: Duration.DurationInput | undefined
  /**
   * How long a per-principal instance (`perPrincipal: true`) stays on its runner without
   * calls. Default: 5 min.
   */
  readonly instanceIdleTime?: Duration.DurationInput | undefined
  readonly failover?: Failover | undefined
}

/**
 * This process in the cluster: its runner's address (`host:port`), if it hosts entities.
 *
 * @since 0.3.0
 * @category models
 */
export interface ClusterInfo {
  readonly runner: string | undefined
  /** Each server and the runner hosting it (undefined while none does), in config order. */
  readonly placement: Effect.Effect<ReadonlyArray<{ readonly server: string; readonly runner: string | undefined }>>
}

/**
 * The ClusterInfo service tag.
 *
 * @since 0.3.0
 * @category tags
 */
export class Cluster extends Context.Tag("mcp-fleet/ClusterRegistry/Cluster")<Cluster, ClusterInfo>() {}

/**
 * Why joining the cluster failed: PostgreSQL could not be reached or used, or the runner's
 * socket could not listen.
 *
 * @since 0.3.0
 * @category errors
 */
export type JoinError = SqlError.SqlError | SocketServer.SocketServerError

const tuning = (failover: Failover = {}): Sharding.Tuning => ({
  shardsPerGroup: failover.shardsPerGroup ?? 64,
  lockRefresh: failover.lockRefresh ?? "3 seconds",
  lockExpiration: failover.lockExpiration ?? "10 seconds",
  refreshAssignments: failover.refreshAssignments ?? "1 second",
  healthCheck: failover.healthCheck ?? "1 second"
})

const addressText = (address: RunnerAddress.RunnerAddress) => `${address.host}:${address.port}`

// A runner's per-principal instances: each a registry of one server with this one's options
// and services; its lists are cached in memory (they would take the server's place).
const instances = (options: Options) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<ServerRegistry.Requirements>()
    const made: Host.Instances = {
      credentials: options.principalCredentials ?? (yield* Instance.storedCredentials),
      make: (spec) =>
        ServerRegistry.make({ ...options, servers: [spec] }).pipe(
          Effect.provideServiceEffect(CatalogCache.CatalogCache, CatalogCache.makeMemory),
          Effect.provide(context)
        )
    }
    return made
  })

const registryLayer = (options: Options, runner: { current: string | undefined }) =>
  Layer.scopedContext(Effect.gen(function*() {
    yield* Store.migrate.pipe(Effect.orDie)
    const hosting = runner.current === undefined
      ? undefined
      : yield* Host.makeHosting(runner.current, { ...options, servers: undefined }, instances(options))
    const { directory, registry } = yield* Registry.make({
      registry: options,
      readyTimeout: Duration.decode(options.readyTimeout ?? "30 seconds"),
      requestTimeout: Duration.decode(options.requestTimeout ?? "60 seconds"),
      refreshInterval: options.refreshInterval ?? "2 seconds",
      instanceIdleTime: options.instanceIdleTime ?? "5 minutes",
      hosting
    })
    const info: ClusterInfo = {
      runner: runner.current,
      placement: Effect.sync(() =>
        [...directory.entries()].map(([server, entry]) => ({ server, runner: entry.runner }))
      )
    }
    return Context.make(ServerRegistry.ServerRegistry, registry).pipe(Context.add(Cluster, info))
  }))

/**
 * A layer that joins the cluster at `options.url` and provides the fleet as a
 * `ServerRegistry` (and this process's `Cluster` info). Fails when PostgreSQL cannot be
 * reached. Leaving (the layer released) hands this runner's servers to the others.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<ServerRegistry.ServerRegistry | Cluster, JoinError, ServerRegistry.Requirements> => {
  const url = typeof options.url === "string" ? Redacted.make(options.url) : options.url
  const runner: { current: string | undefined } = { current: undefined }
  const sharding = options.runner === undefined
    ? Sharding.clientOnly(tuning(options.failover))
    : Sharding.runner(
      tuning(options.failover),
      { host: options.runner.host ?? "127.0.0.1", port: options.runner.port ?? 0, advertise: options.runner.advertise },
      (address) => {
        runner.current = addressText(address)
      }
    )
  const pg = PgClient.layer({ url, applicationName: "mcp-fleet" })
  return registryLayer(options, runner).pipe(
    Layer.provide(sharding),
    Layer.provide(pg)
  ) as Layer.Layer<ServerRegistry.ServerRegistry | Cluster, JoinError, ServerRegistry.Requirements>
}

/**
 * Joins the cluster for the Scope's lifetime and returns the fleet, as `layer` provides it.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<
  { readonly registry: ServerRegistry.ServerRegistry; readonly cluster: ClusterInfo },
  JoinError,
  Scope.Scope | ServerRegistry.Requirements
> =>
  Effect.map(Layer.build(layer(options)), (context) => ({
    registry: Context.get(context, ServerRegistry.ServerRegistry),
    cluster: Context.get(context, Cluster)
  }))
