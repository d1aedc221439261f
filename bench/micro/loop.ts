/**
 * One in-process measurement of `bench/micro.ts`: N tool calls at concurrency C against the
 * echo handler of the fixtures, answered in this same process, so that only the client's
 * own CPU and heap are measured, with no pipe, child process or other process's load.
 *
 *   node loop.mjs --layer LAYER --calls N --concurrency C [--warmup W]
 *
 * LAYER is how far up the stack a call goes:
 * - `bare`    — a plain Node client: JSON lines, a Map of pending promises (the floor);
 * - `framing` — `bare`'s loop through mcp-fleet's NDJSON path (LineWriter, LineDecoder, JsonRpc validation);
 * - `effect`  — `framing` with each call an `Effect.async` resumed from the read callback;
 * - `peer`    — `Peer.request` over that transport;
 * - `client`  — `McpClient.callTool` over it.
 *
 * The fake server answers each write in a later macrotask, as a pipe would: one chunk of
 * lines per write. Prints one JSON line: CPU µs per call, bytes allocated per call on the JS
 * heap, bytes promoted to the old generation per call by scavenges, and heap used after a
 * full collection.
 *
 * @module
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { PassThrough, Writable } from "node:stream"
import * as v8 from "node:v8"
import * as Ndjson from "../../src/internal/transport/ndjson.js"
import * as StdioServer from "../../src/internal/transport/stdioServer.js"
import * as JsonRpc from "../../src/JsonRpc.js"
import * as McpClient from "../../src/McpClient.js"
import * as Peer from "../../src/Peer.js"
import { Inbox, Transport } from "../../src/Transport.js"
// @ts-expect-error: a plain .mjs fixture without types
import { handle } from "../fixtures/echo-handler.mjs"

const flag = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name)
  return i === -1 ? fallback : process.argv[i + 1]!
}
const layer = flag("--layer", "client")
const calls = Number(flag("--calls", "20000"))
const concurrency = Number(flag("--concurrency", "64"))
const warmup = Number(flag("--warmup", "5000"))

/** The fake server: each write is answered, line by line, as one chunk a macrotask later. */
const echoServer = (answer: (chunk: Buffer) => void) => (text: string) => {
  let out = ""
  for (const line of text.split("\n")) {
    if (line === "") continue
    const response = handle(JSON.parse(line))
    if (response !== undefined) out += JSON.stringify(response) + "\n"
  }
  if (out !== "") setImmediate(() => answer(Buffer.from(out)))
}

/** A connected pair of streams: what the client writes reaches the echo server, whose answers come back. */
const loopback = () => {
  const input = new PassThrough()
  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      server(chunk.toString("utf8"))
      callback()
    }
  })
  const server = echoServer((chunk) => input.write(chunk))
  return { input, output }
}

/** Runs `count` calls of `call`, `concurrency` at a time, as promises. */
const drivePromises = async (count: number, call: (i: number) => Promise<unknown>) => {
  let next = 0
  const worker = async () => {
    while (next < count) await call(next++)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

/** Runs `count` calls of `call`, `concurrency` at a time, as Effect workers (as bench/client.ts does). */
const driveEffects = (count: number, call: (i: number) => Effect.Effect<unknown, unknown>) => {
  let next = 0
  const worker = Effect.whileLoop({ while: () => next < count, body: () => call(next++), step: () => {} })
  return Effect.all(Array.from({ length: Math.min(concurrency, count) }, () => worker), {
    concurrency: "unbounded",
    discard: true
  })
}

const text = (i: number) => `${i}:xxxxxxxxxxxxxxxx`.slice(0, 16)
const echoArgs = (i: number) => ({ name: "echo", arguments: { text: text(i) } })

/** Measures `body` (which runs `calls` calls): CPU, allocation, promotion. */
const measure = async (body: () => Promise<void>) => {
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  const profiler = new v8.GCProfiler()
  profiler.start()
  const heap0 = v8.getHeapStatistics().used_heap_size
  const cpu0 = process.cpuUsage()
  await body()
  const cpu = process.cpuUsage(cpu0)
  const heap1 = v8.getHeapStatistics().used_heap_size
  let freed = 0
  let promoted = 0
  let scavenges = 0
  for (const event of profiler.stop()?.statistics ?? []) {
    freed += event.beforeGC.heapStatistics.usedHeapSize - event.afterGC.heapStatistics.usedHeapSize
    if (event.gcType === "Scavenge") {
      scavenges++
      const old = (stats: typeof event.beforeGC) =>
        stats.heapSpaceStatistics.find((space) => space.spaceName === "old_space")?.spaceUsedSize ?? 0
      promoted += old(event.afterGC) - old(event.beforeGC)
    }
  }
  gc?.()
  return {
    layer,
    calls,
    concurrency,
    cpuUsPerCall: Math.round(((cpu.user + cpu.system) / calls) * 100) / 100,
    allocBytesPerCall: Math.round((heap1 - heap0 + freed) / calls),
    promotedBytesPerCall: Math.round(promoted / calls),
    scavenges,
    heapAfterGcMB: Math.round(v8.getHeapStatistics().used_heap_size / 1048576 * 10) / 10,
    rssMB: Math.round(process.resourceUsage().maxRSS / 1024 * 10) / 10
  }
}

/** `bare`: what a plain Node client does over the same loop. */
const runBare = async () => {
  const { input, output } = loopback()
  const pending = new Map<number, (result: unknown) => void>()
  let buffered = ""
  input.on("data", (chunk: Buffer) => {
    const lines = (buffered + chunk.toString("utf8")).split("\n")
    buffered = lines.pop()!
    for (const line of lines) {
      const message = JSON.parse(line)
      const resolve = pending.get(message.id)
      pending.delete(message.id)
      resolve?.(message.result)
    }
  })
  let queued: Array<string> = []
  let nextId = 0
  const call = (i: number) =>
    new Promise((resolve) => {
      const id = nextId++
      pending.set(id, resolve)
      queued.push(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: echoArgs(i) }) + "\n")
      if (queued.length === 1) {
        setImmediate(() => {
          output.write(queued.join(""))
          queued = []
        })
      }
    })
  await drivePromises(warmup, call)
  return measure(() => drivePromises(calls, call))
}

/** The NDJSON transport of mcp-fleet over the loop (the server side's, which is the same path). */
const transport = Effect.map(Effect.sync(loopback), ({ input, output }) => StdioServer.make(input, output))

/** `framing`: the loop through mcp-fleet's NDJSON read and write path, correlated by a plain Map. */
const runFraming = async () => {
  const { input, output } = loopback()
  const inbox = new Inbox("loop")
  const pending = new Map<JsonRpc.RequestId, (result: unknown) => void>()
  inbox.listen({
    message: (message) => {
      if (!("id" in message) || "method" in message) return
      const resolve = pending.get(message.id as JsonRpc.RequestId)
      pending.delete(message.id as JsonRpc.RequestId)
      resolve?.("result" in message ? message.result : message)
    },
    closed: () => {}
  })
  Ndjson.read(input, inbox, { maxMessageBytes: JsonRpc.DEFAULT_MAX_MESSAGE_BYTES, onBad: () => {}, onEnd: () => {} })
  const writer = new Ndjson.LineWriter((text) => output.write(text))
  let nextId = 0
  const send = (i: number, resolve: (result: unknown) => void) => {
    const id = nextId++
    pending.set(id, resolve)
    writer.push({ jsonrpc: "2.0", id, method: "tools/call", params: echoArgs(i) })
  }
  if (layer === "framing") {
    const call = (i: number) => new Promise((resolve) => send(i, resolve))
    await drivePromises(warmup, call)
    return measure(() => drivePromises(calls, call))
  }
  const call = (i: number) => Effect.async<unknown>((resume) => send(i, (result) => resume(Effect.succeed(result))))
  await Effect.runPromise(driveEffects(warmup, call))
  return measure(() => Effect.runPromise(driveEffects(calls, call)))
}

/** `peer` and `client`: the Peer, or the McpClient over it, on the loop. */
const runStack = () =>
  Effect.gen(function*() {
    let call: (i: number) => Effect.Effect<unknown, unknown>
    if (layer === "peer") {
      const peer = yield* Peer.make()
      call = (i) => peer.request("tools/call", echoArgs(i))
    } else {
      const client = yield* McpClient.make({ clientInfo: { name: "micro", version: "0" } })
      call = (i) => client.callTool("echo", { text: text(i) })
    }
    yield* driveEffects(warmup, call)
    return yield* Effect.promise(() => measure(() => Effect.runPromise(driveEffects(calls, call))))
  }).pipe(Effect.scoped, Effect.provide(Layer.scoped(Transport, Effect.flatten(transport))))

const result = layer === "bare"
  ? await runBare()
  : layer === "framing" || layer === "effect"
  ? await runFraming()
  : await Effect.runPromise(runStack())
process.stdout.write(JSON.stringify(result) + "\n")
process.exit(0)
