/**
 * The baseline of the fleet start benchmark: plain Node starts K echo servers at once and
 * takes each through initialize, notifications/initialized and tools/list. Prints one JSON
 * line: { ms, rssMB } at the moment the last server listed its tools, and what each server
 * added to its memory (`perServer`, see `memory.ts`).
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { memory, perServer } from "./memory.js"

const K = Number(process.argv[2])
const server = fileURLToPath(new URL("../fixtures/echo-server.mjs", import.meta.url))

// One request at a time per server: the answer is the next line of its stdout.
const start = (child: ChildProcess) =>
  new Promise<void>((resolve, reject) => {
    let buffered = ""
    let step = 0
    const write = (message: object) => child.stdin!.write(JSON.stringify(message) + "\n")
    child.on("error", reject)
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk
      for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
        const message = JSON.parse(buffered.slice(0, end))
        buffered = buffered.slice(end + 1)
        if (message.id === 1 && step === 0) {
          step = 1
          write({ jsonrpc: "2.0", method: "notifications/initialized" })
          write({ jsonrpc: "2.0", id: 2, method: "tools/list" })
        } else if (message.id === 2 && step === 1) {
          step = 2
          resolve()
        }
      }
    })
    write({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bare", version: "0" } }
    })
  })

const spawnAll = () =>
  Array.from({ length: K }, () => spawn(process.execPath, [server], { stdio: ["pipe", "pipe", "inherit"] }))
const began = performance.now()
const children = spawnAll()
await Promise.all(children.map(start))
const ms = performance.now() - began
const rssMB = process.memoryUsage().rss / 1024 / 1024
// K more, as the fleet side does, for what each server costs.
const before = memory()
const more = spawnAll()
await Promise.all(more.map(start))
const each = perServer(before, memory(), K)
for (const child of more) children.push(child)
await Promise.all(children.map((child) =>
  new Promise((resolve) => {
    child.on("exit", resolve)
    child.stdin!.end()
  })
))
console.log(JSON.stringify({ ms, rssMB, perServer: each }))
