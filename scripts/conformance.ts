/**
 * `npm run conformance`: the official MCP conformance suite in client mode. Every client
 * scenario the suite lists runs, one at a time, against one client command, and the outcome
 * is compared with `conformance/baseline.json` (the scenarios allowed to fail, each with a
 * reason).
 *
 *   npm run conformance [-- --client "<command>"] [-- --scenario <name>]...
 *
 * The client command (default `node --import tsx examples/conformance-client.ts`) runs on the
 * machine's node, gets the scenario in `MCP_CONFORMANCE_SCENARIO` and the server URL as its
 * last argument. The suite, `@modelcontextprotocol/conformance` pinned in `tools/conformance`,
 * needs Node ≥ 22: it runs on the Node 22 binary installed there (`npm ci` there first when
 * it is missing or stale). A scenario passes when the suite exits 0: no failed or warning
 * check, the client neither timed out nor exited non-zero.
 *
 * Exits 1 when a scenario outside the baseline fails, when a baseline scenario passes (the
 * baseline stays exact), or when the baseline names a scenario the suite does not have.
 * Each scenario's suite log and checks.json stay in a temporary folder printed at the end.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
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

/** One scenario as `conformance list --client` prints it. */
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

/** The client scenarios the suite has, from `conformance list --client`. */
const listScenarios = (): Array<Scenario> => {
  const list = spawnSync(node22, [suite, "list", "--client"], { encoding: "utf8" })
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
    process.exit(signal === "SIGINT" ? 130 : 143)
  })
}

/**
 * Runs one scenario: the suite in a process group of its own (the client is its child), its
 * output saved to `dir/suite.log`. The whole group is killed when the suite exits, so no
 * client outlives it, or when it overruns SUITE_TIMEOUT_MS.
 */
const runScenario = (name: string, dir: string): Promise<Outcome> =>
  new Promise((resolve) => {
    const args = ["client", "--command", client, "--scenario", name, "--timeout", String(CLIENT_TIMEOUT_MS), "-o", dir]
    const child = spawn(node22, [suite, ...args], { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"] })
    const pid = child.pid!
    running = pid
    const output: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(pid)
    }, SUITE_TIMEOUT_MS)
    child.on("exit", () => killGroup(pid))
    child.on("close", (code) => {
      clearTimeout(timer)
      running = undefined
      const log = Buffer.concat(output).toString("utf8")
      writeFileSync(join(dir, "suite.log"), log)
      const file = readdirSync(dir, { recursive: true, encoding: "utf8" }).find((f) => f.endsWith("checks.json"))
      const checks: Array<Check> = file === undefined ? [] : JSON.parse(readFileSync(join(dir, file), "utf8"))
      const clientProblems = log.match(/CLIENT (TIMED OUT|EXITED WITH ERROR).*/g) ?? []
      resolve({ status: timedOut ? "timeout" : code === 0 ? "pass" : "fail", checks, clientProblems })
    })
  })

// ---- main -------------------------------------------------------------------------------

const baseline: Record<string, string> = JSON.parse(
  readFileSync(join(root, "conformance/baseline.json"), "utf8")
).expectedFailures

ensureInstalled()
const all = listScenarios()
const known = new Set(all.map((s) => s.name))
const problems = [
  ...only.filter((name) => !known.has(name)).map((name) => `--scenario ${name}: no such client scenario`),
  ...Object.keys(baseline).filter((name) => !known.has(name)).map((name) => `baseline: no such client scenario ${name}`)
]
const scenarios = only.length === 0 ? all : all.filter((s) => only.includes(s.name))
const outDir = mkdtempSync(join(tmpdir(), "mcp-fleet-conformance-"))
const started = Date.now()

const nameWidth = Math.max(8, ...scenarios.map((s) => s.name.length))
const revisionsWidth = Math.max(9, ...scenarios.map((s) => s.revisions.length))
const row = (name: string, revisions: string, checks: string, status: string, verdict: string) =>
  `${name.padEnd(nameWidth)}  ${revisions.padEnd(revisionsWidth)}  ${checks.padStart(6)}  ${status.padEnd(7)}  ${verdict}`
console.log(`client: ${client}\n`)
console.log(row("scenario", "revisions", "checks", "status", "baseline"))

let passing = 0
let expected = 0
for (const [i, scenario] of scenarios.entries()) {
  const dir = join(outDir, `${String(i).padStart(2, "0")}-${scenario.name.replaceAll("/", "_")}`)
  mkdirSync(dir)
  const { checks, clientProblems, status } = await runScenario(scenario.name, dir)
  const scored = checks.filter((c) => c.status === "SUCCESS" || c.status === "FAILURE")
  const passed = scored.filter((c) => c.status === "SUCCESS").length
  const reason = baseline[scenario.name]
  const verdict =
    status === "pass"
      ? reason === undefined ? "" : `UNEXPECTED PASS: remove from baseline (${reason})`
      : reason === undefined ? "UNEXPECTED FAILURE" : `expected: ${reason}`
  console.log(row(scenario.name, scenario.revisions, `${passed}/${scored.length}`, status, verdict))
  if (status === "pass") passing++
  else if (reason !== undefined) expected++
  if (verdict.startsWith("UNEXPECTED")) {
    problems.push(`${scenario.name}: ${verdict}`)
    if (status !== "pass") {
      for (const check of checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING")) {
        console.log(`    ${check.status} ${check.id}: ${(check.errorMessage || check.description).split("\n")[0].slice(0, 200)}`)
      }
      for (const problem of clientProblems) console.log(`    ${problem}`)
      console.log(`    see ${dir}/suite.log`)
    }
  }
}

const seconds = Math.round((Date.now() - started) / 1000)
console.log(
  `\nconformance: ${passing} of ${scenarios.length} scenarios pass, ${expected} fail as the baseline expects, ` +
    `${problems.length} problem(s), ${seconds} s; logs in ${outDir}`
)
for (const problem of problems) console.log(`  ${problem}`)
process.exit(problems.length === 0 ? 0 : 1)
