/**
 * `npm run bench`: tool calls per second for mcp-fleet's McpClient, next to a bare Node
 * client (the physical limit) and the official MCP SDK client, all against the same echo
 * fixture server. Each client runs as its own child process, once per cell and repetition,
 * in rotating order; the table shows the median repetition of each cell and the median
 * ratio to bare of the same repetition.
 *
 * Over stdio by default: each client spawns its own `fixtures/echo-server.mjs`. With
 * `--http` (`npm run bench:http`), over Streamable HTTP instead: the runner starts
 * `fixtures/echo-http-server.mjs` once per answer mode (JSON, then SSE), runs the matrix
 * against it with `--url`, and stops it. Over HTTP it also measures the gateway's overhead
 * and mcp-fleet's servers (McpServer, the gateway) serving 2026-07-28 statelessly beside the
 * stateful revisions, to our McpClient and the official SDK v2 client in each revision.
 *
 *   npm run bench [-- --http] [-- --quick] [-- --reps N] [-- --clients bare,sdk] [-- --strict]
 *   npm run bench:http -- --only stateless   # just the 2026-07-28 section (and the bare baseline it needs)
 *
 * `--strict` exits 1 when a target is not met (including n/a).
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
// @ts-expect-error: a plain .mjs script, without type declarations
import { bundleCli } from "../scripts/bundle-cli.mjs"
import { bundle, type Setup } from "./bundle.js"
import type { BenchResult } from "./clients/shared.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const stdioServerScript = fileURLToPath(new URL("./fixtures/echo-server.mjs", import.meta.url))
/** util-linux's setsid, where there is one: it runs a program in a session of its own. */
const setsid = ["/usr/bin/setsid", "/bin/setsid"].find((file) => existsSync(file))
const httpServerScript = fileURLToPath(new URL("./fixtures/echo-http-server.mjs", import.meta.url))

/**
 * A client under test: its name in the table, what `--clients` calls it, its entry file and
 * how it is bundled (`bundle.ts`).
 */
interface ClientSpec {
  readonly name: string
  readonly base: string
  readonly file: string
  readonly setup: Setup
}

const spec = (base: string, file: string, setup: Setup): ClientSpec => ({
  name: setup === "external" ? base : `${base} bundled`,
  base,
  file,
  setup
})

/**
 * The SDK and mcp-fleet in each setup, side by side in one run. Bare imports no package, so
 * its two setups are one program: it runs once.
 */
const CLIENTS: ReadonlyArray<ClientSpec> = [
  spec("bare", "bench/clients/bare.ts", "external"),
  spec("sdk", "bench/clients/sdk.ts", "external"),
  spec("mcp-fleet", "bench/client.ts", "external"),
  spec("sdk", "bench/clients/sdk.ts", "bundled"),
  spec("mcp-fleet", "bench/client.ts", "bundled")
]

/** The official SDK v2 client, which speaks 2026-07-28 too: only in the stateless section (`--http`). */
const SDK_V2: ClientSpec = spec("sdk-v2", "bench/clients/sdk2.ts", "external")

/** mcp-fleet's own McpServer serving the echo tool over HTTP, for the stateless section. */
const MCP_SERVER_ECHO: ClientSpec = spec("mcpserver-echo", "bench/fixtures/mcpserver-echo.ts", "external")

/** One cell of the matrix. */
interface Cell {
  readonly concurrency: number
  readonly payloadBytes: number
  readonly calls: number
  /** Calls made and checked before the timed ones, so that every client runs warm. */
  readonly warmup: number
}

/** A pass/fail line about mcp-fleet in `cell`: ≥ `min` × bare's calls/s. */
interface Target {
  readonly min: number
  readonly cell: Cell
}

/** How a client reaches the server: extra flags and environment for its process. */
interface Reach {
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  /** A string in the argv of any server the client spawns, to find one it leaves behind. */
  readonly tag: string | undefined
}

/** One matrix: a table with its targets. */
interface Section {
  /** The table's first line. */
  readonly title: string
  /** Prefixes the progress lines (e.g. "json"). */
  readonly label: string
  readonly cells: ReadonlyArray<Cell>
  readonly targets: ReadonlyArray<Target>
  /** Flags and environment for run number `n` (unique over the whole run) of `client`. */
  readonly reach: (n: number, client: ClientSpec) => Reach
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
const http = argv.includes("--http")
const reps = Math.max(1, Number(flagValue("--reps") ?? (quick ? 1 : 3)) || 1)
const only = flagValue("--clients")?.split(",")
// `--setup external|bundled`: one setup only; both by default, side by side.
const setupFlag = flagValue("--setup")
if (setupFlag !== undefined && setupFlag !== "external" && setupFlag !== "bundled") {
  process.stderr.write(`--setup takes external or bundled, got ${JSON.stringify(setupFlag)}\n`)
  process.exit(2)
}
// `--only stateless` (with --http): the 2026-07-28 section alone, without the matrices before it.
const statelessOnly = flagValue("--only") === "stateless"
const clients = CLIENTS.filter((c) =>
  (only === undefined || only.includes(c.base)) &&
  (setupFlag === undefined || c.base === "bare" || c.setup === setupFlag)
)
const TIMEOUT_MS = 60_000

// ---- bundles ----------------------------------------------------------------------------

// Every client runs as one bundle (`bundle.ts`). The gateway runs the CLI's own bundle
// (`npm run build`'s bin). Each run bundles into a folder of its own (under node_modules, so
// the bundles find their packages), removed when it exits: two runs at once never load each
// other's bundles.
const BUNDLES = path.join(root, `node_modules/.cache/mcp-fleet-bench-${process.pid}`)
process.on("exit", () => rmSync(BUNDLES, { recursive: true, force: true }))

/** The bundle of `client`, written by `bundleAll`. */
const bundled = (c: ClientSpec): string => path.join(BUNDLES, c.name.replace(/\W+/g, "-"), "main.mjs")

const bundleAll = async (): Promise<void> => {
  for (const each of [...CLIENTS, SDK_V2, MCP_SERVER_ECHO]) {
    await bundle(root, each.file, path.dirname(bundled(each)), each.setup)
  }
  await bundleCli(path.join(BUNDLES, "cli"))
}

// ---- processes --------------------------------------------------------------------------

/** What one child run gave: a result, or the first line of its error. */
type Outcome =
  | { readonly _tag: "ok"; readonly result: BenchResult; readonly notes: ReadonlyArray<string> }
  | { readonly _tag: "error"; readonly message: string }

let currentClient: number | undefined // the process group of the running client, if any
let currentServer: ChildProcess | undefined // the HTTP server the runner started, if any
let runCounter = 0

const killGroup = (pgid: number): void => {
  try {
    process.kill(-pgid, "SIGKILL")
  } catch {
    // already gone
  }
}

const killPid = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(pid, signal)
  } catch {
    // already gone
  }
}

// Never leave a child behind, even on Ctrl-C.
const killAll = () => {
  if (currentClient !== undefined) killGroup(currentClient)
  if (currentServer?.pid !== undefined && currentServer.exitCode === null && currentServer.signalCode === null) {
    killPid(currentServer.pid, "SIGKILL")
  }
}
process.on("exit", killAll)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    killAll()
    process.exit(130)
  })
}

/** The processes of /proc (Linux; empty elsewhere): pid, process group, command line. */
const processes = (): Array<{ readonly pid: number; readonly pgid: number; readonly cmd: string }> => {
  let entries: Array<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return []
  }
  const found: Array<{ pid: number; pgid: number; cmd: string }> = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (fields[0] === "Z") continue // a zombie is already gone; only its reaper is late
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim()
      found.push({ pid: Number(entry), pgid: Number(fields[2]), cmd })
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

/** Runs one client process for one cell (or with other `--calls` etc. in `cell`) and checks what it left. */
const runClient = async (client: ClientSpec, cell: Cell, reach: Reach): Promise<Outcome> => {
  const child = spawn(
    process.execPath,
    [
      bundled(client),
      "--calls",
      String(cell.calls),
      "--concurrency",
      String(cell.concurrency),
      "--payload",
      String(cell.payloadBytes),
      "--warmup",
      String(cell.warmup),
      ...reach.args
    ],
    {
      cwd: root,
      env: { ...process.env, ...reach.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true // own process group, so a timeout can kill the client and its server
    }
  )
  currentClient = child.pid
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
  currentClient = undefined

  // Anything the client left running: a tagged server anywhere, or a process in its group.
  const leftovers = () =>
    processes().filter((p) => (reach.tag !== undefined && p.cmd.includes(reach.tag)) || p.pgid === child.pid)
  const notes: Array<string> = []
  if (leftovers().length > 0) {
    await sleep(500)
    const left = leftovers()
    for (const p of left) killPid(p.pid, "SIGKILL")
    if (left.length > 0) {
      const what = left.map((p) => JSON.stringify(p.cmd.slice(0, 80))).join(", ")
      notes.push(`left ${left.length} process(es) running after exit (killed): ${what}`)
    }
  }

  if (timedOut) return { _tag: "error", message: `timed out after ${TIMEOUT_MS / 1000} s` }
  if (code !== 0) return { _tag: "error", message: firstLine(stderr) || `exited with code ${code}` }
  const lines = stdout.split("\n").filter((l) => l.trim().length > 0)
  if (lines.length !== 1) {
    const stray = lines.find((l) => !l.startsWith(`{"client":`)) ?? lines[0] ?? ""
    return {
      _tag: "error",
      message: `expected one stdout line, got ${lines.length}${stray === "" ? "" : `: ${stray.slice(0, 80)}`}`
    }
  }
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

// ---- one matrix -------------------------------------------------------------------------

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

const fmt = (n: number): string => Math.round(n).toLocaleString("en-US")

/** Runs the section's matrix; returns its table, targets and notes, and whether every target passed. */
const runSection = async (section: Section): Promise<{ readonly lines: Array<string>; readonly pass: boolean }> => {
  const summaries = new Map<string, Summary>() // key: cellLabel + client name
  const notes = new Set<string>()
  const key = (cell: Cell, client: string) => `${cellLabel(cell)}|${client}`
  const prefix = section.label === "" ? "" : `${section.label} `

  for (const cell of section.cells) {
    const results = new Map<string, Array<BenchResult | undefined>>() // indexed by repetition
    const failed = new Map<string, string>()
    for (let rep = 0; rep < reps; rep++) {
      // Rotate the order each repetition so drift and noise hit every client alike.
      const order = clients.map((_, i) => clients[(i + rep) % clients.length]!)
      const progress: Array<string> = []
      for (const client of order) {
        if (failed.has(client.name)) continue // a client that failed once is not retried in this cell
        const outcome = await runClient(client, cell, section.reach(++runCounter, client))
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
      process.stderr.write(`  ${prefix}${cellLabel(cell).padEnd(12)} rep ${rep + 1}/${reps}: ${progress.join(", ")}\n`)
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
      const ratios = byRep.flatMap((
        r,
        rep
      ) => (r !== undefined && bare[rep] !== undefined ? [r.callsPerSec / bare[rep]!.callsPerSec] : []))
      summaries.set(key(cell, client.name), {
        _tag: "ok",
        result: runs.find((r) => r.callsPerSec === mid)!,
        ratio: ratios.length === 0 ? undefined : median(ratios)
      })
      if (failed.has(client.name)) {
        notes.add(`${client.name}: ${cellLabel(cell)}: a repetition failed: ${failed.get(client.name)}`)
      }
    }
  }

  // The table.
  const ratioTo = (cell: Cell, client: string): number | undefined => {
    const own = summaries.get(key(cell, client))
    return own?._tag === "ok" ? own.ratio : undefined
  }
  const header = [
    "cell",
    "client",
    "calls/s",
    "× bare",
    "p50 µs",
    "p99 µs",
    "cpu µs/call",
    "alloc B/call",
    "connect ms",
    "start MB",
    "rss MB"
  ]
  const rows: Array<Array<string>> = []
  for (const cell of section.cells) {
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
        r.cpuUsPerCall.toFixed(1),
        fmt(r.allocBytesPerCall),
        r.connectMs.toFixed(0),
        r.startRssMB.toFixed(0),
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
  out.push(`${section.title} — median of ${reps} run(s) per cell`)
  out.push(
    `node ${process.version}, ${availableParallelism()} cpus; × bare = median over repetitions of calls/s ÷ bare's in the same repetition`
  )
  out.push("")
  out.push(line(header))
  for (const row of rows) {
    if (row[0] !== "" && out[out.length - 1] !== line(header)) out.push("")
    out.push(line(row))
  }

  // The targets, for mcp-fleet in each setup against the SDK in the same setup.
  let pass = true
  const resultOf = (cell: Cell, client: string) => {
    const own = summaries.get(key(cell, client))
    return own?._tag === "ok" ? own.result : undefined
  }
  for (const setup of ["external", "bundled"] as const) {
    const ours = clients.find((c) => c.base === "mcp-fleet" && c.setup === setup)
    if (ours === undefined) continue
    const sdk = clients.find((c) => c.base === "sdk" && c.setup === setup)?.name ?? "sdk"
    const verdicts = targetVerdicts(section, { ours: ours.name, sdk, ratioTo, resultOf })
    pass &&= verdicts.pass
    out.push("", `targets (${ours.name} vs bare and ${sdk}, same run)`)
    for (const l of verdicts.lines) out.push(l)
  }
  if (notes.size > 0) {
    out.push("")
    out.push("notes")
    for (const n of notes) out.push(`  ${n}`)
  }
  return { lines: out, pass }
}

/** What `targetVerdicts` reads of a section's results. */
interface Verdicts {
  readonly ours: string
  readonly sdk: string
  readonly ratioTo: (cell: Cell, client: string) => number | undefined
  readonly resultOf: (cell: Cell, client: string) => BenchResult | undefined
}

/**
 * The target lines of one setup: the section's ratios to bare; then in every cell above the
 * SDK, a peak resident set at most the SDK's, and a p99 latency within 3× bare's; and a
 * resident set once connected at most the SDK's (in the first cell).
 */
const targetVerdicts = (section: Section, v: Verdicts): { readonly lines: Array<string>; readonly pass: boolean } => {
  const lines: Array<string> = []
  let pass = true
  const verdictLine = (ok: boolean | undefined, text: string, shown: string | undefined) => {
    if (ok !== true) pass = false
    lines.push(
      `  ${ok === undefined ? "n/a " : ok ? "PASS" : "FAIL"}  ${text}${shown === undefined ? "" : `  (${shown})`}`
    )
  }
  /** A verdict on two clients' figures in `cell`: `ok` given both, n/a without either. */
  const versus = (
    cell: Cell,
    a: string,
    b: string,
    text: string,
    figure: (r: BenchResult) => number,
    ok: (x: number, y: number) => boolean,
    shown: (x: number, y: number) => string
  ) => {
    const x = v.resultOf(cell, a)
    const y = v.resultOf(cell, b)
    const both = x !== undefined && y !== undefined
    verdictLine(both ? ok(figure(x), figure(y)) : undefined, text, both ? shown(figure(x), figure(y)) : undefined)
  }
  for (const t of section.targets) {
    const ratio = v.ratioTo(t.cell, v.ours)
    verdictLine(
      ratio === undefined ? undefined : ratio >= t.min,
      `≥ ${t.min.toFixed(2)}× bare at ${cellLabel(t.cell)}`,
      ratio?.toFixed(2).concat("×")
    )
  }
  for (const cell of section.cells) {
    const ours = v.ratioTo(cell, v.ours)
    const sdk = v.ratioTo(cell, v.sdk)
    verdictLine(
      ours === undefined || sdk === undefined ? undefined : ours > sdk,
      `above the SDK at ${cellLabel(cell)}`,
      ours === undefined || sdk === undefined ? undefined : `${ours.toFixed(2)}× vs ${sdk.toFixed(2)}×`
    )
  }
  const mb = (x: number, y: number) => `${x.toFixed(1)} vs ${y.toFixed(1)} MB`
  const first = section.cells[0]
  if (first !== undefined) {
    versus(first, v.ours, v.sdk, "resident set once connected ≤ the SDK's", (r) => r.startRssMB, (x, y) => x <= y, mb)
  }
  for (const cell of section.cells) {
    versus(
      cell,
      v.ours,
      v.sdk,
      `peak resident set ≤ the SDK's at ${cellLabel(cell)}`,
      (r) => r.rssMB,
      (x, y) => x <= y,
      mb
    )
  }
  for (const cell of section.cells) {
    versus(
      cell,
      v.ours,
      "bare",
      `p99 ≤ 3× bare's at ${cellLabel(cell)}`,
      (r) => r.p99us,
      (x, y) => x <= 3 * y,
      (x, y) => `${fmt(x)} vs ${fmt(y)} µs`
    )
  }
  return { lines, pass }
}

// ---- stdio ------------------------------------------------------------------------------

const stdioCells: ReadonlyArray<Cell> = [
  { concurrency: 1, payloadBytes: 16, calls: quick ? 3000 : 20000, warmup: quick ? 1000 : 3000 },
  { concurrency: 64, payloadBytes: 16, calls: quick ? 10000 : 50000, warmup: quick ? 2000 : 5000 },
  { concurrency: 1, payloadBytes: MiB, calls: quick ? 40 : 150, warmup: 8 },
  { concurrency: 64, payloadBytes: MiB, calls: quick ? 64 : 192, warmup: 64 }
]

const stdioSection: Section = {
  title: "tool calls over stdio against bench/fixtures/echo-server.mjs",
  label: "",
  cells: stdioCells,
  targets: [
    { min: 0.85, cell: stdioCells[0]! },
    { min: 0.7, cell: stdioCells[1]! },
    { min: 0.95, cell: stdioCells[2]! },
    { min: 0.95, cell: stdioCells[3]! }
  ],
  reach: (n, client) => {
    // A unique tag in the server's argv lets us find a server the client left behind.
    const tag = `--bench-tag=${process.pid}-${n}`
    const server = [process.execPath, stdioServerScript, tag]
    // mcp-fleet starts its server in a session of its own (`detached`, to own its process
    // group); the others' servers get one too, so that each is scheduled alike under load
    // (Linux's autogroups: one per session). setsid(1) execs in place, as the server is no
    // process group leader.
    const argv = client.base === "mcp-fleet" || setsid === undefined ? server : [setsid, ...server]
    return { args: [], env: { BENCH_STDIO_SERVER: JSON.stringify(argv) }, tag }
  }
}

// ---- Streamable HTTP --------------------------------------------------------------------

/** How the HTTP echo server answers a POST carrying a request. */
type AnswerMode = "json" | "sse"

// An HTTP round trip costs several times a stdio one, so fewer calls make the same time.
const httpCells: ReadonlyArray<Cell> = [
  { concurrency: 1, payloadBytes: 16, calls: quick ? 1000 : 4000, warmup: quick ? 300 : 1000 },
  { concurrency: 64, payloadBytes: 16, calls: quick ? 2000 : 6000, warmup: quick ? 500 : 2000 },
  { concurrency: 1, payloadBytes: MiB, calls: quick ? 40 : 100, warmup: 8 },
  { concurrency: 64, payloadBytes: MiB, calls: quick ? 64 : 192, warmup: 64 }
]

const httpSection = (mode: AnswerMode, url: string): Section => ({
  title: `tool calls over Streamable HTTP, ${
    mode === "json" ? "JSON" : "SSE"
  } answers, against bench/fixtures/echo-http-server.mjs --mode ${mode}`,
  label: mode,
  cells: httpCells,
  // The 16 B cells measure the per-call path; 1 MiB ones are held to the SDK and p99 lines.
  targets: [
    { min: mode === "json" ? 0.6 : 0.5, cell: httpCells[0]! },
    { min: mode === "json" ? 0.5 : 0.4, cell: httpCells[1]! }
  ],
  reach: () => ({ args: ["--url", url], env: {}, tag: undefined })
})

/** A running HTTP echo server and how to stop it. */
interface HttpServer {
  readonly url: string
  /** Stops it (SIGTERM to its PID, SIGKILL after 2 s) and returns notes about anything amiss. */
  readonly stop: () => Promise<Array<string>>
}

const startHttpServer = (mode: AnswerMode): Promise<HttpServer> => {
  const tag = `--bench-tag=${process.pid}-http-${mode}`
  return startServer(
    [process.execPath, httpServerScript, "--port", "0", "--mode", mode, tag],
    tag,
    (line) => line.trim()
  )
}

/**
 * Starts a server process whose first stdout line gives its URL (`urlOf` reads it); `tag`
 * is in the argv of every process it may leave behind.
 */
const startServer = async (
  argv: ReadonlyArray<string>,
  tag: string,
  urlOf: (line: string) => string
): Promise<HttpServer> => {
  // stdin is a pipe the server watches: if the runner dies however it dies, the server exits.
  const child = spawn(argv[0]!, argv.slice(1), { cwd: root, stdio: ["pipe", "pipe", "pipe"] })
  currentServer = child
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (s: string) => {
    if (stderr.length < 64 * 1024) stderr += s
  })
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()))
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = ""
    const timer = setTimeout(() => reject(new Error("the server printed no URL within 30 s")), 30_000)
    child.stdout.setEncoding("utf8").on("data", (s: string) => {
      stdout += s
      const nl = stdout.indexOf("\n")
      if (nl !== -1) {
        clearTimeout(timer)
        resolve(urlOf(stdout.slice(0, nl)))
      }
    })
    child.once("error", (e) => reject(e))
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the server exited (${signal ?? `code ${code}`}) before listening: ${firstLine(stderr)}`))
    })
  }).catch((e: Error) => {
    if (child.pid !== undefined) killPid(child.pid, "SIGKILL")
    throw e
  })
  return {
    url,
    stop: async () => {
      const notes: Array<string> = []
      if (child.exitCode !== null || child.signalCode !== null) {
        notes.push(
          `the server died during the run (${child.signalCode ?? `code ${child.exitCode}`}): ${firstLine(stderr)}`
        )
      } else if (child.pid !== undefined) {
        killPid(child.pid, "SIGTERM")
        const killTimer = setTimeout(() => {
          notes.push("the server ignored SIGTERM for 2 s (killed)")
          killPid(child.pid!, "SIGKILL")
        }, 2000)
        await exited
        clearTimeout(killTimer)
      }
      currentServer = undefined
      const left = processes().filter((p) => p.cmd.includes(tag))
      for (const p of left) killPid(p.pid, "SIGKILL")
      if (left.length > 0) notes.push(`the server left ${left.length} process(es) running (killed)`)
      if (firstLine(stderr) !== "") notes.push(`the server's stderr: ${firstLine(stderr)}`)
      return notes
    }
  }
}

/** A short unrecorded run, so that the server's code is warm before the first measurement. */
const warmUp = async (url: string): Promise<void> => {
  const client = clients.find((c) => c.name === "bare") ?? clients[0]
  if (client === undefined) return
  const outcome = await runClient(client, { concurrency: 8, payloadBytes: 16, calls: 2000, warmup: 1 }, {
    args: ["--url", url],
    env: {},
    tag: undefined
  })
  if (outcome._tag === "error") process.stderr.write(`  warm-up with ${client.name} failed: ${outcome.message}\n`)
}

// ---- the gateway's overhead (--http) ----------------------------------------------------

/**
 * The gateway's own cost: the mcp-fleet client calling `mcp-fleet serve --http` fronting the
 * stdio echo fixture, next to the same client calling the HTTP echo server directly (JSON
 * answers), at c=1 and c=64, in alternating runs. The gateway is the CLI's bundle, as shipped.
 */
const runGatewaySection = async (
  direct: string
): Promise<{ readonly lines: Array<string>; readonly pass: boolean }> => {
  const client = CLIENTS.find((c) => c.name === "mcp-fleet")!
  const gateway = await startGateway()
  const cells = httpCells.slice(0, 2)
  const rows: Array<string> = []
  let pass = true
  try {
    for (const cell of cells) {
      const ratios: Array<number> = []
      const rates = { direct: [] as Array<number>, gateway: [] as Array<number> }
      for (let rep = 0; rep < reps; rep++) {
        // The stateful revision, as this section measured before the gateway served 2026-07-28.
        const viaGateway = await runClient(client, cell, {
          args: ["--url", gateway.url, "--tool", "mcp__echo__echo", "--protocol-version", "2025-11-25"],
          env: {},
          tag: undefined
        })
        const straight = await runClient(client, cell, { args: ["--url", direct], env: {}, tag: undefined })
        if (viaGateway._tag === "error" || straight._tag === "error") {
          rows.push(
            `  ${cellLabel(cell)}: n/a (${
              viaGateway._tag === "error" ? viaGateway.message : (straight as { message: string }).message
            })`
          )
          break
        }
        rates.gateway.push(viaGateway.result.callsPerSec)
        rates.direct.push(straight.result.callsPerSec)
        ratios.push(viaGateway.result.callsPerSec / straight.result.callsPerSec)
        process.stderr.write(
          `  gateway ${cellLabel(cell).padEnd(12)} rep ${rep + 1}/${reps}: through the gateway ${
            Math.round(viaGateway.result.callsPerSec)
          }/s, direct ${Math.round(straight.result.callsPerSec)}/s\n`
        )
      }
      if (ratios.length === 0) {
        pass = false
        continue
      }
      const ratio = median(ratios)
      rows.push(
        `  ${cellLabel(cell).padEnd(12)} through the gateway ${fmt(median(rates.gateway)).padStart(7)}/s   direct ${
          fmt(median(rates.direct)).padStart(7)
        }/s   ${ratio.toFixed(2)}×`
      )
      if (cell.concurrency === 64) {
        const ok = ratio >= 0.5
        if (!ok) pass = false
        rows.push(
          `  ${ok ? "PASS" : "FAIL"}  through the gateway ≥ 0.50× direct at ${cellLabel(cell)}  (${ratio.toFixed(2)}×)`
        )
      }
    }
  } finally {
    for (const n of await gateway.stop()) rows.push(`  note: the gateway: ${n}`)
  }
  return {
    lines: [
      "",
      `the gateway's overhead: the mcp-fleet client (2025-11-25) through \`mcp-fleet serve --http\` (fronting the stdio echo fixture) vs directly to the HTTP echo server (JSON answers), median of ${reps} run(s)`,
      "",
      ...rows
    ],
    pass
  }
}

/** `mcp-fleet serve --http` (the CLI's bundle) fronting the stdio echo fixture; its stop removes its config. */
const startGateway = async (): Promise<HttpServer> => {
  const dir = mkdtempSync(path.join(tmpdir(), "mcp-fleet-bench-gateway-"))
  const tag = `--bench-tag=${process.pid}-gateway`
  const config = path.join(dir, "mcp.json")
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [stdioServerScript, tag] } } })
  )
  const gateway = await startServer(
    [process.execPath, path.join(BUNDLES, "cli/bin.js"), "serve", "--http", "0", "--json", "--config", config],
    tag,
    (line) => (JSON.parse(line) as { url: string }).url
  ).catch((e: Error) => {
    rmSync(dir, { recursive: true, force: true })
    throw e
  })
  return {
    url: gateway.url,
    stop: async () => {
      const notes = await gateway.stop()
      rmSync(dir, { recursive: true, force: true })
      return notes
    }
  }
}

// ---- 2026-07-28, stateless (--http) -----------------------------------------------------

/** A row of the stateless section: a client made to speak one revision. */
interface Speaker {
  readonly label: string
  readonly client: ClientSpec
  readonly version: string
}

const SPEAKERS: ReadonlyArray<Speaker> = [
  { label: "mcp-fleet 2025-11-25", client: CLIENTS.find((c) => c.name === "mcp-fleet")!, version: "2025-11-25" },
  { label: "mcp-fleet 2026-07-28", client: CLIENTS.find((c) => c.name === "mcp-fleet")!, version: "2026-07-28" },
  { label: "sdk-v2 2025-11-25", client: SDK_V2, version: "2025-11-25" },
  { label: "sdk-v2 2026-07-28", client: SDK_V2, version: "2026-07-28" }
]

/** A server of the stateless section: how to start it and the tool to call there. */
interface Served {
  readonly label: string
  readonly start: () => Promise<HttpServer>
  readonly tool: string
}

const startMcpServerEcho = (): Promise<HttpServer> => {
  const tag = `--bench-tag=${process.pid}-mcpserver`
  return startServer([process.execPath, bundled(MCP_SERVER_ECHO), tag], tag, (line) => line.trim())
}

/**
 * mcp-fleet's servers serving 2026-07-28 statelessly beside the stateful revisions on one
 * endpoint: `NodeMcpServer.serveHttp` with the echo tool, and the gateway fronting the stdio echo
 * fixture. Each is called by our McpClient and the official SDK v2 client, each made to speak
 * 2025-11-25 (a session) and 2026-07-28 (no session: every request on its own), next to the
 * bare client calling the HTTP echo server directly in the same repetition (× bare).
 */
const runStatelessSection = async (
  direct: string
): Promise<{ readonly lines: Array<string>; readonly pass: boolean }> => {
  const bare = CLIENTS.find((c) => c.name === "bare")!
  const servers: ReadonlyArray<Served> = [
    { label: "McpServer", start: startMcpServerEcho, tool: "echo" },
    { label: "gateway", start: startGateway, tool: "mcp__echo__echo" }
  ]
  const header = ["server", "cell", "client", "calls/s", "× bare", "p50 µs", "p99 µs", "cpu µs/call"]
  const rows: Array<Array<string>> = []
  const notes: Array<string> = []
  for (const served of servers) {
    const server = await served.start()
    try {
      for (const cell of httpCells.slice(0, 2)) {
        const byRow = new Map<string, Array<BenchResult>>()
        const ratios = new Map<string, Array<number>>()
        const failed = new Map<string, string>()
        for (let rep = 0; rep < reps; rep++) {
          const baseline = await runClient(bare, cell, { args: ["--url", direct], env: {}, tag: undefined })
          const progress: Array<string> = []
          for (const speaker of SPEAKERS) {
            if (failed.has(speaker.label)) continue
            const outcome = await runClient(speaker.client, cell, {
              args: ["--url", server.url, "--tool", served.tool, "--protocol-version", speaker.version],
              env: {},
              tag: undefined
            })
            if (outcome._tag === "error") {
              failed.set(speaker.label, outcome.message)
              progress.push(`${speaker.label} failed`)
              continue
            }
            byRow.set(speaker.label, [...byRow.get(speaker.label) ?? [], outcome.result])
            if (baseline._tag === "ok") {
              const ratio = outcome.result.callsPerSec / baseline.result.callsPerSec
              ratios.set(speaker.label, [...ratios.get(speaker.label) ?? [], ratio])
            }
            progress.push(`${speaker.label} ${Math.round(outcome.result.callsPerSec)}/s`)
          }
          process.stderr.write(
            `  stateless ${served.label} ${cellLabel(cell).padEnd(12)} rep ${rep + 1}/${reps}: ${progress.join(", ")}\n`
          )
        }
        SPEAKERS.forEach((speaker, i) => {
          const first = i === 0 ? [served.label, cellLabel(cell)] : ["", ""]
          const runs = byRow.get(speaker.label) ?? []
          if (runs.length === 0) {
            rows.push([...first, speaker.label, "n/a", "", failed.get(speaker.label) ?? "no run"])
            return
          }
          const mid = median(runs.map((r) => r.callsPerSec))
          const r = runs.find((run) => run.callsPerSec === mid)!
          const ratio = ratios.get(speaker.label)
          rows.push([
            ...first,
            speaker.label,
            fmt(r.callsPerSec),
            ratio === undefined ? "-" : median(ratio).toFixed(2),
            fmt(r.p50us),
            fmt(r.p99us),
            r.cpuUsPerCall.toFixed(1)
          ])
        })
      }
    } finally {
      for (const n of await server.stop()) notes.push(`${served.label}: ${n}`)
    }
  }
  const widths = header.map((h, c) =>
    Math.max(h.length, ...rows.filter((r) => c < 3 || r.length === header.length).map((r) => r[c]!.length))
  )
  const line = (cols: ReadonlyArray<string>): string =>
    cols.map((col, c) =>
      (c < 3 || cols.length !== header.length && c === cols.length - 1)
        ? col.padEnd(widths[c]!)
        : col.padStart(widths[c]!)
    ).join("  ").trimEnd()
  return {
    lines: [
      "",
      `2026-07-28 served statelessly beside the stateful revisions (one endpoint each), median of ${reps} run(s); × bare = the bare client calling the HTTP echo server directly in the same repetition`,
      "",
      line(header),
      ...rows.map(line),
      ...(notes.length === 0 ? [] : ["", "notes", ...notes.map((n) => `  ${n}`)])
    ],
    // Measured, not held to a target yet: every row ran.
    pass: rows.every((row) => row.length === header.length)
  }
}

// ---- main -------------------------------------------------------------------------------

const started = Date.now()
const modes: ReadonlyArray<AnswerMode> = statelessOnly ? ["json"] : ["json", "sse"]
const cellCount = http ? modes.length * httpCells.length : stdioCells.length
process.stderr.write(
  `mcp-fleet bench${
    http ? " (Streamable HTTP: json, sse)" : ""
  }: ${cellCount} cells × ${clients.length} clients × ${reps} rep(s), node ${process.version}, ${availableParallelism()} cpus\n`
)

await bundleAll()
const out: Array<string> = []
let allPass = true
if (!http) {
  const section = await runSection(stdioSection)
  for (const line of section.lines) out.push(line)
  allPass = section.pass
} else {
  for (const mode of modes) {
    const server = await startHttpServer(mode)
    process.stderr.write(`  ${mode}: echo server at ${server.url}\n`)
    let section: Awaited<ReturnType<typeof runSection>>
    let serverNotes: Array<string> = []
    try {
      await warmUp(server.url)
      section = statelessOnly ? { lines: [], pass: true } : await runSection(httpSection(mode, server.url))
      if (mode === "json" && statelessOnly) {
        section = await runStatelessSection(server.url)
      } else if (mode === "json" && clients.some((c) => c.name === "mcp-fleet")) {
        const gateway = await runGatewaySection(server.url)
        const stateless = await runStatelessSection(server.url)
        section = {
          lines: [...section.lines, ...gateway.lines, ...stateless.lines],
          pass: section.pass && gateway.pass && stateless.pass
        }
      }
    } finally {
      serverNotes = await server.stop()
      for (const n of serverNotes) process.stderr.write(`  ${mode}: ${n}\n`)
    }
    for (const line of section.lines) out.push(line)
    if (serverNotes.length > 0) {
      out.push("", "server")
      for (const n of serverNotes) out.push(`  ${n}`)
    }
    allPass &&= section.pass
  }
}
out.push("")
out.push(`took ${((Date.now() - started) / 1000).toFixed(0)} s`)
process.stdout.write(out.join("\n") + "\n")
if (strict && !allPass) process.exitCode = 1
