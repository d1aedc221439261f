/**
 * `npm run bench:fleet`: what running a fleet costs.
 *
 * 1. Fleet start: K = 20 and K = 100 stdio echo servers started at once until each is
 *    initialized with its tools listed, by mcp-fleet's ServerRegistry and by a bare Node
 *    baseline, each in its own process, alternating, median of the repetitions. Target:
 *    mcp-fleet ≤ 1.05 × bare time. Also what each server added to the client's memory
 *    (resident set, and JS heap after a full GC), next to bare's.
 * 2. Reconcile cost: fleets of N in-memory servers (N = 100 and 1,000); the time of a
 *    reconcile that changes nothing, and of one that changes one server, until that server
 *    is ready again. Target: proportional to the change, not to the fleet.
 *
 *   npm run bench:fleet [-- --reps N] [-- --quick]
 *
 * @module
 */
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { ServerRegistry, type ServerSpec } from "../src/index.js"
import { NodeFleet } from "../src/node/index.js"
import { FakeServer } from "../src/testing/index.js"

const argv = process.argv.slice(2)
const quick = argv.includes("--quick")
const reps = Number(argv[argv.indexOf("--reps") + 1]) || (quick ? 1 : 3)
const root = fileURLToPath(new URL("..", import.meta.url))

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

// Each side runs in a fresh process so its RSS is its own.
interface Side {
  readonly ms: number
  readonly rssMB: number
  /** What each server added: resident set and JS heap (after a full GC), KB. */
  readonly perServer: { readonly rssKB: number; readonly heapKB: number }
}
const runSide = (file: string, k: number): Side => {
  const out = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", file, String(k)], {
    cwd: root,
    encoding: "utf8"
  })
  return JSON.parse(out.trim().split("\n").at(-1)!)
}

// The medians of what each server added, "RSS / heap" in KB.
const perServerCell = (sides: ReadonlyArray<Side>): string =>
  `${median(sides.map((r) => r.perServer.rssKB))} / ${median(sides.map((r) => r.perServer.heapKB))}`

console.log("Fleet start: K stdio servers to Ready (initialize + tools/list), median of", reps)
console.log(
  "   K  bare ms  fleet ms  ratio  target  bare RSS MB  fleet RSS MB  per server KB: bare RSS/heap  fleet RSS/heap"
)
for (const k of quick ? [20] : [20, 100]) {
  const bare: Array<Side> = []
  const fleet: Array<Side> = []
  for (let rep = 0; rep < reps; rep++) {
    // Alternate who goes first, so a warm disk cache favours neither.
    const order = rep % 2 === 0 ? ["bare", "fleet"] : ["fleet", "bare"]
    for (const side of order) {
      if (side === "bare") bare.push(runSide("bench/fleet/bare-start.ts", k))
      else fleet.push(runSide("bench/fleet/fleet-start.ts", k))
    }
  }
  const ratios = bare.map((b, i) => fleet[i]!.ms / b.ms)
  const ratio = median(ratios)
  console.log(
    `${String(k).padStart(4)}  ${median(bare.map((r) => r.ms)).toFixed(0).padStart(7)}  ${
      median(fleet.map((r) => r.ms)).toFixed(0).padStart(8)
    }  ${ratio.toFixed(2).padStart(5)}  ${ratio <= 1.05 ? "PASS" : "FAIL"}    ${
      median(bare.map((r) => r.rssMB)).toFixed(0).padStart(9)
    }  ${median(fleet.map((r) => r.rssMB)).toFixed(0).padStart(12)}  ${perServerCell(bare).padStart(28)}  ${
      perServerCell(fleet).padStart(14)
    }`
  )
}

const fake = (name: string, key: string): ServerSpec.ServerSpec => ({
  name,
  transport: {
    type: "custom",
    key,
    connect: Effect.map(
      FakeServer.make({
        name,
        tools: [{
          tool: { name: "echo", inputSchema: { type: "object" } },
          call: () => Effect.succeed({ content: [] })
        }]
      }),
      (server) => server.transport
    )
  }
})

const reconcileCost = (n: number) =>
  Effect.gen(function*() {
    const specs = Array.from({ length: n }, (_, i) => fake(`s${i}`, "v1"))
    const fleet = yield* ServerRegistry.make()
    let t = performance.now()
    yield* fleet.reconcile(specs)
    yield* fleet.awaitReady({ servers: specs.map((spec) => spec.name), timeout: "120 seconds" })
    const startMs = performance.now() - t
    const noChange: Array<number> = []
    const oneChange: Array<number> = []
    for (let rep = 0; rep < 5; rep++) {
      t = performance.now()
      yield* fleet.reconcile(specs)
      noChange.push(performance.now() - t)
      const changed = specs.map((spec, i) => i === n / 2 ? fake(spec.name, `v${rep + 2}`) : spec)
      t = performance.now()
      const result = yield* fleet.reconcile(changed)
      yield* fleet.awaitReady({ servers: [specs[n / 2]!.name], timeout: "10 seconds" })
      oneChange.push(performance.now() - t)
      if (result.restarted.length !== 1) throw new Error(`expected one restart, got ${result.restarted.length}`)
      specs[n / 2] = changed[n / 2]!
    }
    return { n, startMs, noChange: median(noChange), oneChange: median(oneChange) }
  }).pipe(Effect.scoped, Effect.provide(NodeFleet.layer))

console.log("\nReconcile cost with in-memory servers (median of 5)")
console.log("      N  start all ms  no change ms  one change ms (to Ready)")
for (const n of [100, 1000]) {
  const r = await Effect.runPromise(reconcileCost(n))
  console.log(
    `${String(n).padStart(7)}  ${r.startMs.toFixed(0).padStart(12)}  ${r.noChange.toFixed(2).padStart(12)}  ${
      r.oneChange.toFixed(2).padStart(13)
    }`
  )
}
