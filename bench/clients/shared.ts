/**
 * What the three benchmark clients (bare, sdk, mcp-fleet) share: the command line, the
 * server to reach (a stdio server to spawn, or `--url` of a running HTTP one), the payloads, the "keep C in flight" driver, the echo check,
 * latency percentiles and the one result line they print.
 *
 * @module
 */
import { performance } from "node:perf_hooks"
import * as v8 from "node:v8"

/**
 * The options every client understands: `--calls N --concurrency C [--payload BYTES]
 * [--warmup W] [--tool NAME] [--url URL] [--protocol-version V]`. The W warm-up calls are made and checked before the timed N,
 * so that every client is measured in steady state (JIT warm).
 * With `url`, the client speaks Streamable HTTP to the server already running there instead
 * of spawning `BENCH_STDIO_SERVER`.
 */
export interface BenchArgs {
  readonly calls: number
  readonly concurrency: number
  readonly payloadBytes: number
  readonly warmup: number
  /** The tool to call (`--tool`, default `echo`): behind the gateway it is `mcp__echo__echo`. */
  readonly tool: string
  readonly url: string | undefined
  /** The revision to speak (`--protocol-version`); default: the client's own choice. */
  readonly protocolVersion: string | undefined
}

/** The result line a client prints, as one JSON object. */
export interface BenchResult {
  readonly client: string
  readonly transport: "stdio" | "http"
  readonly calls: number
  readonly concurrency: number
  readonly payloadBytes: number
  readonly connectMs: number
  readonly totalMs: number
  readonly callsPerSec: number
  readonly p50us: number
  readonly p99us: number
  readonly rssMB: number
  /** The resident set once connected, before the first call (`Run.connected`). */
  readonly startRssMB: number
  /** Warm-up calls made before the timed ones. */
  readonly warmup: number
  /** The client process's CPU time (user + system) over the timed calls, per call. */
  readonly cpuUsPerCall: number
  /**
   * Bytes allocated on the JS heap over the timed calls, per call: the growth of the used
   * heap plus what each garbage collection in between freed (v8.GCProfiler).
   */
  readonly allocBytesPerCall: number
}

/** The tool every client calls unless told otherwise. */
const TOOL = "echo"

/** Monotonic milliseconds. */
export const now = (): number => performance.now()

const positiveInt = (flag: string, raw: string | undefined): number => {
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 1) fail(`${flag} needs a positive integer, got ${JSON.stringify(raw)}`)
  return n
}

const httpUrl = (flag: string, raw: string | undefined): string => {
  let url: URL | undefined
  try {
    url = new URL(raw ?? "")
  } catch {
    // reported below
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    fail(`${flag} needs an http(s) URL, got ${JSON.stringify(raw)}`)
  }
  return url.href
}

/** Parses the client flags; unknown flags are ignored. */
export const parseArgs = (argv: ReadonlyArray<string> = process.argv.slice(2)): BenchArgs => {
  let calls = 1000
  let concurrency = 1
  let payloadBytes = 16
  let warmup = 0
  let tool = TOOL
  let url: string | undefined
  let protocolVersion: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split("=", 2) as [string, string | undefined]
    const value = (): string | undefined => inline ?? argv[++i]
    if (flag === "--calls") calls = positiveInt(flag, value())
    else if (flag === "--concurrency") concurrency = positiveInt(flag, value())
    else if (flag === "--payload") payloadBytes = positiveInt(flag, value())
    else if (flag === "--warmup") warmup = positiveInt(flag, value())
    else if (flag === "--tool") tool = value() ?? TOOL
    else if (flag === "--url") url = httpUrl(flag, value())
    else if (flag === "--protocol-version") protocolVersion = value()
  }
  return { calls, concurrency, payloadBytes, warmup, tool, url, protocolVersion }
}

/** The server to spawn, from the JSON array in env `BENCH_STDIO_SERVER`. */
export const serverCommand = (): { readonly command: string; readonly args: Array<string> } => {
  const raw = process.env["BENCH_STDIO_SERVER"]
  if (raw === undefined || raw === "") {
    fail("BENCH_STDIO_SERVER is not set (a JSON array, e.g. [\"node\",\"bench/fixtures/echo-server.mjs\"])")
  }
  let argv: unknown
  try {
    argv = JSON.parse(raw)
  } catch {
    fail(`BENCH_STDIO_SERVER is not JSON: ${raw}`)
  }
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string")) {
    fail(`BENCH_STDIO_SERVER must be a non-empty JSON array of strings: ${raw}`)
  }
  return { command: argv[0], args: argv.slice(1) }
}

/** Prints a message on stderr and exits 1 (a spawned server sees its stdin end and exits too). */
export function fail(message: string): never {
  process.stderr.write(`bench client: ${message}\n`)
  process.exit(1)
}

/**
 * One benchmark run: payloads, per-call latencies and the echo check. Each call's text is
 * unique (it starts with the call's index) so a response routed to the wrong caller fails.
 */
export class Run {
  readonly latencies: Float64Array
  private readonly filler: string
  private recorded = 0
  private meter: { readonly cpu: NodeJS.CpuUsage; readonly heap: number; readonly gc: v8.GCProfiler } | undefined
  private measured: { readonly cpuUs: number; readonly allocBytes: number } | undefined
  private startRss = NaN

  constructor(readonly args: BenchArgs) {
    this.latencies = new Float64Array(args.calls)
    this.filler = "x".repeat(args.payloadBytes)
  }

  /** The text sent by call `i`: exactly `payloadBytes` ASCII characters. */
  text(i: number): string {
    const tag = `${i}:`
    return tag.length >= this.filler.length ? this.filler : tag + this.filler.slice(tag.length)
  }

  /** Records call `i`, started at `startedAt` (ms), and checks the echoed text: throws on a mismatch. */
  done(i: number, startedAt: number, sent: string, got: unknown): void {
    this.latencies[this.recorded++] = now() - startedAt
    if (got !== sent) {
      const shown = typeof got === "string"
        ? `${got.length} chars starting ${JSON.stringify(got.slice(0, 24))}`
        : JSON.stringify(got)?.slice(0, 200)
      throw new Error(
        `call ${i}: echo mismatch: sent ${sent.length} chars starting ${
          JSON.stringify(sent.slice(0, 24))
        }, got ${shown}`
      )
    }
  }

  /** Checks a warm-up call's echo: throws on a mismatch, records nothing. */
  check(i: number, sent: string, got: unknown): void {
    if (got !== sent) {
      throw new Error(
        `warm-up call ${i}: echo mismatch: sent ${JSON.stringify(sent.slice(0, 24))}, got ${
          JSON.stringify(got)?.slice(0, 80)
        }`
      )
    }
  }

  /** Notes the resident set at connection: call once connected, before the first call. */
  connected(): void {
    this.startRss = process.memoryUsage.rss()
  }

  /** Starts measuring CPU time and allocation: call just before the first timed call. */
  startTimed(): void {
    const gc = new v8.GCProfiler()
    gc.start()
    this.meter = { cpu: process.cpuUsage(), heap: v8.getHeapStatistics().used_heap_size, gc }
  }

  /** Stops measuring: call just after the last timed call. */
  stopTimed(): void {
    if (this.meter === undefined) return
    const cpu = process.cpuUsage(this.meter.cpu)
    const heap = v8.getHeapStatistics().used_heap_size
    let freed = 0
    for (const gc of this.meter.gc.stop()?.statistics ?? []) {
      freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize
    }
    this.measured = { cpuUs: cpu.user + cpu.system, allocBytes: heap - this.meter.heap + freed }
  }

  /** Prints the result line on stdout. */
  report(client: string, connectMs: number, totalMs: number): void {
    if (this.recorded !== this.args.calls) fail(`only ${this.recorded} of ${this.args.calls} calls completed`)
    const sorted = this.latencies.slice().sort()
    const pct = (p: number): number =>
      Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 1000)
    const result: BenchResult = {
      client,
      transport: this.args.url === undefined ? "stdio" : "http",
      calls: this.args.calls,
      concurrency: this.args.concurrency,
      payloadBytes: this.args.payloadBytes,
      connectMs: round(connectMs, 2),
      totalMs: round(totalMs, 2),
      callsPerSec: round((this.args.calls * 1000) / totalMs, 1),
      p50us: pct(50),
      p99us: pct(99),
      // Peak resident set of this client process (maxRSS is in KiB).
      rssMB: round(process.resourceUsage().maxRSS / 1024, 1),
      startRssMB: round(this.startRss / 1024 / 1024, 1),
      warmup: this.args.warmup,
      cpuUsPerCall: round((this.measured?.cpuUs ?? NaN) / this.args.calls, 1),
      allocBytesPerCall: Math.round((this.measured?.allocBytes ?? NaN) / this.args.calls)
    }
    process.stdout.write(JSON.stringify(result) + "\n")
    // The client should now exit by itself; if a handle keeps it alive, say so and leave.
    setTimeout(() => {
      process.stderr.write(`bench client: ${client} still alive 5 s after its result; forcing exit\n`)
      process.exit(0)
    }, 5000).unref()
  }
}

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits

/**
 * `drive` with an SDK-shaped client (the official SDK, v1 or v2): calls the tool with the
 * text and gives back the text of the result's first content block.
 */
export const driveTool = (
  run: Run,
  callTool: (params: { name: string; arguments: { text: string } }) => Promise<object>
): Promise<number> =>
  drive(run, async (text) => {
    const result = await callTool({ name: run.args.tool, arguments: { text } })
    const content = (result as { readonly content?: Array<{ type: string; text?: string }> }).content
    return content?.[0]?.text
  })

/**
 * Runs `args.warmup` checked calls, then `args.calls` timed ones, keeping
 * `args.concurrency` in flight, timing and checking each. `call` returns the text the server
 * echoed. Resolves to the total ms of the timed calls.
 */
export const drive = async (run: Run, call: (text: string) => Promise<unknown>): Promise<number> => {
  const { calls, concurrency, warmup } = run.args
  const inFlight = (n: number) => Math.max(1, Math.min(concurrency, n))
  run.connected()
  let next = 0
  const warmer = async (): Promise<void> => {
    while (next < warmup) {
      const i = next++
      const sent = run.text(i)
      run.check(i, sent, await call(sent))
    }
  }
  await Promise.all(Array.from({ length: inFlight(warmup) }, warmer))
  next = 0
  const worker = async (): Promise<void> => {
    while (next < calls) {
      const i = next++
      const sent = run.text(i)
      const startedAt = now()
      run.done(i, startedAt, sent, await call(sent))
    }
  }
  run.startTimed()
  const started = now()
  await Promise.all(Array.from({ length: inFlight(calls) }, worker))
  const totalMs = now() - started
  run.stopTimed()
  return totalMs
}
