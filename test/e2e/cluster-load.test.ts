// Failover under load, all real processes: three `mcp-fleet runner` processes and two gateway
// replicas (`mcp-fleet serve --http --cluster`) of the bundled CLI on a fresh PostgreSQL
// database; six MCP clients of the official SDK (three on each replica) call the ledger
// servers without pause, writes (`record`) and read-only lookups (`lookup`), each with its own
// call id. The runner hosting the most servers is SIGKILLed mid-run. Every call ends (with a
// result, or an error naming its server) within the hang bound; no call id runs twice but a
// read-only one in flight at the kill; every server is Ready again on a live runner and calls
// after that succeed; the dead runner's server processes end, and nothing is left at the end.
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { MARK, run, type Running, start } from "../support/cli.js"
import { ledger, LEDGER_SCRIPT, type RunnerProcess, startRunner, stopRunners } from "../support/cluster.js"
import { hangGuard } from "../support/guard.js"
import { type FreshDatabase, freshDatabase } from "../support/postgres.js"
import { survivors, waitGone } from "../support/processes.js"

const NAMES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
const RUN = `cluster-load-${process.pid}-${Date.now()}`
// How long a call may take before it counts as hung: past the gateway's own bound (ready
// timeout 30 s + request timeout 60 s), grown with the load.
const HUNG = hangGuard(95_000)

let db: FreshDatabase
let dir: string
let config: string
const runners: Array<RunnerProcess> = []
const gateways: Array<Running> = []

beforeAll(async () => {
  db = await freshDatabase()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-cluster-load-"))
  config = path.join(dir, "mcp.json")
  // The ledger servers carry the run's marker, so that a survivor of any of them is found.
  const servers = Object.fromEntries(NAMES.map((name) => [name, {
    command: process.execPath,
    args: [LEDGER_SCRIPT],
    env: { SERVER_NAME: name, LEDGER: path.join(dir, "ledger.txt"), [MARK]: RUN }
  }]))
  fs.writeFileSync(config, JSON.stringify({ mcpServers: servers }))
  // At level info, what a failure needs to be read: moves, retries, lost runners.
  const args = ["--log-level", "info"]
  for (let i = 0; i < 3; i++) runners.push(await startRunner({ url: db.url, config, cwd: dir, mark: RUN, args }))
  for (let i = 0; i < 2; i++) {
    gateways.push(start(["serve", "--http", "0", "--cluster", db.url, "--config", config, "--json", ...args], {
      cwd: dir,
      mark: RUN
    }))
  }
}, hangGuard(90_000))

afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.child.exitCode === null ? gateway.stop() : undefined))
  await stopRunners(runners)
  await db?.drop()
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
}, hangGuard(60_000))

interface Placed {
  readonly name: string
  readonly state: string
  readonly runner?: string
}

// `servers --cluster --json`, as a user would run it; empty while it says servers are not ready.
const placement = async (): Promise<Array<Placed>> => {
  const done = await run(["servers", "--cluster", db.url, "--config", config, "--json"], { cwd: dir, mark: RUN })
  if (done.code === 0) return JSON.parse(done.stdout) as Array<Placed>
  if ((done.stdout + done.stderr).includes("not ready")) return []
  throw new Error(`servers --cluster exited ${done.code}: ${done.stdout}${done.stderr}`)
}

// Polls `servers --cluster --json` until `ok` holds of it; fails with the last one seen.
const placementUntil = async (what: string, ok: (placed: Array<Placed>) => boolean, withinMs: number) => {
  const deadline = performance.now() + withinMs
  let last: Array<Placed> = []
  while (performance.now() < deadline) {
    last = await placement()
    if (ok(last)) return last
  }
  throw new Error(`${what}: still ${JSON.stringify(last)}`)
}

const allReady = (placed: Array<Placed>, live: ReadonlyArray<string>) =>
  NAMES.every((name) => {
    const server = placed.find((candidate) => candidate.name === name)
    return server?.state === "Ready" && server.runner !== undefined && live.includes(server.runner)
  })

/** One call a client made and how it ended. */
interface Outcome {
  readonly id: string
  readonly server: string
  readonly tool: "record" | "lookup"
  readonly startedAt: number
  endedAt?: number
  ok?: boolean
  text?: string
}

const connect = async (url: string, name: string) => {
  const client = new Client({ name, version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

// One call through the gateway: its outcome, a tool error or a JSON-RPC error alike.
const call = async (client: Client, outcome: Outcome, ms: number): Promise<Outcome> => {
  try {
    const result = await client.callTool(
      { name: `mcp__${outcome.server}__${outcome.tool}`, arguments: { id: outcome.id, ms } },
      undefined,
      { timeout: HUNG }
    )
    const text = (result.content as Array<{ text?: string }>)[0]?.text ?? ""
    outcome.ok = result.isError !== true
    outcome.text = text
  } catch (error) {
    outcome.ok = false
    outcome.text = `thrown: ${String((error as Error).message ?? error)}`
  }
  outcome.endedAt = performance.now()
  return outcome
}

describe("cluster under load", () => {
  it.live(
    "3 runners, 2 gateways, 6 clients; a runner SIGKILLed mid-run: every call ends, none runs twice",
    () =>
      Effect.promise(async () => {
        onTestFailed(() => {
          const tail = (text: string) => text.slice(-6000)
          for (const runner of runners) console.log(`runner ${runner.address}:\n${tail(runner.stderr())}`)
          for (const gateway of gateways) console.log(`gateway:\n${tail(gateway.stderr())}`)
          console.log(`ledger:\n${ledger(dir).map((line) => `${line.server} ${line.tool} ${line.id}`).join("\n")}`)
        })
        const urls = await Promise.all(
          gateways.map(async (gateway) =>
            JSON.parse(await gateway.line((line) => line.includes("\"url\""), "the URL")).url as string
          )
        )
        const addresses = runners.map((runner) => runner.address)
        // Ready, and settled: runners joining move shards, so wait for a placement that holds.
        let placed = await placementUntil("every server Ready", (now) => allReady(now, addresses), hangGuard(60_000))
        for (let stable = 0; stable < 3;) {
          const now = await placement()
          const same = JSON.stringify(now) === JSON.stringify(placed)
          stable = same && allReady(now, addresses) ? stable + 1 : 0
          placed = now
        }
        const clients = await Promise.all(
          [0, 1, 2, 3, 4, 5].map((i) => connect(urls[i % 2]!, `load-${i}`))
        )
        const outcomes: Array<Outcome> = []
        let stopping = false
        // Each client calls without pause, round the servers, a write then a lookup.
        const loops = clients.map(async (client, c) => {
          for (let n = 0; !stopping; n++) {
            const outcome: Outcome = {
              id: `c${c}-${n}`,
              server: NAMES[(c + n) % NAMES.length]!,
              tool: n % 2 === 0 ? "record" : "lookup",
              startedAt: performance.now()
            }
            outcomes.push(outcome)
            await call(client, outcome, 400)
          }
        })
        // The victim: the runner hosting the most servers.
        const count = (address: string) => placed.filter((server) => server.runner === address).length
        const victim = [...runners].sort((a, b) => count(b.address) - count(a.address))[0]!
        const moved = placed.filter((server) => server.runner === victim.address).map((server) => server.name)
        // Warm up: every client has had answers; then wait for calls running on the victim's
        // servers (in the ledger, not ended), a write among them.
        const running = () => {
          const ran = new Set(ledger(dir).map((line) => line.id))
          return outcomes.filter((o) => o.endedAt === undefined && moved.includes(o.server) && ran.has(o.id))
        }
        for (;;) {
          const warm = clients.every((_, c) => outcomes.filter((o) => o.id.startsWith(`c${c}-`) && o.ok).length >= 2)
          const now = running()
          if (warm && now.some((o) => o.tool === "record") && now.length >= 2) break
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        const children = ledger(dir).filter((line) => moved.includes(line.server)).map((line) => line.pid)
        const inFlight = new Set(running().map((o) => o.id))
        const killedAt = performance.now()
        victim.child.kill("SIGKILL")
        const live = addresses.filter((address) => address !== victim.address)
        await placementUntil("every server Ready on a live runner", (now) => allReady(now, live), hangGuard(60_000))
        const failoverMs = performance.now() - killedAt
        // More load after the recovery, then the end of every loop.
        const recovered = outcomes.length
        while (outcomes.length < recovered + 12) await new Promise((resolve) => setTimeout(resolve, 50))
        stopping = true
        await Promise.all(loops)

        const failed = outcomes.filter((o) => !o.ok)
        // As the clients saw it: from the kill to the first answer of each moved server.
        const answered = moved.map((server) =>
          Math.min(
            ...outcomes.filter((o) => o.server === server && o.ok && o.startedAt > killedAt).map((o) => o.endedAt!)
          )
        )
        console.log(
          `cluster-load: ${outcomes.length} calls, ${failed.length} failed, ${inFlight.size} in flight at the kill ` +
            `(victim ${victim.address} hosted ${moved.join(",")}); failover ${Math.round(failoverMs)} ms ` +
            `(servers --cluster), ${Math.round(Math.max(...answered) - killedAt)} ms (first answers)`
        )
        for (const o of failed) console.log(`  failed ${o.id} ${o.server}/${o.tool}: ${o.text}`)
        // None hung (the SDK's timeout is the hang bound).
        expect(failed.filter((o) => /timed out|Request timed out|-32001/.test(o.text ?? ""))).toEqual([])
        // Each failure names its server and is a write cut off on its runner, in doubt: one
        // running on the victim at the kill (or on a runner that gave its server up meanwhile).
        // A read-only call never fails: it runs again.
        for (const o of failed) {
          expect(o.text).toContain(`'${o.server}'`)
          expect({ id: o.id, tool: o.tool }).toEqual({ id: o.id, tool: "record" })
          expect(o.text).toMatch(/may have run/)
        }
        // No call id ran twice, but a read-only one in flight at the kill; every success ran.
        const runs = new Map<string, number>()
        for (const line of ledger(dir)) runs.set(line.id, (runs.get(line.id) ?? 0) + 1)
        const twice = [...runs].filter(([id, times]) =>
          times > 1 && !(inFlight.has(id) && outcomes.find((o) => o.id === id)?.tool === "lookup")
        )
        expect(twice).toEqual([])
        expect(outcomes.filter((o) => o.ok && !runs.has(o.id)).map((o) => o.id)).toEqual([])
        // After the recovery every client reaches every server.
        const after = await Promise.all(clients.flatMap((client, c) =>
          NAMES.map((server) =>
            call(client, { id: `after-${c}-${server}`, server, tool: "record", startedAt: performance.now() }, 0)
          )
        ))
        expect(after.filter((o) =>
          !o.ok
        )).toEqual([])
        // The dead runner's servers ended with it.
        const states = await Effect.runPromise(waitGone(children, hangGuard(10_000)))
        expect(Object.values(states).filter((state) => state === "alive")).toEqual([])
        // Nothing is left once the clients, gateways and runners stop.
        await Promise.all(clients.map((client) => client.close()))
        expect(await Promise.all(gateways.map((gateway) => gateway.stop()))).toEqual([0, 0])
        await stopRunners(runners)
        const pids = [...new Set(ledger(dir).map((line) => line.pid))]
        const ended = await Effect.runPromise(waitGone(pids, hangGuard(10_000)))
        expect(Object.values(ended).filter((state) => state === "alive")).toEqual([])
        expect(survivors(MARK, RUN)).toEqual([])
      }),
    hangGuard(300_000)
  )
})
