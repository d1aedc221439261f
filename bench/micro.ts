/**
 * `npm run bench:micro`: what one tool call costs the client, layer by layer, measured in
 * process (`micro/loop.ts`): no pipe and no other process, so the figures hold on a busy
 * machine where calls/s do not. Each layer adds one ingredient to the one before:
 *
 * | layer     | adds                                                                     |
 * | --------- | ------------------------------------------------------------------------ |
 * | `bare`    | the floor: JSON lines, a Map of promises, and the in-process echo server |
 * | `framing` | mcp-fleet's NDJSON path (LineWriter, LineDecoder, JsonRpc validation)    |
 * | `effect`  | each call an `Effect.async` on an Effect worker, resumed from the read   |
 * | `peer`    | `Peer.request`: its entry, id, deadline, interruption handling           |
 * | `client`  | `McpClient.callTool`: params, progress token, the result's check         |
 *
 * Every layer runs in a fresh process per repetition, interleaved; CPU µs/call is the
 * minimum over repetitions (load on the machine only ever adds), bytes are the median.
 * `alloc` is what the JS heap allocated per call, `promoted` what scavenges moved to the
 * old generation per call (what makes the heap, and so the RSS, grow until a full GC).
 *
 *   npm run bench:micro [-- --reps 5] [-- --calls 30000] [-- --layers peer,client]
 *
 * @module
 */
import { execFileSync } from "node:child_process"
import { rmSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bundle } from "./bundle.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const argv = process.argv.slice(2)
const flagValue = (name: string): string | undefined => {
  const i = argv.indexOf(name)
  return i === -1 ? undefined : argv[i + 1]
}
const reps = Number(flagValue("--reps") ?? 5)
const calls = flagValue("--calls") ?? "30000"
const layers = (flagValue("--layers") ?? "bare,framing,effect,peer,client").split(",")
const concurrencies = (flagValue("--concurrency") ?? "1,64").split(",")

// Bundled like the clients of `npm run bench` (`bundle.ts`).
const dir = path.join(root, `node_modules/.cache/mcp-fleet-micro-${process.pid}`)
process.on("exit", () => rmSync(dir, { recursive: true, force: true }))
const loop = await bundle(root, "bench/micro/loop.ts", dir)

interface Result {
  readonly cpuUsPerCall: number
  readonly allocBytesPerCall: number
  readonly promotedBytesPerCall: number
  readonly heapAfterGcMB: number
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!

const runOne = (layer: string, concurrency: string): Result => {
  const warmup = concurrency === "1" ? "3000" : "5000"
  const args = ["--expose-gc", loop, "--layer", layer, "--calls", calls]
  const out = execFileSync(process.execPath, [...args, "--concurrency", concurrency, "--warmup", warmup], {
    cwd: root,
    encoding: "utf8"
  })
  return JSON.parse(out.trim().split("\n").at(-1)!)
}

console.log(`per call, in process, ${calls} calls; cpu: min of ${reps}, bytes: median`)
console.log("c    layer      cpu µs   +µs    alloc B   +B    promoted B   heap MB")
for (const concurrency of concurrencies) {
  const results = new Map<string, Array<Result>>(layers.map((layer) => [layer, []]))
  for (let rep = 0; rep < reps; rep++) {
    // Rotate the order, so that drift on the machine hits every layer alike.
    for (let k = 0; k < layers.length; k++) {
      const layer = layers[(k + rep) % layers.length]!
      results.get(layer)!.push(runOne(layer, concurrency))
    }
  }
  let before: { cpu: number; alloc: number } | undefined
  for (const layer of layers) {
    const rs = results.get(layer)!
    const cpu = Math.min(...rs.map((r) => r.cpuUsPerCall))
    const alloc = median(rs.map((r) => r.allocBytesPerCall))
    const delta = (x: number, y: number | undefined, digits: number) =>
      y === undefined ? "" : `${x - y >= 0 ? "+" : ""}${(x - y).toFixed(digits)}`
    console.log(
      `${concurrency.padEnd(4)} ${layer.padEnd(9)} ${cpu.toFixed(2).padStart(7)} ${
        delta(cpu, before?.cpu, 2).padStart(6)
      } ${String(alloc).padStart(9)} ${delta(alloc, before?.alloc, 0).padStart(6)} ${
        String(median(rs.map((r) => r.promotedBytesPerCall))).padStart(11)
      } ${median(rs.map((r) => r.heapAfterGcMB)).toFixed(1).padStart(9)}`
    )
    before = { cpu, alloc }
  }
}
