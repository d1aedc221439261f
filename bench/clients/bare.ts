/**
 * The bare baseline client: `child_process.spawn`, NDJSON framing and a `Map` of pending
 * requests keyed by id, with no validation. It is the physical limit the others are
 * compared with. Same contract as `bench/client.ts`; prints client "bare".
 *
 * @module
 */
import { spawn } from "node:child_process"
import { drive, fail, now, parseArgs, Run, serverCommand, TOOL } from "./shared.js"

interface Pending {
  readonly resolve: (result: any) => void
  readonly reject: (error: Error) => void
}

const args = parseArgs()
const server = serverCommand()
const run = new Run(args)

const connectStarted = now()
const child = spawn(server.command, server.args, { stdio: ["pipe", "pipe", "inherit"] })
const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
child.on("error", (e) => fail(`spawn ${server.command}: ${e.message}`))
child.stdin.on("error", (e) => fail(`server stdin: ${e.message}`))

const pending = new Map<number, Pending>()
let nextId = 1

const onMessage = (msg: any): void => {
  const p = pending.get(msg.id)
  if (p === undefined) return // notifications, requests from the server: ignored
  pending.delete(msg.id)
  if (msg.error !== undefined) p.reject(new Error(`JSON-RPC error ${msg.error.code}: ${msg.error.message}`))
  else p.resolve(msg.result)
}

// NDJSON framing: scan only the new chunk; join a split line's pieces once it ends.
let parts: Array<Buffer> = []
let partsLength = 0
child.stdout.on("data", (chunk: Buffer) => {
  let start = 0
  let nl = chunk.indexOf(0x0a)
  while (nl !== -1) {
    let line = chunk.subarray(start, nl)
    if (partsLength > 0) {
      parts.push(line)
      line = Buffer.concat(parts, partsLength + line.length)
      parts = []
      partsLength = 0
    }
    if (line.length > 0) onMessage(JSON.parse(line.toString("utf8")))
    start = nl + 1
    nl = chunk.indexOf(0x0a, start)
  }
  if (start < chunk.length) {
    parts.push(chunk.subarray(start))
    partsLength += chunk.length - start
  }
})
child.stdout.on("end", () => {
  for (const p of pending.values()) p.reject(new Error("server closed its stdout"))
  pending.clear()
})

const request = (method: string, params: unknown): Promise<any> =>
  new Promise((resolve, reject) => {
    const id = nextId++
    pending.set(id, { resolve, reject })
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
  })

try {
  await request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "bench", version: "0.0.0" }
  })
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
  const connectMs = now() - connectStarted

  const totalMs = await drive(run, async (text) => {
    const result = await request("tools/call", { name: TOOL, arguments: { text } })
    return result?.content?.[0]?.text
  })

  // Close: end stdin, the server exits; bounded by a SIGKILL.
  child.stdin.end()
  const killTimer = setTimeout(() => child.kill("SIGKILL"), 2000)
  await exited
  clearTimeout(killTimer)
  run.report("bare", connectMs, totalMs)
} catch (e) {
  child.kill("SIGKILL")
  fail(e instanceof Error ? e.message : String(e))
}
