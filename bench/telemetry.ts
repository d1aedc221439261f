/**
 * `npm run bench:telemetry`: what telemetry costs a tool call. The mcp-fleet bench client
 * (`bench/client.ts`: McpClient over stdio to `fixtures/echo-server.mjs`) at c=64, built
 * three ways, each run as its own process, in rotating order, `--reps` times:
 *
 * - `before`: the source of `--base` (a commit without telemetry code; default 10fcc16),
 * - `off`: this tree with no exporter (the metrics still recorded in the process),
 * - `exporter`: this tree exporting spans and metrics by OTLP/HTTP (JSON) to a receiver in
 *   this process that accepts and drops them, every 100 ms (`OTEL_BSP_SCHEDULE_DELAY`).
 *
 * The table shows each variant's median calls/s and its ratio to `before`. The target: `off`
 * within 3 % of `before`. `--strict` exits 1 when it is missed.
 *
 *   npm run bench:telemetry [-- --reps N] [-- --calls N] [-- --base <commit>] [-- --strict]
 *
 * @module
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bundle } from "./bundle.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const echoServer = fileURLToPath(new URL("./fixtures/echo-server.mjs", import.meta.url))
const TAG = "mcp-fleet-bench-telemetry"

const flag = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1] ?? fallback
}
const reps = Number(flag("reps", "5"))
const calls = Number(flag("calls", "50000"))
const base = flag("base", "10fcc16")
const strict = process.argv.includes("--strict")
const concurrency = 64

/** A receiver that accepts every OTLP post and drops it, counting bytes. */
const sink = () =>
  new Promise<{ url: string; bytes: () => number; close: () => void }>((resolve) => {
    let bytes = 0
    const server = http.createServer((request, response) => {
      request.on("data", (chunk: Buffer) => bytes += chunk.length)
      request.on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"))
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { readonly port: number }
      resolve({ url: `http://127.0.0.1:${port}`, bytes: () => bytes, close: () => server.close() })
    })
  })

/** One run's figures: calls/s, and the client's CPU time per call (steadier on a busy machine). */
interface Figures {
  readonly callsPerSec: number
  readonly cpuUsPerCall: number
}

/** One run of a bundled client. */
const runOnce = (file: string, env: Record<string, string>): Promise<Figures> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [
      file,
      "--calls",
      String(calls),
      "--concurrency",
      String(concurrency),
      "--payload",
      "16",
      "--warmup",
      "5000"
    ], {
      cwd: root,
      env: { ...process.env, BENCH_STDIO_SERVER: JSON.stringify([process.execPath, echoServer, TAG]), ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (text: string) => stdout += text)
    child.stderr.setEncoding("utf8").on("data", (text: string) => stderr += text)
    child.on("error", reject)
    child.on("close", (code) => {
      const line = stdout.trim().split("\n").at(-1) ?? ""
      if (code !== 0 || !line.startsWith("{")) {
        return reject(new Error(`client exited ${code}: ${stderr.slice(0, 500)}`))
      }
      const { callsPerSec, cpuUsPerCall } = JSON.parse(line)
      resolve({ callsPerSec, cpuUsPerCall })
    })
  })

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const main = async () => {
  const work = mkdtempSync(path.join(tmpdir(), "mcp-fleet-bench-telemetry-"))
  const receiver = await sink()
  try {
    // The base commit's sources, beside this tree's node_modules.
    const before = path.join(work, "before")
    mkdirSync(before)
    execFileSync("sh", ["-c", `git archive ${base} src bench | tar -x -C ${before}`], { cwd: root })
    // The bundles (in `work`) load their packages from this tree's node_modules.
    symlinkSync(path.join(root, "node_modules"), path.join(work, "node_modules"))
    const variants = [
      { name: "before", file: await bundle(before, "bench/client.ts", path.join(work, "out-before")), env: {} },
      { name: "off", file: await bundle(root, "bench/client.ts", path.join(work, "out-now")), env: {} },
      {
        name: "exporter",
        file: path.join(work, "out-now", "main.mjs"),
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_BSP_SCHEDULE_DELAY: "100",
          OTEL_METRIC_EXPORT_INTERVAL: "1000"
        }
      }
    ]
    const results = new Map<string, Array<Figures>>(variants.map((variant) => [variant.name, []]))
    for (let rep = 0; rep < reps; rep++) {
      // Rotating order, so neither drift nor warm caches favour one variant.
      for (let i = 0; i < variants.length; i++) {
        const variant = variants[(rep + i) % variants.length]!
        const figures = await runOnce(variant.file, variant.env)
        results.get(variant.name)!.push(figures)
        process.stderr.write(
          `rep ${
            rep + 1
          }/${reps} ${variant.name}: ${figures.callsPerSec} calls/s, ${figures.cpuUsPerCall} µs CPU/call\n`
        )
      }
    }
    const perSec = (name: string) => median(results.get(name)!.map((figures) => figures.callsPerSec))
    const cpu = (name: string) => median(results.get(name)!.map((figures) => figures.cpuUsPerCall))
    const baseline = perSec("before")
    process.stdout.write(
      `\ntelemetry cost, mcp-fleet client over stdio, c=${concurrency}, ${calls} calls, ${reps} reps (medians)\n`
    )
    for (const variant of variants) {
      const value = perSec(variant.name)
      const ratio = value / baseline
      process.stdout.write(
        `  ${variant.name.padEnd(9)} ${value.toFixed(0).padStart(8)} calls/s  ${(ratio * 100).toFixed(1)} % of before` +
          `  ${cpu(variant.name).toFixed(1).padStart(7)} µs CPU/call\n`
      )
    }
    process.stdout.write(`  exported: ${(receiver.bytes() / 1024).toFixed(0)} KiB of OTLP JSON in all\n`)
    const cost = 1 - perSec("off") / baseline
    const met = cost < 0.03
    process.stdout.write(
      `  target: telemetry off costs < 3 %: ${(cost * 100).toFixed(1)} % ${met ? "met" : "MISSED"}\n`
    )
    if (strict && !met) process.exitCode = 1
  } finally {
    receiver.close()
    rmSync(work, { recursive: true, force: true })
  }
}

await main()
