// `npm run cluster:demo`: the fleet on a cluster. Three `mcp-fleet runner` processes host
// four ledger servers (test/fixtures/cluster-ledger.mjs) and two `mcp-fleet serve --cluster`
// gateway replicas front them, against MCP_FLEET_PG_URL (default
// postgres://postgres@127.0.0.1:5432/postgres; with nothing there, a PostgreSQL from npm).
// It runs calls through both gateways, SIGKILLs the runner hosting `s1` while two calls run
// on it — `record` (not idempotent: it fails, saying it may have run) and `lookup`
// (readOnlyHint: retried on the new runner) — prints what happened, and ends every process.
import * as Effect from "effect/Effect"
import * as McpClient from "../src/McpClient.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as NodeFleet from "../src/NodeFleet.js"
import * as StreamableHttp from "../src/StreamableHttp.js"
import { Transport } from "../src/Transport.js"
import { fleetConfig, runsById, session, type Started, startGateway, startRunner } from "./clusterKit.js"

const SERVERS = ["s1", "s2", "s3", "s4"]

// A tool result's JSON answer, or the error text of a failed call.
const outcome = (result: McpSchema.CallToolResult) => {
  const text = (result.content[0] as { readonly text: string }).text
  return result.isError === true
    ? { error: text }
    : JSON.parse(text) as { readonly pid: number; readonly runner: number }
}

const demo = (cli: ReadonlyArray<string>, url: string, dir: string, started: Array<Started>) =>
  Effect.gen(function*() {
    const config = fleetConfig(dir, SERVERS)
    // One after the other: the first creates the cluster's tables.
    const runners: Array<Started> = []
    for (let i = 0; i < 3; i++) {
      const runner = yield* Effect.promise(() => startRunner(cli, url, config))
      runners.push(runner)
      started.push(runner)
    }
    const runnerOf = new Map(runners.map((runner) => [runner.child.pid!, runner.announced]))
    console.log(`3 runners joined: ${runners.map((runner) => runner.announced).join(", ")}`)
    const gateways = yield* Effect.promise(() => Promise.all([0, 1].map(() => startGateway(cli, url, config))))
    for (const gateway of gateways) started.push(gateway)
    console.log(`2 gateway replicas: ${gateways.map((gateway) => gateway.announced).join(", ")}`)
    const clients = yield* Effect.forEach(gateways, (gateway) =>
      Effect.flatMap(
        StreamableHttp.make({ name: "gateway", url: gateway.announced }),
        (transport) => McpClient.make().pipe(Effect.provideService(Transport, transport))
      ))
    const call = (i: number, server: string, tool: string, args: Record<string, unknown>) =>
      Effect.map(clients[i % 2]!.callTool(`mcp__${server}__${tool}`, args), outcome)

    // A lookup of `server`, again until it answers (while runners join, shards move).
    const answered = (server: string, id: string) =>
      Effect.gen(function*() {
        for (;;) {
          const answer = yield* call(0, server, "lookup", { id })
          if (!("error" in answer)) return answer
          yield* Effect.sleep("100 millis")
        }
      })
    yield* Effect.forEach(SERVERS, (server) => answered(server, `warm-${server}`))
    console.log("\ncalls, alternating between the two gateways:")
    const placement = new Map<string, string>()
    for (let i = 0; i < 8; i++) {
      const server = SERVERS[i % SERVERS.length]!
      const answer = yield* call(i, server, "record", { id: `c${i}` })
      const runner = "error" in answer ? answer.error : runnerOf.get(answer.runner) ?? `pid ${answer.runner}`
      if (!("error" in answer)) placement.set(server, runner)
      console.log(`  gateway ${(i % 2) + 1} -> ${server}.record c${i}: ran on runner ${runner}`)
    }

    const victim = runners.find((runner) => runner.announced === placement.get("s1"))!
    console.log(`\nSIGKILL runner ${victim.announced} (hosting ${
      SERVERS.filter((server) => placement.get(server) === victim.announced).join(", ")
    }) while s1.record w1 and s1.lookup r1 run on it`)
    const inFlight = yield* Effect.fork(Effect.all([
      call(0, "s1", "record", { id: "w1", ms: 3000 }),
      call(1, "s1", "lookup", { id: "r1", ms: 3000 })
    ], { concurrency: 2 }))
    while (runsById(dir).get("w1") === undefined || runsById(dir).get("r1") === undefined) {
      yield* Effect.sleep("20 millis")
    }
    const killedAt = performance.now()
    victim.child.kill("SIGKILL")
    const [write, read] = yield* inFlight.await.pipe(Effect.flatten)
    console.log(`  s1.record w1: ${"error" in write ? write.error : "answered"}`)
    console.log(
      `  s1.lookup r1: ${"error" in read ? read.error : `retried, answered by runner ${runnerOf.get(read.runner)}`}`
    )
    // Every server answers again, from the runners left.
    for (const server of SERVERS) {
      const answer = yield* answered(server, `after-${server}`)
      console.log(`  ${server} now on runner ${runnerOf.get(answer.runner)}`)
    }
    console.log(
      `  every server answering again ${Math.round(performance.now() - killedAt)} ms after the kill ` +
        "(the retried 3 s lookup first)"
    )
    const runs = runsById(dir)
    console.log(`  the servers' ledger: w1 ran ${runs.get("w1")}x, r1 ran ${runs.get("r1")}x`)
  }).pipe(Effect.scoped, Effect.provide(NodeFleet.layer))

await session(false, async ({ cli, dir, started, url }) => {
  await Effect.runPromise(demo(cli, url, dir, started))
})
console.log("\nevery process ended")
