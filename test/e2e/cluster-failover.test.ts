// Failover on a real cluster: three runner processes of the bundled CLI and a gateway replica
// (this process) on a fresh PostgreSQL database. Each server runs on exactly one runner; when
// one is SIGKILLed its servers are Ready on the others within seconds, its server processes
// end, a call it had accepted never runs twice (each call id is a line of the ledger), and a
// read-only call is retried on the new runner.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schedule from "effect/Schedule"
import * as fs from "node:fs"
import type * as ServerRegistry from "../../src/ServerRegistry.js"
import { ledger, replica, type RunnerProcess, startCluster, type TestCluster } from "../support/cluster.js"
import { hangGuard } from "../support/guard.js"
import { waitGone } from "../support/processes.js"

const NAMES = ["s1", "s2", "s3", "s4", "s5", "s6"]
let cluster: TestCluster
let db: TestCluster["db"]
let dir: string
let runners: Array<RunnerProcess>

beforeAll(async () => {
  cluster = await startCluster(NAMES, 3, "cluster-failover")
  ;({ db, dir, runners } = cluster)
}, hangGuard(60_000))

afterAll(() => cluster?.stop(), hangGuard(30_000))

const gateway = Effect.suspend(() => replica(db.url))

const placement = (registry: ServerRegistry.ServerRegistry) =>
  Effect.map(registry.status, (statuses) => new Map(statuses.map((status) => [status.name, status])))

// The pids from `pid` up to init, read from /proc (a stdio server may sit under a wrapper).
const ancestors = (pid: number): Array<number> => {
  const chain: Array<number> = []
  for (let current = pid; current > 1;) {
    chain.push(current)
    const stat = fs.readFileSync(`/proc/${current}/stat`, "utf8")
    current = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  }
  return chain
}

const settled = (registry: ServerRegistry.ServerRegistry) =>
  Effect.gen(function*() {
    let last = ""
    let since = performance.now()
    for (;;) {
      const now = yield* placement(registry)
      const key = NAMES.map((name) => `${now.get(name)?.state._tag}@${now.get(name)?.runner}`).join(",")
      if (key !== last) [last, since] = [key, performance.now()]
      else if (!key.includes("undefined") && !/(Pending|Connecting)/.test(key) && performance.now() - since > 2000) {
        return
      }
      yield* Effect.sleep("100 millis")
    }
  })

const text = (result: { readonly content: ReadonlyArray<unknown> }) =>
  JSON.parse((result.content[0] as { text: string }).text) as { runner: number; pid: number }

describe("cluster failover", () => {
  it.scopedLive(
    "each server on one runner; a SIGKILLed runner's servers move, no call runs twice",
    () =>
      Effect.gen(function*() {
        const registry = yield* gateway
        yield* registry.awaitReady({ servers: NAMES, timeout: "60 seconds" })
        // Runners joining move shards (a rebalance): wait until the placement holds for 2 s.
        yield* settled(registry)
        // Placement: each server on exactly one runner, the one whose process is its parent.
        const placed = yield* placement(registry)
        const pidOf = new Map(runners.map((runner) => [runner.address, runner.child.pid]))
        for (const name of NAMES) {
          const hosting = placed.get(name)!.runner!
          expect(pidOf.has(hosting)).toBe(true)
          const answer = text(yield* registry.callServerTool(name, "lookup", { id: `p-${name}` }))
          expect(ancestors(answer.pid)).toContain(pidOf.get(hosting))
        }
        // The victim: the runner hosting s1; its server processes are to end with it.
        const victim = runners.find((runner) => runner.address === placed.get("s1")!.runner)!
        const moved = NAMES.filter((name) => placed.get(name)!.runner === victim.address)
        const children = ledger(dir).filter((line) => moved.includes(line.server)).map((line) => line.pid)
        // In flight when it dies: a write (not idempotent) and a read-only lookup on s1, and a
        // write on a server elsewhere, untouched.
        const other = NAMES.find((name) => !moved.includes(name))
        const calls = [
          registry.callServerTool("s1", "record", { id: "w-1", ms: 3000 }),
          registry.callServerTool("s1", "lookup", { id: "r-1", ms: 3000 }),
          ...(other === undefined ? [] : [registry.callServerTool(other, "record", { id: "w-other", ms: 500 })])
        ].map((call) => Effect.either(call))
        const running = yield* Effect.forkScoped(Effect.all(calls, { concurrency: "unbounded" }))
        yield* Effect.sync(() => ledger(dir).filter((line) => line.id === "w-1" || line.id === "r-1").length).pipe(
          Effect.repeat({ until: (count) => count === 2, schedule: Schedule.spaced("20 millis") })
        )
        const killedAt = performance.now()
        victim.child.kill("SIGKILL")
        // Ready elsewhere.
        yield* Effect.gen(function*() {
          const now = yield* placement(registry)
          return NAMES.every((name) =>
            now.get(name)!.state._tag === "Ready" && now.get(name)!.runner !== victim.address
          )
        }).pipe(Effect.repeat({ until: (ok) => ok, schedule: Schedule.spaced("50 millis") }))
        const failoverMs = performance.now() - killedAt
        console.log(`failover: kill -> every server Ready elsewhere in ${Math.round(failoverMs)} ms`)
        expect(failoverMs).toBeLessThan(hangGuard(15_000))
        const [write, read, elsewhere] = yield* Effect.fromFiber(running)
        // The write may have run: it fails, naming its server, and is not run again.
        expect(Either.isLeft(write!)).toBe(true)
        const error = Either.getLeft(write!).pipe((option) => option._tag === "Some" ? option.value : undefined)!
        expect(error.server).toBe("s1")
        expect(error.reason._tag).toBe("InDoubt")
        expect(error.message).toMatch(/may have run/)
        expect(error.message).toContain(victim.address)
        // The read-only lookup ran again on the new runner and answered.
        expect(Either.isRight(read!)).toBe(true)
        if (elsewhere !== undefined) expect(Either.isRight(elsewhere)).toBe(true)
        const lines = ledger(dir)
        expect(lines.filter((line) => line.id === "w-1")).toHaveLength(1)
        expect(lines.filter((line) => line.id === "r-1")).toHaveLength(2)
        // Every call id but the retried lookup ran exactly once.
        const counts = new Map<string, number>()
        for (const line of lines) counts.set(line.id, (counts.get(line.id) ?? 0) + 1)
        expect([...counts].filter(([id, count]) => id !== "r-1" && count !== 1)).toEqual([])
        // The dead runner's servers ended with it (the guardian).
        const states = yield* waitGone(children, hangGuard(5_000))
        expect(Object.values(states).filter((state) => state === "alive")).toEqual([])
        // A new call to s1 runs on a live runner.
        const after = text(yield* registry.callServerTool("s1", "record", { id: "w-2" }))
        expect(ancestors(after.pid)).not.toContain(victim.child.pid)
      }),
    hangGuard(120_000)
  )
})
