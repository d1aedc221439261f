/**
 * @effect/cluster's sharding over sockets, with its runner and message storage in PostgreSQL,
 * built here rather than by `NodeClusterSocket.layer` so that nothing is read from the
 * environment (the cluster reads unprefixed `PORT`, `HOST`, `SHARDS_PER_GROUP`) and a runner
 * may listen on port 0: the socket is opened first and the runner announces the port it got.
 * A runner pings the others (quicker to give up on a dead one than `RunnerHealth.layerPing`) and its shard locks are short-lived, so
 * a killed runner's shards move within seconds. Every socket between processes sends at once
 * (`noDelay`): see `clientProtocol`.
 *
 * @since 0.3.0
 */
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as Runners from "@effect/cluster/Runners"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import type * as Sharding from "@effect/cluster/Sharding"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { Socket } from "@effect/platform/Socket"
import * as SocketServer from "@effect/platform/SocketServer"
import * as RpcClient from "@effect/rpc/RpcClient"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

/** How quickly a dead runner's shards move; see `ClusterRegistry.Failover`. */
export interface Tuning {
  readonly shardsPerGroup: number
  readonly lockRefresh: Duration.DurationInput
  readonly lockExpiration: Duration.DurationInput
  readonly refreshAssignments: Duration.DurationInput
  readonly healthCheck: Duration.DurationInput
}

const config = (tuning: Tuning, runnerAddress: Option.Option<RunnerAddress.RunnerAddress>) =>
  ShardingConfig.layer({
    runnerAddress,
    shardsPerGroup: tuning.shardsPerGroup,
    shardLockRefreshInterval: tuning.lockRefresh,
    shardLockExpiration: tuning.lockExpiration,
    refreshAssignmentsInterval: tuning.refreshAssignments,
    runnerHealthCheckInterval: tuning.healthCheck,
    entityMaxIdleTime: Duration.infinity,
    entityTerminationTimeout: Duration.seconds(5)
  })

// NodeClusterSocket.layerClientProtocol with Nagle's algorithm off. A call's stream ends in a
// burst of small messages each way (the chunk's acknowledgement, the interrupts, their
// replies): with Nagle on, each burst's second message waited for the TCP acknowledgement of
// the first, which the other side delays up to 40 ms. Two such waits were most of the ~100 ms
// a call through the cluster cost.
const clientProtocol = Layer.effect(
  Runners.RpcClientProtocol,
  Effect.map(
    RpcSerialization.RpcSerialization,
    (serialization) =>
      Effect.fnUntraced(function*(address: RunnerAddress.RunnerAddress) {
        const socket = yield* NodeSocket.makeNet({
          openTimeout: 1000,
          timeout: 5500,
          host: address.host,
          port: address.port,
          noDelay: true
        })
        return yield* RpcClient.makeProtocolSocket().pipe(
          Effect.provideService(Socket, socket),
          Effect.provideService(RpcSerialization.RpcSerialization, serialization)
        )
      }, Effect.orDie)
  )
)

// Not the shard locks' numbers (1,000,000 per shard group plus the shard).
const TABLES_LOCK = 4_721_028

// Processes started together would race to create @effect/cluster's tables (two `CREATE TABLE
// IF NOT EXISTS` at once can fail in PostgreSQL): one process at a time builds the storage,
// under a session advisory lock held on a connection of its own.
const oneAtATime = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const outer = yield* Effect.scope
    const sql = yield* SqlClient.SqlClient
    return yield* Effect.scoped(Effect.gen(function*() {
      const connection = yield* sql.reserve
      yield* Effect.acquireRelease(
        connection.executeRaw("SELECT pg_advisory_lock($1)", [TABLES_LOCK]),
        () => Effect.ignore(connection.executeRaw("SELECT pg_advisory_unlock($1)", [TABLES_LOCK]))
      )
      return Layer.succeedContext(yield* Layer.buildWithScope(layer, outer))
    }))
  }))

/**
 * The runner storage below, its shard releases made one at a time; its other operations as
 * they are. SqlRunnerStorage runs all of a runner's shard lock operations on one PostgreSQL
 * connection, and the cluster releases the shards a runner gives up (a rebalance, its own
 * leaving) one per fiber, all at once: dozens of releases queued on that connection, and under
 * load the lock refresh behind them missed its deadline, so the runner dropped every shard it
 * held (its servers restarted; a caller waited for them). One at a time keeps the queue short.
 */
export const oneReleaseAtATime = Layer.effect(
  RunnerStorage.RunnerStorage,
  Effect.gen(function*() {
    const storage = yield* RunnerStorage.RunnerStorage
    const lane = yield* Effect.makeSemaphore(1)
    return RunnerStorage.RunnerStorage.of({
      ...storage,
      release: (address, shardId) => lane.withPermits(1)(storage.release(address, shardId))
    })
  })
)

const storage = <A, E, R>(
  layer: Layer.Layer<A, E, R>,
  settings: Layer.Layer<ShardingConfig.ShardingConfig>
) =>
  layer.pipe(
    Layer.provideMerge(
      Layer.orDie(
        oneAtATime(Layer.merge(SqlMessageStorage.layer, Layer.provide(oneReleaseAtATime, SqlRunnerStorage.layer)))
      )
    ),
    Layer.provide(settings),
    Layer.provide(RpcSerialization.layerMsgPack)
  )

// RunnerHealth.layerPing retries a failed ping 5 times, 500 ms apart: a dead runner (its port
// refuses at once) is noticed only after 2.5 s. Two retries 250 ms apart tell it in 0.5 s, and
// a runner too busy to answer still has 3 s per ping.
const pingHealth = Layer.effect(
  RunnerHealth.RunnerHealth,
  Effect.map(Runners.Runners, (runners) =>
    RunnerHealth.RunnerHealth.of({
      isAlive: (address) =>
        runners.ping(address).pipe(
          Effect.timeout("3 seconds"),
          Effect.retry({ times: 2, schedule: Schedule.spaced("250 millis") }),
          Effect.isSuccess
        )
    }))
)

/** A process that sends to entities and hosts none (a gateway replica). */
export const clientOnly = (
  tuning: Tuning
): Layer.Layer<Sharding.Sharding | Runners.Runners, never, SqlClient.SqlClient> =>
  storage(SocketRunner.layerClientOnly.pipe(Layer.provide(clientProtocol)), config(tuning, Option.none()))

/**
 * A runner listening on `host:port` (port 0: any free port), announced as `advertise` (default:
 * `host`) with the port it got. `address` is told the address once the socket listens.
 */
export const runner = (
  tuning: Tuning,
  listen: { readonly host: string; readonly port: number; readonly advertise?: string | undefined },
  address: (address: RunnerAddress.RunnerAddress) => void
): Layer.Layer<Sharding.Sharding | Runners.Runners, SocketServer.SocketServerError, SqlClient.SqlClient> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const server = yield* NodeSocketServer.make({ host: listen.host, port: listen.port, noDelay: true })
    const port = server.address._tag === "TcpAddress" ? server.address.port : listen.port
    const self = RunnerAddress.make(listen.advertise ?? listen.host, port)
    address(self)
    const settings = config(tuning, Option.some(self))
    const health = pingHealth.pipe(
      Layer.provide(Runners.layerRpc),
      Layer.provide(clientProtocol),
      Layer.provide(settings),
      Layer.provide(RpcSerialization.layerMsgPack)
    )
    return storage(
      SocketRunner.layer.pipe(
        Layer.provide(Layer.succeed(SocketServer.SocketServer, server)),
        Layer.provide(clientProtocol),
        Layer.provide(health)
      ),
      settings
    )
  }))
