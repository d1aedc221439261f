/**
 * `npm run bench:cli`: how long the `mcp-fleet` command takes to start, next to `node -e 0`
 * (the floor: starting Node itself). Runs the built command (`npm run build` first when
 * dist/ is missing or older than src/): `--version`, `--help`, `servers --json` on a config of
 * no server, and `tools` on a one-server config (the echo fixture) — start, connect, list,
 * print, stop. Prints the median wall time of each and, on Linux, its CPU time (user +
 * system, which a busy machine inflates less than the wall clock).
 *
 *   npm run bench:cli [-- --runs N]
 *
 * @module
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { builtCli } from "./built.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const bin = builtCli()
const echo = path.join(root, "bench/fixtures/echo-server.mjs")
const runsFlag = process.argv.indexOf("--runs")
const runs = runsFlag === -1 ? 10 : Math.max(1, Number(process.argv[runsFlag + 1]) || 10)

const dir = mkdtempSync(path.join(tmpdir(), "mcp-fleet-bench-cli-"))
try {
  const config = path.join(dir, "mcp.json")
  writeFileSync(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [echo] } } }))
  const empty = path.join(dir, "empty.json")
  writeFileSync(empty, JSON.stringify({ mcpServers: {} }))
  // On Linux the shell that ran the command tells its children's CPU time (stat fields 16-17,
  // in clock ticks, usually 100 a second) once it has waited for it.
  const linux = process.platform === "linux"
  const time = (args: ReadonlyArray<string>): { readonly ms: number; readonly cpu: number } => {
    const started = process.hrtime.bigint()
    const result = linux
      ? spawnSync("/bin/sh", [
        "-c",
        "\"$0\" \"$@\" >/dev/null || exit $?; cat /proc/$$/stat",
        process.execPath,
        ...args
      ], {
        cwd: dir,
        encoding: "utf8"
      })
      : spawnSync(process.execPath, args, { cwd: dir, encoding: "utf8" })
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    if (result.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${result.stderr}`)
    const fields = linux ? result.stdout.slice(result.stdout.lastIndexOf(")") + 2).split(" ") : []
    return { ms, cpu: linux ? (Number(fields[13]) + Number(fields[14])) * 10 : Number.NaN }
  }
  const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["node -e 0", ["-e", "0"]],
    ["mcp-fleet --version", [bin, "--version"]],
    ["mcp-fleet --help", [bin, "--help"]],
    ["mcp-fleet servers --json (none)", [bin, "servers", "--json", "--config", empty]],
    ["mcp-fleet tools (one server)", [bin, "tools", "--config", config]]
  ]
  const results = new Map<string, Array<{ readonly ms: number; readonly cpu: number }>>(
    cases.map(([name]) => [name, []])
  )
  // Interleaved, so that load on the machine hits every case alike.
  for (let i = 0; i < runs; i++) for (const [name, args] of cases) results.get(name)!.push(time(args))
  const wall = (name: string) => median(results.get(name)!.map((run) => run.ms))
  const cpu = (name: string) => median(results.get(name)!.map((run) => run.cpu))
  const floor = wall("node -e 0")
  process.stdout.write(
    `\nCLI start-up, median of ${runs} runs (node ${process.version}, load ${loadavg()[0]!.toFixed(1)})\n\n`
  )
  process.stdout.write(`  ${"".padEnd(34)} ${"wall".padStart(8)} ${"".padEnd(16)} ${linux ? "cpu".padStart(8) : ""}\n`)
  for (const [name] of cases) {
    const ms = wall(name)
    process.stdout.write(
      `  ${name.padEnd(34)} ${ms.toFixed(0).padStart(5)} ms  ${(ms / floor).toFixed(2)}× node -e 0 ${
        linux ? `${cpu(name).toFixed(0).padStart(5)} ms` : ""
      }\n`
    )
  }
  const version = wall("mcp-fleet --version") / floor
  process.stdout.write(`\n  ${version <= 3 ? "PASS" : "FAIL"}  --version ≤ 3× node -e 0  (${version.toFixed(2)}×)\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
