/**
 * `npm run conformance`: the official MCP conformance suite, in client mode and then in
 * server mode. Every scenario the suite lists runs, one at a time, and the outcome is
 * compared with a baseline of the scenarios allowed to fail, each with a reason.
 *
 *   npm run conformance [-- --client "<command>"] [-- --scenario <name>]... [-- --only client|server]
 *
 * Client mode: the client command (default `node --import tsx examples/conformance-client.ts`)
 * runs on the machine's node, gets the scenario in `MCP_CONFORMANCE_SCENARIO` and the server
 * URL as its last argument; the baseline is `conformance/baseline.json`.
 *
 * Server mode: the gateway fronting our conformance fixture (`examples/conformance-gateway.ts`:
 * `test/fixtures/conformance-stdio.ts` as a stdio child, plain naming, spoken to in 2026-07-28
 * so its input requests, their keys and its logs cross the gateway as a 2026 server sends
 * them) is started over Streamable HTTP (serving 2026-07-28 clients too: `modern`), and every
 * server scenario runs against it; then the same against the fixture served by McpServer itself
 * (`test/fixtures/conformance-http.ts`, `modern`: target `direct`). The fixture is an `McpServer`
 * serving every tool, resource and prompt the scenarios name (`test_simple_text`, ...), so
 * each scenario measures the gateway (its HTTP endpoint, routing, relaying of sampling,
 * elicitation, progress and log messages) and McpServer behind it, not a missing fixture.
 * The baseline, `conformance/server-baseline.json`, lists by target (`gateway`, `direct`) the scenarios
 * that may fail there, each with why. The gateway used to front server-everything, which
 * has none of the suite's `test_*` names: most scenarios failed on that and said nothing
 * about us, and the run of server-everything by itself that kept that split honest went
 * with it.
 *
 * The suite, `@modelcontextprotocol/conformance` pinned in `tools/conformance`, needs
 * Node ≥ 22: it runs on the Node 22 binary installed there (`npm ci` there first when it is
 * missing or stale). A scenario passes when the suite exits 0 and no check failed or warned
 * (and, in client mode, the client neither timed out nor exited non-zero).
 *
 * Exits 1 when a scenario outside a baseline fails, when a baseline scenario passes (the
 * baselines stay exact), or when a baseline names a scenario the suite does not have. Each
 * scenario's suite log and checks.json stay in a temporary folder printed at the end.
 *
 * @module
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const toolDir = join(root, "tools/conformance")
const node22 = join(toolDir, "node_modules/node/bin/node")
const suite = join(toolDir, "node_modules/@modelcontextprotocol/conformance/dist/index.js")

/** How long the suite lets the client run before it kills it (its `--timeout`). */
const CLIENT_TIMEOUT_MS = 30_000
/**
 * How long one suite process may run before its process group is killed: the client's limit,
 * plus the SDK's 60 s request timeout that some mock servers wait out when the client never
 * answers a server-to-client request, plus slack.
 */
const SUITE_TIMEOUT_MS = 100_000

/** How long one server scenario may take (the suite's `--timeout`). */
const SERVER_TIMEOUT_MS = 30_000

/** One scenario as `conformance list --client` (or `--server`) prints it. */
interface Scenario {
  readonly name: string
  /** Spec revisions it belongs to (e.g. `2025-11-25`), or `extension`. */
  readonly revisions: string
}

/** One check of the suite's checks.json. */
interface Check {
  readonly id: string
  readonly status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO"
  readonly description: string
  readonly errorMessage?: string
}

/** What one scenario's run came to. */
interface Outcome {
  readonly status: "pass" | "fail" | "timeout"
  readonly checks: ReadonlyArray<Check>
  /** The suite's own warnings about the client: timed out, exited with an error. */
  readonly clientProblems: ReadonlyArray<string>
}

// ---- flags ------------------------------------------------------------------------------

const argv = process.argv.slice(2)
const flagValues = (name: string): Array<string> =>
  argv.flatMap((arg, i) => (arg === name && argv[i + 1] !== undefined ? [argv[i + 1]] : []))
const client = flagValues("--client")[0] ?? "node --import tsx examples/conformance-client.ts"
const only = flagValues("--scenario")
const modes = flagValues("--only")
const runClient = modes.length === 0 || modes.includes("client")
const runServer = modes.length === 0 || modes.includes("server")

// ---- the suite --------------------------------------------------------------------------

/** True when tools/conformance has every package installed at the version it pins. */
const installed = (): boolean => {
  const pins: Record<string, string> = JSON.parse(readFileSync(join(toolDir, "package.json"), "utf8")).devDependencies
  return existsSync(node22) && Object.entries(pins).every(([name, version]) => {
    const manifest = join(toolDir, "node_modules", name, "package.json")
    return existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).version === version
  })
}

/** Installs tools/conformance from its lockfile unless it is already in place. */
const ensureInstalled = (): void => {
  if (installed()) return
  console.log("installing tools/conformance (npm ci)...")
  const npm = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: toolDir, stdio: "inherit" })
  if (npm.status !== 0 || !installed()) throw new Error("npm ci in tools/conformance failed")
}

/** The scenarios the suite has for one mode, from `conformance list --client` / `--server`. */
const listScenarios = (mode: "client" | "server"): Array<Scenario> => {
  const list = spawnSync(node22, [suite, "list", `--${mode}`], { encoding: "utf8" })
  if (list.status !== 0) throw new Error(`conformance list failed: ${list.stderr}`)
  return [...list.stdout.matchAll(/^\s+- (\S+) \[(.+)\]$/gm)].map(([, name, revisions]) => ({ name, revisions }))
}

/** The process group of the suite run under way, killed if this script is interrupted. */
let running: number | undefined
const killGroup = (pid: number): void => {
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // the group is already gone
  }
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (running !== undefined) killGroup(running)
    for (const child of servers) killGroup(child.pid!)
    process.exit(signal === "SIGINT" ? 130 : 143)
  })
}

/**
 * Runs the suite with `args` (one scenario, or a whole server suite) in a process group of its
 * own (a client command is its child), its output saved to `dir/suite.log`. The whole group
 * is killed when the suite exits, so no client outlives it, or when it overruns `timeoutMs`.
 */
const runScenario = (args: ReadonlyArray<string>, dir: string, timeoutMs = SUITE_TIMEOUT_MS): Promise<Outcome> =>
  new Promise((resolve) => {
    const child = spawn(node22, [suite, ...args, "-o", dir], {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    const pid = child.pid!
    running = pid
    const output: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(pid)
    }, timeoutMs)
    child.on("exit", () => killGroup(pid))
    child.on("close", (code) => {
      clearTimeout(timer)
      running = undefined
      const log = Buffer.concat(output).toString("utf8")
      writeFileSync(join(dir, "suite.log"), log)
      const file = readdirSync(dir, { recursive: true, encoding: "utf8" }).find((f) => f.endsWith("checks.json"))
      const checks: Array<Check> = file === undefined ? [] : JSON.parse(readFileSync(join(dir, file), "utf8"))
      const clientProblems = log.match(/CLIENT (TIMED OUT|EXITED WITH ERROR).*/g) ?? []
      const warned = checks.some((c) => c.status === "FAILURE" || c.status === "WARNING")
      resolve({ status: timedOut ? "timeout" : code === 0 && !warned ? "pass" : "fail", checks, clientProblems })
    })
  })

/** The server processes this script started, each the leader of its own process group. */
const servers: Array<ChildProcess> = []

/**
 * Starts a server in a process group of its own and resolves with its URL, the first group
 * of `ready` once a line of its output matches it.
 */
const startServer = (command: string, args: ReadonlyArray<string>, ready: RegExp): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"] })
    servers.push(child)
    let seen = ""
    const timer = setTimeout(() => reject(new Error(`${args.join(" ")} did not start in 90 s:\n${seen}`)), 90_000)
    const onData = (chunk: Buffer) => {
      seen += chunk.toString("utf8")
      const match = ready.exec(seen)
      if (match === null) return
      clearTimeout(timer)
      resolve(match[1]!)
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${args.join(" ")} exited (${code}) before it was ready:\n${seen}`))
    })
  })

/** Ends a server's whole process group: SIGTERM, then SIGKILL after 5 s. */
const stopServer = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => killGroup(child.pid!), 5_000)
    child.once("exit", () => {
      clearTimeout(timer)
      killGroup(child.pid!)
      resolve()
    })
    try {
      process.kill(-child.pid!, "SIGTERM")
    } catch {
      resolve()
    }
  })

// ---- main -------------------------------------------------------------------------------

const clientBaseline: Record<string, string> = JSON.parse(
  readFileSync(join(root, "conformance/baseline.json"), "utf8")
).expectedFailures

/** A server the server scenarios run against: its name in the server baseline, and how to start it. */
interface ServerTarget {
  readonly name: string
  readonly description: string
  /** Starts it and resolves with its MCP endpoint's URL. */
  readonly start: () => Promise<string>
}

const serverTargets: ReadonlyArray<ServerTarget> = [{
  name: "gateway",
  description: "the gateway fronting the conformance fixture",
  start: () =>
    startServer(process.execPath, ["--import", "tsx", "examples/conformance-gateway.ts"], /listening on (\S+)/)
}, {
  name: "direct",
  description: "the conformance fixture served by McpServer itself",
  start: () =>
    startServer(process.execPath, ["--import", "tsx", "test/fixtures/conformance-http.ts"], /listening on (\S+)/)
}]

/** The server baseline: by target, the scenarios that may fail there, each with why. */
const { $comment: _, ...serverBaseline }: Record<string, Record<string, string>> = JSON.parse(
  readFileSync(join(root, "conformance/server-baseline.json"), "utf8")
)

ensureInstalled()
const outDir = mkdtempSync(join(tmpdir(), "mcp-fleet-conformance-"))
const started = Date.now()
const problems: Array<string> = []
const summaries: Array<string> = []

/** The scenarios of one mode to run, after `--scenario`; checks the baseline's names. */
const select = (mode: "client" | "server", baselines: ReadonlyArray<Record<string, string>>): Array<Scenario> => {
  const all = listScenarios(mode)
  const known = new Set(all.map((s) => s.name))
  for (const baseline of baselines) {
    for (const name of Object.keys(baseline)) {
      if (!known.has(name)) problems.push(`${mode} baseline: no such ${mode} scenario ${name}`)
    }
  }
  return only.length === 0 ? all : all.filter((s) => only.includes(s.name))
}

/**
 * Runs `scenarios` one at a time with `run`, and prints a row for each with its verdict
 * against `expected`.
 */
const runAll = async (
  mode: string,
  scenarios: ReadonlyArray<Scenario>,
  run: (scenario: Scenario, dir: string) => Promise<Outcome>,
  expected: (name: string) => string | undefined
): Promise<void> => {
  const nameWidth = Math.max(8, ...scenarios.map((s) => s.name.length))
  const revisionsWidth = Math.max(9, ...scenarios.map((s) => s.revisions.length))
  const row = (name: string, revisions: string, checks: string, status: string, verdict: string) =>
    `${name.padEnd(nameWidth)}  ${revisions.padEnd(revisionsWidth)}  ${checks.padStart(6)}  ${
      status.padEnd(7)
    }  ${verdict}`
  console.log(row("scenario", "revisions", "checks", "status", "baseline"))
  let passing = 0
  let failing = 0
  for (const [i, scenario] of scenarios.entries()) {
    const dir = join(outDir, `${mode}-${String(i).padStart(2, "0")}-${scenario.name.replaceAll("/", "_")}`)
    mkdirSync(dir)
    const { checks, clientProblems, status } = await run(scenario, dir)
    const scored = checks.filter((c) => c.status === "SUCCESS" || c.status === "FAILURE")
    const passed = scored.filter((c) => c.status === "SUCCESS").length
    const reason = expected(scenario.name)
    const verdict = status === "pass"
      ? reason === undefined ? "" : `UNEXPECTED PASS: remove from baseline (${reason})`
      : reason === undefined
      ? "UNEXPECTED FAILURE"
      : `expected: ${reason}`
    console.log(row(scenario.name, scenario.revisions, `${passed}/${scored.length}`, status, verdict))
    if (status === "pass") passing++
    else if (reason !== undefined) failing++
    if (verdict.startsWith("UNEXPECTED")) {
      problems.push(`${mode} ${scenario.name}: ${verdict}`)
      if (status !== "pass") {
        for (const check of checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING")) {
          console.log(
            `    ${check.status} ${check.id}: ${(check.errorMessage || check.description).split("\n")[0].slice(0, 200)}`
          )
        }
        for (const problem of clientProblems) console.log(`    ${problem}`)
        console.log(`    see ${dir}`)
      }
    }
  }
  summaries.push(`${mode}: ${passing} of ${scenarios.length} scenarios pass, ${failing} fail as the baseline expects`)
}

/**
 * Runs every server scenario against `url` in one suite process (one per scenario costs a
 * Node 22 start each, a minute in all) and gives each scenario's outcome: it fails when the
 * suite's summary marks it failed (as when it could not run at all) or a check failed or warned.
 */
const runServerSuite = async (
  url: string,
  dir: string
): Promise<(scenario: Scenario, into: string) => Promise<Outcome>> => {
  mkdirSync(dir)
  const args = ["server", "--url", url, "--suite", "all", "--timeout", String(SERVER_TIMEOUT_MS)]
  const { status } = await runScenario(args, dir, SUITE_TIMEOUT_MS * 3)
  const log = readFileSync(join(dir, "suite.log"), "utf8")
  const summary = new Map(
    [...log.matchAll(/^([✓✗]) (\S+): \d+ passed, \d+ failed$/gm)].map(([, mark, name]) => [name, mark])
  )
  const folders = readdirSync(dir)
  return async (scenario, into) => {
    const folder = folders.find((f) =>
      f.startsWith(`server-${scenario.name}-`) && /-\d{4}-\d\d-\d\dT/.test(f.slice(`server-${scenario.name}`.length))
    )
    const file = folder === undefined ? undefined : join(dir, folder, "checks.json")
    const checks: Array<Check> = file !== undefined && existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : []
    if (folder !== undefined) {
      writeFileSync(join(into, "where.txt"), `${join(dir, folder)}\nsuite log: ${join(dir, "suite.log")}\n`)
    }
    const mark = summary.get(scenario.name)
    const bad = mark !== "✓" || checks.some((c) => c.status === "FAILURE" || c.status === "WARNING")
    return {
      status: status === "timeout" && mark === undefined ? "timeout" : bad ? "fail" : "pass",
      checks,
      clientProblems: []
    }
  }
}

if (runClient) {
  const scenarios = select("client", [clientBaseline])
  console.log(`client: ${client}\n`)
  await runAll(
    "client",
    scenarios,
    (s, dir) =>
      runScenario(["client", "--command", client, "--scenario", s.name, "--timeout", String(CLIENT_TIMEOUT_MS)], dir),
    (name) => clientBaseline[name]
  )
}

if (runServer) {
  for (const name of Object.keys(serverBaseline)) {
    if (!serverTargets.some((target) => target.name === name)) problems.push(`server baseline: no such target ${name}`)
  }
  const scenarios = select("server", serverTargets.map((target) => serverBaseline[target.name] ?? {}))
  try {
    for (const target of serverTargets) {
      const baseline = serverBaseline[target.name] ?? {}
      const url = await target.start()
      console.log(`\n${target.name}: ${target.description} at ${url}\n`)
      await runAll(
        target.name,
        scenarios,
        await runServerSuite(url, join(outDir, `${target.name}-suite`)),
        (name) => baseline[name]
      )
    }
  } catch (error) {
    problems.push(`server: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    await Promise.all(servers.map(stopServer))
  }
}

if (only.length > 0) {
  const known = new Set<string>()
  if (runClient) { for (const s of listScenarios("client")) known.add(s.name) }
  if (runServer) { for (const s of listScenarios("server")) known.add(s.name) }
  for (const name of only) if (!known.has(name)) problems.push(`--scenario ${name}: no such scenario`)
}

const seconds = Math.round((Date.now() - started) / 1000)
// The logs are kept for a run with a problem to look into, and removed after a clean one.
if (problems.length === 0) rmSync(outDir, { recursive: true, force: true })
const logs = problems.length === 0 ? "logs removed: nothing to look into" : `logs in ${outDir}`
console.log(`\nconformance (${seconds} s; ${logs}):`)
for (const summary of summaries) console.log(`  ${summary}`)
console.log(`  ${problems.length} problem(s)`)
for (const problem of problems) console.log(`  ${problem}`)
process.exit(problems.length === 0 ? 0 : 1)
