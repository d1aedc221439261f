// Every replica sees the whole fleet, and a config edit reconciles across the cluster: two
// runner processes of the bundled CLI follow one config file; two gateway replicas (this
// process, each its own ClusterRegistry layer) and `servers --cluster --json` show the same
// catalog and placement; `call --cluster` reaches a server on a runner; an edit that adds a
// server and removes another reaches them all.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as cp from "node:child_process"
import type { RegistryEvent } from "../../src/RegistryEvent.js"
import type * as ServerRegistry from "../../src/ServerRegistry.js"
import { CLI, cliEnv, MARK } from "../support/cli.js"
import { ledgerConfig, replica, type RunnerProcess, startCluster, type TestCluster } from "../support/cluster.js"
import { hangGuard } from "../support/guard.js"

let cluster: TestCluster
let db: TestCluster["db"]
let dir: string
let config: string
let runners: Array<RunnerProcess>

beforeAll(async () => {
  cluster = await startCluster(["a", "b", "c"], 2, "cluster-replicas")
  ;({ config, db, dir, runners } = cluster)
}, hangGuard(60_000))

afterAll(() => cluster?.stop(), hangGuard(30_000))

const toolNames = (registry: ServerRegistry.ServerRegistry) =>
  Effect.map(registry.catalog.get, (catalog) => catalog.tools.map((tool) => tool.name).sort())

const until = <A>(effect: Effect.Effect<A>, done: (value: A) => boolean) =>
  effect.pipe(
    Effect.repeat({ until: done, schedule: Schedule.spaced("50 millis") }),
    Effect.timeout(hangGuard(20_000))
  )

// What a one-shot CLI command printed on stdout; it must exit by itself, with code 0, once
// done (a PostgreSQL connection still opening when it ends must not hold it).
const printed = (args: ReadonlyArray<string>) =>
  new Promise<string>((resolve, reject) => {
    const child = cp.spawn(CLI[0], [...CLI.slice(1), ...args], {
      cwd: dir,
      env: { ...process.env, ...cliEnv(), [MARK]: "cluster-replicas", NO_COLOR: "1" },
      stdio: "pipe"
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout += chunk)
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk)
    child.on("exit", (code) => code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}`)))
    child.on("error", reject)
  })

describe("cluster replicas", () => {
  it.scopedLive(
    "every replica serves the whole catalog; a config edit reaches every one",
    () =>
      Effect.gen(function*() {
        const [one, two] = [yield* replica(db.url), yield* replica(db.url)]
        yield* one.awaitReady({ servers: ["a", "b", "c"], timeout: "30 seconds" })
        yield* two.awaitReady({ servers: ["a", "b", "c"], timeout: "30 seconds" })
        const expected = ["a", "b", "c"].flatMap((name) => [`mcp__${name}__lookup`, `mcp__${name}__record`]).sort()
        expect(yield* toolNames(one)).toEqual(expected)
        expect(yield* toolNames(two)).toEqual(expected)
        // The CLI as a replica: each server and the runner hosting it.
        const shown = yield* Effect.promise(() =>
          printed(["servers", "--cluster", db.url, "--config", config, "--json"])
        )
        const listed = JSON.parse(shown) as Array<{ name: string; state: string; runner: string }>
        expect(listed.map((server) => server.name)).toEqual(["a", "b", "c"])
        const addresses = runners.map((runner) => runner.address)
        for (const server of listed) {
          expect(server.state).toBe("Ready")
          expect(addresses).toContain(server.runner)
        }
        // A call from the CLI as a replica, to whichever runner hosts the server.
        const called = JSON.parse(
          yield* Effect.promise(() =>
            printed(["call", "mcp__b__record", "{\"id\":\"cli\"}", "--cluster", db.url, "--config", config, "--json"])
          )
        ) as { content: Array<{ text: string }> }
        expect(JSON.parse(called.content[0]!.text)).toMatchObject({ server: "b", id: "cli" })
        // A call from either replica.
        yield* one.callTool("mcp__a__record", { id: "one" })
        yield* two.callTool("mcp__c__record", { id: "two" })
        // The edit: d added, a removed; both runners follow the file.
        const events = yield* two.subscribe
        ledgerConfig(dir, ["b", "c", "d"])
        const after = ["b", "c", "d"].flatMap((name) => [`mcp__${name}__lookup`, `mcp__${name}__record`]).sort()
        yield* until(toolNames(one), (names) => JSON.stringify(names) === JSON.stringify(after))
        yield* until(toolNames(two), (names) => JSON.stringify(names) === JSON.stringify(after))
        expect((yield* two.status).map((status) => status.name)).toEqual(["b", "c", "d"])
        // The replica told its clients: d's tools came, a's went.
        const told: ReadonlyArray<RegistryEvent> = [...(yield* Queue.takeAll(events))]
        const toolChanges = told.filter((event) => event._tag === "ToolsChanged")
        expect(toolChanges.map((event) => event.server).sort()).toEqual(["a", "d"])
        const result = yield* one.callTool("mcp__d__record", { id: "d1" })
        expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({ server: "d", id: "d1" })
      }),
    hangGuard(120_000)
  )
})
