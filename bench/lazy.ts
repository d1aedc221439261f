/**
 * `npm run bench:lazy`: a gateway over 100 lazy stdio servers whose catalogs are cached.
 * Writes a config of N servers (`--servers`, default 100) under `"lazy": true`, each a
 * fixture that logs every start (`test/fixtures/lazy-server.mjs`, 5 tools), fills the catalog
 * cache once with `mcp-fleet tools` (each server started once, in the background, to list it),
 * then starts `mcp-fleet serve --stdio` on that config and measures, over its stdio:
 *
 * - the time from the spawn (initialize is written at once) to the answer to `initialize`, and
 *   to the answer to `tools/list` (target: < 300 ms for both, Node's own start-up, `node -e 0`,
 *   taken off);
 * - the gateway's CPU time (user + system) until it answered `tools/list`, which a busy
 *   machine inflates less than the wall clock;
 * - how many servers it started to answer them (target: none);
 * - its RSS after `tools/list`, again a second later (flat: no server started), and after
 *   the first call;
 * - the first call's latency (the server started, initialized, listed, then called) next to a
 *   second call to the same server (already running).
 *
 * Runs the built command (`npm run build` first when dist/ is missing or older than src/), with
 * a user cache dir of its own: the cache fill is the first run of the build, which writes the
 * bundle's V8 code cache (src/cli/bin.ts) that the gateway runs start from. A column "no code
 * cache" runs this build with a cache dir that cannot be made: a build's first run.
 * With `--baseline <bin.js>` (another build's `dist/cli/bundle/bin.js`, its whole directory
 * copied aside inside this project, e.g. to dist/base/, where the packages the bundle leaves
 * out, jsonc-parser, yaml and minisearch, resolve), the runs alternate between that build and
 * this one, on the same config and cache, and both columns are shown: a busy machine then
 * weighs on both alike.
 *
 *   npm run bench:lazy [-- --servers N] [-- --runs N] [-- --baseline path/to/bin.js]
 *
 * @module
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { builtCli } from "./built.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const bin = builtCli()
const fixture = path.join(root, "test/fixtures/lazy-server.mjs")
const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name)
  return at === -1 ? fallback : Math.max(1, Number(process.argv[at + 1]) || fallback)
}
const baselineAt = process.argv.indexOf("--baseline")
const baseline = baselineAt === -1 ? undefined : path.resolve(process.argv[baselineAt + 1]!)
const servers = flag("--servers", 100)
const runs = flag("--runs", 5)
const TOOLS = ["search", "get", "create", "update", "delete"]

const dir = mkdtempSync(path.join(tmpdir(), "mcp-fleet-bench-lazy-"))
const log = path.join(dir, "starts.log")
const env = {
  ...process.env,
  XDG_CONFIG_HOME: path.join(dir, "config-home"),
  XDG_CACHE_HOME: path.join(dir, "cache-home"),
  MCP_FLEET_TRUST: "1"
}
// A cache dir under a file: no code cache can be read or written.
const noCodeCache = { ...env, XDG_CACHE_HOME: path.join(dir, ".mcp.json", "cache-home") }
const names = Array.from({ length: servers }, (_, i) => `s${String(i).padStart(3, "0")}`)
const starts = (): number => {
  try {
    return readFileSync(log, "utf8").split("\n").filter(Boolean).length
  } catch {
    return 0
  }
}
// The CPU time a process has used (user and system), in ms, from /proc: less at the mercy of a
// busy machine than the wall clock.
const cpuMs = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}
// The resident set of a process, in MiB, from /proc.
const rss = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((text) => text.startsWith("VmRSS:"))!
  return Number(line.split(/\s+/)[1]) / 1024
}
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!

// One gateway over stdio: requests written as lines, answers awaited by id.
const gateway = (command: string, environment: NodeJS.ProcessEnv) => {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [command, "serve", "--stdio"], {
    cwd: dir,
    env: environment
  })
  // A gateway that exits before an answer (a build that cannot load, say) fails the run with
  // its stderr, instead of leaving the bench waiting on an answer that never comes.
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = `${stderr}${chunk.toString()}`.slice(-2000)
  })
  const exited = new Promise<never>((_, reject) => {
    child.on(
      "exit",
      (code) => reject(new Error(`the gateway ${command} exited (${code}) before answering:\n${stderr}`))
    )
  })
  exited.catch(() => {})
  const waiting = new Map<number, (message: { result?: unknown; error?: unknown }) => void>()
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown }
    if (typeof message.id === "number") waiting.get(message.id)?.(message)
  })
  let next = 0
  const request = (method: string, params: unknown = {}) =>
    Promise.race([
      new Promise<{ result?: unknown; error?: unknown }>((resolve) => {
        const id = ++next
        waiting.set(id, resolve)
        child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`)
      }),
      exited
    ])
  const notify = (method: string) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`)
  const stop = () =>
    new Promise<void>((resolve) => {
      child.on("exit", () => resolve())
      child.stdin.end()
    })
  return { child, request, notify, stop }
}

interface Run {
  readonly initializeMs: number
  readonly listMs: number
  readonly cpuMs: number
  readonly tools: number
  readonly started: number
  readonly rssListed: number
  readonly rssLater: number
  readonly rssAfterCall: number
  readonly firstCallMs: number
  readonly secondCallMs: number
}

const once = async (server: string, command: string, environment: NodeJS.ProcessEnv): Promise<Run> => {
  const before = starts()
  const spawned = performance.now()
  const g = gateway(command, environment)
  const init = await g.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "bench-lazy", version: "1" }
  })
  const initializeMs = performance.now() - spawned
  if (init.error !== undefined) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`)
  g.notify("notifications/initialized")
  const list = await g.request("tools/list")
  const listed = performance.now()
  const cpu = cpuMs(g.child.pid!)
  const tools = (list.result as { tools: Array<unknown> }).tools.length
  const started = starts() - before
  const rssListed = rss(g.child.pid!)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const rssLater = rss(g.child.pid!)
  const callStart = performance.now()
  const first = await g.request("tools/call", { name: `mcp__${server}__search`, arguments: {} })
  const firstCallMs = performance.now() - callStart
  if (first.error !== undefined) throw new Error(`the first call failed: ${JSON.stringify(first.error)}`)
  const secondStart = performance.now()
  await g.request("tools/call", { name: `mcp__${server}__get`, arguments: {} })
  const secondCallMs = performance.now() - secondStart
  const rssAfterCall = rss(g.child.pid!)
  await g.stop()
  return {
    initializeMs,
    listMs: listed - spawned,
    cpuMs: cpu,
    tools,
    started,
    rssListed,
    rssLater,
    rssAfterCall,
    firstCallMs,
    secondCallMs
  }
}

try {
  const mcpServers = Object.fromEntries(
    names.map((name) => [name, { command: process.execPath, args: [fixture, name, log, ...TOOLS] }])
  )
  writeFileSync(path.join(dir, ".mcp.json"), JSON.stringify({ lazy: true, mcpServers }, null, 2))
  process.stdout.write(`\nlazy servers: ${servers} stdio servers × ${TOOLS.length} tools (node ${process.version})\n\n`)
  // Node's own start-up, the floor under any time counted from a spawn.
  const nodeFloor = median(Array.from({ length: 3 }, () => {
    const t = performance.now()
    spawnSync(process.execPath, ["-e", "0"])
    return performance.now() - t
  }))
  const fillStart = performance.now()
  const fill = spawnSync(process.execPath, [bin, "tools", "--json", "--timeout", "600000"], {
    cwd: dir,
    env,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  })
  const fillMs = performance.now() - fillStart
  if (fill.status !== 0) throw new Error(`mcp-fleet tools failed: ${fill.stderr}`)
  const filled = (JSON.parse(fill.stdout) as Array<unknown>).length
  process.stdout.write(
    `  cache fill (mcp-fleet tools, first run)  ${
      (fillMs / 1000).toFixed(1)
    } s: ${starts()} starts, ${filled} tools\n\n`
  )
  // The runs alternate between the baseline (if any), this build without its code cache, and
  // this build (last: the verdict is its). Each first call goes to one of the first servers:
  // on a very busy machine the settle window can pass before the last cache entries are read,
  // and a call to a server not yet listed finds no tool.
  const columns = [
    ...(baseline === undefined ? [] : [{ name: "baseline", command: baseline, environment: env }]),
    { name: "no code cache", command: bin, environment: noCodeCache },
    { name: "this build", command: bin, environment: env }
  ]
  const results = columns.map((): Array<Run> => [])
  for (let i = 0; i < runs; i++) {
    for (const [at, { command, environment }] of columns.entries()) {
      results[at]!.push(await once(names[i % names.length]!, command, environment))
    }
  }
  const row = (label: string, pick: (run: Run) => number, unit: string, digits = 0, of = median) =>
    process.stdout.write(
      `  ${label.padEnd(44)} ${
        results.map((column) => `${of(column.map(pick)).toFixed(digits)} ${unit}`.padStart(14)).join("")
      }\n`
    )
  process.stdout.write(
    `  ${`median of ${runs} gateway runs`.padEnd(44)} ${columns.map(({ name }) => name.padStart(14)).join("")}\n`
  )
  process.stdout.write(`  ${"node -e 0 (the floor)".padEnd(44)} ${`${nodeFloor.toFixed(0)} ms`.padStart(14)}\n`)
  row("spawn → initialize answered", (run) => run.initializeMs, "ms")
  row("spawn → tools/list answered", (run) => run.listMs, "ms")
  row("  the same less Node's start-up", (run) => run.listMs - nodeFloor, "ms")
  row("gateway CPU time until tools/list answered", (run) => run.cpuMs, "ms")
  row("tools listed (first page)", (run) => run.tools, "")
  row("servers started to answer them", (run) => run.started, "", 0, (xs) => Math.max(...xs))
  row("gateway RSS after tools/list", (run) => run.rssListed, "MiB", 1)
  row("gateway RSS 1 s later (no call)", (run) => run.rssLater, "MiB", 1)
  row("gateway RSS after the first call", (run) => run.rssAfterCall, "MiB", 1)
  row("first call (starts its server)", (run) => run.firstCallMs, "ms")
  row("second call (server running)", (run) => run.secondCallMs, "ms", 1)
  const mine = results.at(-1)!
  const served = median(mine.map((run) => run.listMs - nodeFloor))
  const none = mine.every((run) => run.started === 0)
  process.stdout.write(
    `\n  ${served < 300 && none ? "PASS" : "FAIL"}  initialize + tools/list < 300 ms past Node's start-up (${
      served.toFixed(0)
    } ms), no server started\n`
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
