/**
 * `npm run bench:cluster`: what running the fleet on a cluster costs, side by side in one run,
 * on a fresh database of MCP_FLEET_PG_URL's server (else 127.0.0.1:5432, else PostgreSQL from
 * npm). Four ledger servers (test/fixtures/cluster-ledger.mjs), one gateway: this process
 * (`ClusterRegistry.layer` hosting nothing, as `serve --cluster` does), runners as processes
 * of the bundled command.
 *
 * 1. Latency (c = 1: p50, p99) and throughput (c = 8, calls/s) of `callServerTool`, in one
 *    process (`ServerRegistry`, the baseline) and through the gateway to 1, 2 and 3 runners;
 *    the cluster hop is the difference of the p50s.
 * 2. Rebalance when runner 2 and 3 join: servers restarted (new server pids), and the calls
 *    made meanwhile (c = 4): how many were delayed (over 1 s), the slowest, and the failed.
 * 3. Failover: SIGKILL the runner hosting `s1`, until each of its servers is Ready on
 *    another runner (the gateway's status), `--trials` times (a new runner joins between
 *    trials); the worst case is reported. Goal: ≤ 5 s.
 * 4. Memory: each runner's resident set (its four servers' processes not counted).
 *
 * `--hop` measures only 1's first two rows (one process, one runner) and the hop, for A/B runs.
 *
 *   npm run bench:cluster [-- --trials N] [-- --quick] [-- --hop]
 *
 * @module
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import { performance } from "node:perf_hooks"
import { fleetConfig, runsById, session, type Started, startRunner } from "../examples/clusterKit.js"
import { ClusterRegistry } from "../src/cluster/index.js"
import * as FleetConfig from "../src/FleetConfig.js"
import * as NodeFleet from "../src/NodeFleet.js"
import * as ServerRegistry from "../src/ServerRegistry.js"

const argv = process.argv.slice(2)
const quick = argv.includes("--quick")
const hopOnly = argv.includes("--hop")
const trials = Number(argv[argv.indexOf("--trials") + 1]) || (quick ? 1 : 2)
const SERVERS = ["s1", "s2", "s3", "s4"]
const LATENCY_CALLS = quick ? 100 : 400
const THROUGHPUT_MS = quick ? 1500 : 3000

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
const round = (ms: number) => Math.round(ms * 100) / 100

let callId = 0
const call = (registry: ServerRegistry.ServerRegistry, server: string) =>
  registry.callServerTool(server, "lookup", { id: `b${callId++}` })

// p50/p99 at c = 1, then calls/s at c = 8.
const measure = (registry: ServerRegistry.ServerRegistry) =>
  Effect.gen(function*() {
    const times: Array<number> = []
    for (let i = 0; i < LATENCY_CALLS; i++) {
      const start = performance.now()
      yield* call(registry, SERVERS[i % SERVERS.length]!)
      times.push(performance.now() - start)
    }
    times.sort((a, b) => a - b)
    let done = 0
    const until = performance.now() + THROUGHPUT_MS
    const worker = (w: number) =>
      Effect.whileLoop({
        while: () => performance.now() < until,
        body: () => call(registry, SERVERS[(done + w) % SERVERS.length]!),
        step: () => void done++
      })
    yield* Effect.forEach([0, 1, 2, 3, 4, 5, 6, 7], worker, { concurrency: "unbounded", discard: true })
    return {
      p50: round(percentile(times, 0.5)),
      p99: round(percentile(times, 0.99)),
      perSecond: Math.round(done / (THROUGHPUT_MS / 1000))
    }
  })

// Every server answers a call (retried while shards move).
const allAnswer = (registry: ServerRegistry.ServerRegistry) =>
  Effect.forEach(
    SERVERS,
    (server) => call(registry, server).pipe(Effect.retry({ times: 600, while: () => true }), Effect.delay("10 millis"))
  )

// The pid of each server's process now, from the ledger of a call to each.
const serverPids = (registry: ServerRegistry.ServerRegistry) =>
  Effect.forEach(
    SERVERS,
    (server) =>
      Effect.map(call(registry, server), (result) =>
        JSON.parse((result.content[0] as { text: string }).text).pid as number)
  )

// Calls at c = 4 while `during` runs: the slowest, how many took over 1 s, and how many failed.
const underLoad = <A>(registry: ServerRegistry.ServerRegistry, during: Effect.Effect<A>) =>
  Effect.gen(function*() {
    let stop = false
    let slowest = 0
    let delayed = 0
    let failed = 0
    let calls = 0
    const worker = (w: number) =>
      Effect.whileLoop({
        while: () => !stop,
        body: () => {
          const start = performance.now()
          return call(registry, SERVERS[(calls + w) % SERVERS.length]!).pipe(
            Effect.matchEffect({
              onFailure: () => Effect.sync(() => void failed++),
              onSuccess: () =>
                Effect.sync(() => {
                  const took = performance.now() - start
                  slowest = Math.max(slowest, took)
                  if (took > 1000) delayed++
                })
            })
          )
        },
        step: () => void calls++
      })
    const load = yield* Effect.fork(Effect.forEach([0, 1, 2, 3], worker, { concurrency: "unbounded", discard: true }))
    const result = yield* during
    yield* Effect.sleep("3 seconds")
    stop = true
    yield* load.await
    return { result, slowest: round(slowest), delayed, failed, calls }
  })

const rssMB = (pid: number) => {
  const line = fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!
  return Math.round(Number(line.split(/\s+/)[1]) / 1024)
}

const singleProcess = (config: string) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      FleetConfig.layer({ paths: [config], watch: false }).pipe(
        Layer.provideMerge(ServerRegistry.layer()),
        Layer.provide(NodeFleet.layer)
      )
    )
    const registry = Context.get(context, ServerRegistry.ServerRegistry)
    yield* registry.awaitReady({ servers: SERVERS, timeout: "60 seconds" })
    yield* allAnswer(registry)
    return yield* measure(registry)
  }).pipe(Effect.scoped)

const load = () => os.loadavg().map((average) => average.toFixed(1)).join(" / ")

// The latency rows, the hop (the p50s' difference), and the machine's load meanwhile.
const printLatency = (rows: ReadonlyArray<Record<string, unknown>>) => {
  const hop = round((rows[1]!.p50 as number) - (rows[0]!.p50 as number))
  console.log("\nLatency (c = 1) and throughput (c = 8) of a tool call, one gateway:")
  console.table(rows)
  console.log(`The cluster hop adds ${hop} ms at p50 (1 runner against one process).`)
  console.log(`Load average (1 / 5 / 15 min): ${load()} on ${os.cpus().length} cores`)
}

const bench = (cli: ReadonlyArray<string>, url: string, dir: string, runners: Array<Started>) =>
  Effect.gen(function*() {
    const config = fleetConfig(dir, SERVERS)
    const rows: Array<Record<string, unknown>> = []
    rows.push({ setup: "single process", ...(yield* singleProcess(config)) })

    const join = Effect.promise(() => startRunner(cli, url, config)).pipe(
      Effect.tap((runner) => Effect.sync(() => runners.push(runner)))
    )
    yield* join
    const context = yield* Layer.build(ClusterRegistry.layer({ url }).pipe(Layer.provide(NodeFleet.layer)))
    const registry = Context.get(context, ServerRegistry.ServerRegistry)
    yield* registry.awaitReady({ servers: SERVERS, timeout: "60 seconds" })
    yield* allAnswer(registry)
    rows.push({ setup: "cluster, 1 runner", ...(yield* measure(registry)) })
    if (hopOnly) return printLatency(rows)

    const rebalances: Array<Record<string, unknown>> = []
    for (const n of [2, 3]) {
      const before = yield* serverPids(registry)
      const joined = yield* underLoad(registry, join)
      yield* allAnswer(registry)
      const after = yield* serverPids(registry)
      rebalances.push({
        join: `runner ${n}`,
        serversRestarted: after.filter((pid, i) => pid !== before[i]).length,
        callsDuring: joined.calls,
        delayedOver1s: joined.delayed,
        failed: joined.failed,
        slowestMs: joined.slowest
      })
      rows.push({ setup: `cluster, ${n} runners`, ...(yield* measure(registry)) })
    }

    const memory = runners.map((runner) => ({ runner: runner.announced, rssMB: rssMB(runner.child.pid!) }))

    const failovers: Array<number> = []
    for (let t = 0; t < trials; t++) {
      const placed = new Map((yield* registry.status).map((status) => [status.name, status.runner]))
      const victim = runners.find((runner) => runner.announced === placed.get("s1") && runner.child.exitCode === null)!
      const moved = SERVERS.filter((server) => placed.get(server) === victim.announced)
      const killedAt = performance.now()
      victim.child.kill("SIGKILL")
      for (;;) {
        const now = new Map((yield* registry.status).map((status) => [status.name, status]))
        if (
          moved.every((server) =>
            now.get(server)?.state._tag === "Ready" && now.get(server)?.runner !== victim.announced
          )
        ) break
        yield* Effect.sleep("20 millis")
      }
      failovers.push(Math.round(performance.now() - killedAt))
      yield* allAnswer(registry)
      if (t < trials - 1) {
        yield* join
        yield* allAnswer(registry)
      }
    }

    printLatency(rows)
    console.log("\nRebalance as a runner joins (calls at c = 4 meanwhile):")
    console.table(rebalances)
    console.log(
      `\nFailover, SIGKILL -> its servers Ready elsewhere: ${failovers.join(", ")} ms; worst ${
        Math.max(...failovers)
      } ms (goal ≤ 5000)`
    )
    console.log("\nMemory per runner (resident set, its servers' processes not counted):")
    console.table(memory)
    const runs = runsById(dir)
    console.log(
      `\nCalls run twice: ${
        [...runs.values()].filter((count) => count > 1).length
      } of ${runs.size} (lookups may be retried after a kill)`
    )
  }).pipe(Effect.scoped)

await session(true, ({ cli, dir, started, url }) =>
  Effect.runPromise(
    bench(cli, url, dir, started).pipe(
      Effect.tapErrorCause((cause) => Effect.sync(() => console.error(Cause.pretty(cause))))
    )
  ))
process.exit(0)
