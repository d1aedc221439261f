/**
 * `npm run bench`: tool calls per second over stdio for mcp-fleet's McpClient, next to a
 * bare Node client (the physical limit) and the official MCP SDK client, all against the
 * same echo fixture server. Each client runs as its own child process, once per cell and
 * repetition, in rotating order; the table shows the median repetition of each cell and
 * the median ratio to bare of the same repetition.
 *
 *   npm run bench [-- --quick] [-- --reps N] [-- --clients bare,sdk] [-- --strict]
 *
 * `--strict` exits 1 when a target is not met (including n/a).
 *
 * @module
 */
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import type { BenchResult } from "./clients/shared.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const serverScript = fileURLToPath(new URL("./fixtures/echo-server.mjs", import.meta.url))

/** A client under test: its name in the table and its entry file. */
interface ClientSpec {
  readonly name: string
  readonly file: string
}

const CLIENTS: ReadonlyArray<ClientSpec> = [
  { name: "bare", file: "bench/clients/bare.ts" },
  { name: "sdk", file: "bench/clients/sdk.ts" },
  { name: "mcp-fleet", file: "bench/client.ts" }
]

/** One cell of the matrix. */
interface Cell {
  readonly concurrency: number
  readonly payloadBytes: number
  readonly calls: number
}

const MiB = 1024 * 1024

// ---- flags ------------------------------------------------------------------------------

const argv = process.argv.slice(2)
const flagValue = (name: string): string | undefined => {
  const i = argv.indexOf(name)
  return i === -1 ? undefined : argv[i + 1]
}
const quick = argv.includes("--quick")
const strict = argv.includes("--strict")
const reps = Math.max(1, Number(flagValue("--reps") ?? (quick ? 1 : 3)) || 1)
const only = flagValue("--clients")?.split(",")
const clients = only === undefined ? CLIENTS : CLIENTS.filter((c) => only.includes(c.name))
const TIMEOUT_MS = 60_000

const cells: ReadonlyArray<Cell> = [
  { concurrency: 1, payloadBytes: 16, calls: quick ? 3000 : 20000 },
  { concurrency: 64, payloadBytes: 16, calls: quick ? 10000 : 50000 },
  { concurrency: 1, payloadBytes: MiB, calls: quick ? 40 : 150 },
  { concurrency: 64, payloadBytes: MiB, calls: quick ? 64 : 192 }
]

/** A pass/fail line: mcp-fleet ≥ `min` × bare in `cell`. */
interface Target {
  readonly label: string
  readonly min: number
  readonly cell: Cell
}

const targets: ReadonlyArray<Target> = [
  { label: "c=1, 16 B", min: 0.8, cell: cells[0]! },
  { label: "c=64, 16 B", min: 0.6, cell: cells[1]! },
  { label: "c=1, 1 MiB", min: 0.95, cell: cells[2]! },
  { label: "c=64, 1 MiB", min: 0.95, cell: cells[3]! }
]

// ---- running one client -----------------------------------------------------------------

/** What one child run gave: a result, or the first line of its error. */
type Outcome =
  | { readonly _tag: "ok"; readonly result: BenchResult; readonly notes: ReadonlyArray<string> }
  | { readonly _tag: "error"; readonly message: string }

let current: number | undefined // the process group of the running child, if any
let runCounter = 0

const killGroup = (pgid: number): void => {
  try {
    process.kill(-pgid, "SIGKILL")
  } catch {
    // already gone
  }
}

// Never leave a child behind, even on Ctrl-C.
process.on("exit", () => current !== undefined && killGroup(current))
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (current !== undefined) killGroup(current)
    process.exit(130)
  })
}

/** PIDs whose command line contains `tag` (Linux /proc; empty elsewhere). */
const processesTagged = (tag: string): Array<number> => {
  let entries: Array<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return []
  }
  const found: Array<number> = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(tag)) found.push(Number(entry))
    } catch {
      // exited meanwhile
    }
  }
  return found
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The telling line of a child's stderr: our own message or an error line, else the first line. */
const firstLine = (text: string): string => {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l.length > 0)
  const own = lines.find((l) => l.startsWith("bench client: "))
  if (own !== undefined) return own.slice("bench client: ".length)
  // Node prints an uncaught error after the source line it came from; skip to the error.
  const error = lines.find((l) => /^([A-Z][\w.]*)?(Error|Exception)(\s*\[[^\]]*\])?:/.test(l))
  // Drop "(node:PID) " so the same warning from several runs reads as one note.
  return (error ?? lines[0] ?? "").replace(/^\(node:\d+\) /, "")
}

const runClient = async (client: ClientSpec, cell: Cell): Promise<Outcome> => {
  // A unique tag in the server's argv lets us find a server the client left behind.
  const tag = `--bench-tag=${process.pid}-${++runCounter}`
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      client.file,
      "--calls",
      String(cell.calls),
      "--concurrency",
      String(cell.concurrency),
      "--payload",
      String(cell.payloadBytes)
    ],
    {
      cwd: root,
      env: { ...process.env, BENCH_STDIO_SERVER: JSON.stringify([process.execPath, serverScript, tag]) },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true // own process group, so a timeout can kill the client and its server
    }
  )
  current = child.pid
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s))
  child.stderr.setEncoding("utf8").on("data", (s: string) => {
    if (stderr.length < 64 * 1024) stderr += s
  })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    if (child.pid !== undefined) killGroup(child.pid)
  }, TIMEOUT_MS)
  const code = await new Promise<number | null>((resolve) => {
    child.on("error", (e) => {
      stderr += e.message
      resolve(-1)
    })
    child.on("close", (c) => resolve(c))
  })
  clearTimeout(timer)
  current = undefined

  const notes: Array<string> = []
  let leaked = processesTagged(tag)
  if (leaked.length > 0) {
    await sleep(500)
    leaked = processesTagged(tag)
    if (leaked.length > 0) {
      for (const pid of leaked) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // gone
        }
      }
      notes.push(`left ${leaked.length} server process(es) running after exit (killed)`)
    }
  }

  if (timedOut) return { _tag: "error", message: `timed out after ${TIMEOUT_MS / 1000} s` }
  if (code !== 0) return { _tag: "error", message: firstLine(stderr) || `exited with code ${code}` }
  const lines = stdout.split("\n").filter((l) => l.trim().length > 0)
  if (lines.length !== 1) return { _tag: "error", message: `expected one stdout line, got ${lines.length}` }
  let result: BenchResult
  try {
    result = JSON.parse(lines[0]!)
  } catch {
    return { _tag: "error", message: `result line is not JSON: ${lines[0]!.slice(0, 120)}` }
  }
  if (typeof result.callsPerSec !== "number" || result.calls !== cell.calls) {
    return { _tag: "error", message: `unexpected result line: ${lines[0]!.slice(0, 120)}` }
  }
  const warning = firstLine(stderr)
  if (warning !== "") notes.push(`stderr: ${warning}`)
  return { _tag: "ok", result, notes }
}

// ---- the matrix -------------------------------------------------------------------------

const payloadLabel = (bytes: number): string => (bytes >= MiB ? `${bytes / MiB} MiB` : `${bytes} B`)
const cellLabel = (cell: Cell): string => `c=${cell.concurrency}, ${payloadLabel(cell.payloadBytes)}`

/**
 * One client in one cell: its median repetition and its ratio to bare (the median of the
 * per-repetition ratios, so drift between repetitions cancels out), or why it has none.
 */
type Summary =
  | { readonly _tag: "ok"; readonly result: BenchResult; readonly ratio: number | undefined }
  | { readonly _tag: "error"; readonly message: string }

/** The median of some numbers (the lower middle one for an even count). */
const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!

const summaries = new Map<string, Summary>() // key: cellLabel + client name
const notes = new Set<string>()
const key = (cell: Cell, client: string) => `${cellLabel(cell)}|${client}`

const started = Date.now()
process.stderr.write(
  `mcp-fleet bench: ${cells.length} cells × ${clients.length} clients × ${reps} rep(s), node ${process.version}, ${availableParallelism()} cpus\n`
)
for (const cell of cells) {
  const results = new Map<string, Array<BenchResult | undefined>>() // indexed by repetition
  const failed = new Map<string, string>()
  for (let rep = 0; rep < reps; rep++) {
    // Rotate the order each repetition so drift and noise hit every client alike.
    const order = clients.map((_, i) => clients[(i + rep) % clients.length]!)
    const progress: Array<string> = []
    for (const client of order) {
      if (failed.has(client.name)) continue // a client that failed once is not retried in this cell
      const outcome = await runClient(client, cell)
      if (outcome._tag === "ok") {
        const runs = results.get(client.name) ?? []
        runs[rep] = outcome.result
        results.set(client.name, runs)
        for (const n of outcome.notes) notes.add(`${client.name}: ${n}`)
        progress.push(`${client.name} ${Math.round(outcome.result.callsPerSec)}/s`)
      } else {
        failed.set(client.name, outcome.message)
        progress.push(`${client.name} failed`)
      }
    }
    process.stderr.write(`  ${cellLabel(cell).padEnd(12)} rep ${rep + 1}/${reps}: ${progress.join(", ")}\n`)
  }
  for (const client of clients) {
    const byRep = results.get(client.name) ?? []
    const runs = byRep.filter((r): r is BenchResult => r !== undefined)
    if (runs.length === 0) {
      summaries.set(key(cell, client.name), { _tag: "error", message: failed.get(client.name) ?? "no run" })
      continue
    }
    const mid = median(runs.map((r) => r.callsPerSec))
    const bare = results.get("bare") ?? []
    const ratios = byRep.flatMap((r, rep) => (r !== undefined && bare[rep] !== undefined ? [r.callsPerSec / bare[rep]!.callsPerSec] : []))
    summaries.set(key(cell, client.name), {
      _tag: "ok",
      result: runs.find((r) => r.callsPerSec === mid)!,
      ratio: ratios.length === 0 ? undefined : median(ratios)
    })
    if (failed.has(client.name)) notes.add(`${client.name}: ${cellLabel(cell)}: a repetition failed: ${failed.get(client.name)}`)
  }
}

// ---- the table --------------------------------------------------------------------------

const fmt = (n: number): string => Math.round(n).toLocaleString("en-US")
const ratioTo = (cell: Cell, client: string): number | undefined => {
  const own = summaries.get(key(cell, client))
  return own?._tag === "ok" ? own.ratio : undefined
}

const header = ["cell", "client", "calls/s", "× bare", "p50 µs", "p99 µs", "connect ms", "rss MB"]
const rows: Array<Array<string>> = []
for (const cell of cells) {
  clients.forEach((client, i) => {
    const label = i === 0 ? cellLabel(cell) : ""
    const s = summaries.get(key(cell, client.name))!
    if (s._tag === "error") {
      rows.push([label, client.name, "n/a", "", s.message.slice(0, 100)])
      return
    }
    const r = s.result
    const ratio = ratioTo(cell, client.name)
    rows.push([
      label,
      client.name,
      fmt(r.callsPerSec),
      ratio === undefined ? "-" : ratio.toFixed(2),
      fmt(r.p50us),
      fmt(r.p99us),
      r.connectMs.toFixed(0),
      r.rssMB.toFixed(0)
    ])
  })
}
const widths = header.map((h, c) =>
  Math.max(h.length, ...rows.filter((r) => c < 2 || r.length === header.length).map((r) => r[c]!.length))
)
const line = (cols: ReadonlyArray<string>): string =>
  cols
    .map((col, c) => {
      if (cols.length !== header.length && c === cols.length - 1) return col // an error message runs on
      return c < 2 ? col.padEnd(widths[c]!) : col.padStart(widths[c]!)
    })
    .join("  ")
    .trimEnd()

const out: Array<string> = []
out.push("")
out.push(`tool calls over stdio against bench/fixtures/echo-server.mjs — median of ${reps} run(s) per cell`)
out.push(`node ${process.version}, ${availableParallelism()} cpus; × bare = median over repetitions of calls/s ÷ bare's in the same repetition`)
out.push("")
out.push(line(header))
for (const row of rows) {
  if (row[0] !== "" && out[out.length - 1] !== line(header)) out.push("")
  out.push(line(row))
}

// ---- targets ----------------------------------------------------------------------------

out.push("")
out.push("targets (mcp-fleet calls/s vs bare)")
let allPass = true
for (const t of targets) {
  const ratio = clients.some((c) => c.name === "mcp-fleet") ? ratioTo(t.cell, "mcp-fleet") : undefined
  const verdict = ratio === undefined ? "n/a " : ratio >= t.min ? "PASS" : "FAIL"
  if (verdict !== "PASS") allPass = false
  out.push(`  ${verdict}  ≥ ${t.min.toFixed(2)}× at ${t.label}${ratio === undefined ? "" : `  (${ratio.toFixed(2)}×)`}`)
}
if (notes.size > 0) {
  out.push("")
  out.push("notes")
  for (const n of notes) out.push(`  ${n}`)
}
out.push("")
out.push(`took ${((Date.now() - started) / 1000).toFixed(0)} s`)
process.stdout.write(out.join("\n") + "\n")
if (strict && !allPass) process.exitCode = 1
