/**
 * `npm run bench:cli`: how long the `mcp-fleet` command takes to start, next to `node -e 0`
 * (the floor: starting Node itself). Runs the built command (`npm run build` first when
 * dist/ is missing or older than src/): `--version`, and `tools` on a one-server config
 * (the echo fixture) — start, connect, list, print, stop. Prints the median of each.
 *
 *   npm run bench:cli [-- --runs N]
 *
 * @module
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
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
  const time = (args: ReadonlyArray<string>): number => {
    const started = process.hrtime.bigint()
    const result = spawnSync(process.execPath, args, { cwd: dir, encoding: "utf8" })
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    if (result.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${result.stderr}`)
    return ms
  }
  const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["node -e 0", ["-e", "0"]],
    ["mcp-fleet --version", [bin, "--version"]],
    ["mcp-fleet tools (one server)", [bin, "tools", "--config", config]]
  ]
  const results = new Map<string, Array<number>>(cases.map(([name]) => [name, []]))
  // Interleaved, so that load on the machine hits every case alike.
  for (let i = 0; i < runs; i++) for (const [name, args] of cases) results.get(name)!.push(time(args))
  const floor = median(results.get("node -e 0")!)
  process.stdout.write(`\nCLI start-up, median of ${runs} runs (node ${process.version})\n\n`)
  for (const [name] of cases) {
    const ms = median(results.get(name)!)
    process.stdout.write(
      `  ${name.padEnd(30)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / floor).toFixed(2)}× node -e 0\n`
    )
  }
  const version = median(results.get("mcp-fleet --version")!) / floor
  process.stdout.write(`\n  ${version <= 3 ? "PASS" : "FAIL"}  --version ≤ 3× node -e 0  (${version.toFixed(2)}×)\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
