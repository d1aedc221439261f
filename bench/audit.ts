/**
 * `npm run bench:audit`: what the audit log's hash chain costs a call, and how fast a log is
 * verified.
 *
 * - **writer**: 64 fibers write entries through the auditor (`internal/policy/audit.ts`) to an
 *   in-memory file (no I/O, so the figure is the writer's own CPU), against `plain`: the same
 *   writer with `chain: false` (plain JSON lines, batched alike). CPU µs/call is the minimum
 *   over repetitions (load on the machine only ever adds); the chain's cost is the difference.
 * - **file**: the chained writer on a real file, 1,000,000 entries at c=64 (which also makes
 *   the log verified next).
 * - **verify**: `mcp-fleet audit verify`'s reader and Verifier over that file.
 *
 *   npm run bench:audit [-- --calls 200000] [-- --reps 5] [-- --lines 1000000]
 *
 * @module
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { verifyFile } from "../src/cli/commands/audit.js"
import { digestArguments, makeAuditor } from "../src/internal/policy/audit.js"
import type * as Policy from "../src/Policy.js"

const argv = process.argv.slice(2)
const flag = (name: string, fallback: number): number => {
  const i = argv.indexOf(name)
  return i === -1 ? fallback : Number(argv[i + 1])
}
const calls = flag("--calls", 200_000)
const reps = flag("--reps", 5)
const lines = flag("--lines", 1_000_000)
const CONCURRENCY = 64

const entry = (i: number): Policy.AuditEntry => ({
  time: new Date(1_700_000_000_000 + i).toISOString(),
  server: "memory",
  tool: "read_graph",
  name: "mcp__memory__read_graph",
  argsDigest: digestArguments({ i }),
  durationMs: 3,
  outcome: "ok",
  resultBytes: 120
})
const entries = Array.from({ length: CONCURRENCY }, (_, i) => entry(i))

// A file in memory: writes only add to its size, and end on the next turn of the event loop,
// as a write to a disk does (so calls made meanwhile queue up for the next batch).
const memoryFile = () => {
  let size = 0
  const later = Effect.async<void>((resume) => void setImmediate(() => resume(Effect.void)))
  return FileSystem.makeNoop({
    exists: () => Effect.succeed(size > 0),
    stat: () => Effect.succeed({ size: FileSystem.Size(size) } as FileSystem.File.Info),
    writeFile: (_path, bytes) => Effect.zipRight(later, Effect.sync(() => void (size += bytes.length)))
  })
}

type Write = (entry: Policy.AuditEntry) => Effect.Effect<void>

// `count` writes by 64 fibers; CPU µs per write (the machine's load adds no CPU time).
const timed = (write: Write, count: number) =>
  Effect.gen(function*() {
    const start = process.cpuUsage()
    yield* Effect.forEach(
      entries,
      (one) => Effect.repeatN(write(one), Math.ceil(count / CONCURRENCY) - 1),
      { concurrency: CONCURRENCY, discard: true }
    )
    const used = process.cpuUsage(start)
    return (used.user + used.system) / count
  })

const writer = (files: FileSystem.FileSystem, config: Policy.Config, chain = true) =>
  Effect.map(
    makeAuditor(Option.none(), Option.some(files), { chain }),
    (auditor): Write => (one) => auditor.write(one, config)
  )

const writerRow = (name: string, make: Effect.Effect<Write, never, Scope.Scope>) =>
  Effect.gen(function*() {
    let best = Infinity
    for (let rep = 0; rep < reps; rep++) {
      best = Math.min(best, yield* Effect.scoped(Effect.flatMap(make, (write) => timed(write, calls))))
    }
    return { name, best }
  })

const program = Effect.gen(function*() {
  const rows = [
    yield* writerRow("plain", Effect.suspend(() => writer(memoryFile(), { audit: "audit.jsonl" }, false))),
    yield* writerRow("chained", Effect.suspend(() => writer(memoryFile(), { audit: "audit.jsonl" })))
  ]
  console.log(`writer, c=${CONCURRENCY}, ${calls} calls, best of ${reps} (in-memory file):`)
  for (const row of rows) console.log(`  ${row.name.padEnd(8)} ${row.best.toFixed(2)} µs/call`)
  console.log(`  chain    ${(rows[1]!.best - rows[0]!.best).toFixed(2)} µs/call`)

  const dir = mkdtempSync(path.join(tmpdir(), "mcp-fleet-bench-audit-"))
  const file = path.join(dir, "audit.jsonl")
  const real = yield* Effect.scoped(
    Effect.flatMap(writer(yield* FileSystem.FileSystem, { audit: file }), (write) => timed(write, lines))
  )
  console.log(
    `file: ${lines} entries at c=${CONCURRENCY}, ${real.toFixed(2)} µs/call, ${
      (statSync(file).size / 2 ** 20).toFixed(0)
    } MiB`
  )
  const start = performance.now()
  const cpu = process.cpuUsage()
  const report = yield* Effect.orDie(verifyFile(file, {}))
  const seconds = (performance.now() - start) / 1000
  const used = process.cpuUsage(cpu)
  console.log(
    `verify: ${report.lines} lines in ${seconds.toFixed(2)} s (${
      ((used.user + used.system) / 1e6).toFixed(2)
    } s CPU), ${report.problems.length} problems`
  )
  rmSync(dir, { recursive: true, force: true })
})

Effect.runPromise(Effect.provide(program, NodeFileSystem.layer))
