// A fronted server's progress leaves the gateway before the answer it precedes, even when
// the server answers in the same breath: the Peer delivers a request's answer only once the
// callbacks of its progress (the gateway's forwarding) have ended. Over stdio and over
// Streamable HTTP, read raw: the SDK client (1.32) itself drops progress that arrives in
// the same read as its answer (it handles notifications a microtask later), so it cannot
// judge the order.
import * as cp from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { CLI, cliEnv, config, leavesNothing, MARK, tempDir } from "../support/cli.js"
import { httpGateway, tempConfig } from "../support/gateway.js"
import { postMcp } from "../support/httpServer.js"

const mark = `gateway-progress-order-${process.pid}-${Date.now()}`
const fixture = fileURLToPath(new URL("../fixtures/progress-now.mjs", import.meta.url))
const server = { command: process.execPath, args: [fixture], env: { [MARK]: mark } }
const CALLS = 5

type Message = { readonly id?: unknown; readonly method?: string; readonly params?: any; readonly result?: any }

afterAll(() => leavesNothing(mark))

const callOf = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "mcp__now__work", arguments: {}, _meta: { progressToken: `p${id}` } }
})
const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "progress-order", version: "1" } }
}

// What came for call `id`, in order: its progress values, then "answer".
const orderOf = (messages: ReadonlyArray<Message>, id: number) =>
  messages.flatMap((m) =>
    m.params?.progressToken === `p${id}` ? [m.params.progress] : m.id === id && m.result ? ["answer"] : []
  )

describe("the gateway forwards a call's progress before its answer", () => {
  it("over stdio", async () => {
    const child = cp.spawn(CLI[0], [...CLI.slice(1), "serve", "--stdio"], {
      cwd: tempDir({ ".mcp.json": config({ now: server }) }),
      env: { ...process.env, ...cliEnv(), [MARK]: mark },
      stdio: ["pipe", "pipe", "ignore"]
    })
    const messages: Array<Message> = []
    const waiters: Array<() => void> = []
    createInterface({ input: child.stdout }).on("line", (line) => {
      messages.push(JSON.parse(line))
      waiters.splice(0).forEach((wake) => wake())
    })
    const send = (message: object) => child.stdin.write(JSON.stringify(message) + "\n")
    const answered = (id: number) =>
      new Promise<void>((resolve) => {
        const check = () => messages.some((m) => m.id === id) ? resolve() : waiters.push(check)
        check()
      })
    try {
      send(initialize)
      await answered(0)
      send({ jsonrpc: "2.0", method: "notifications/initialized" })
      for (let id = 1; id <= CALLS; id++) {
        send(callOf(id))
        await answered(id)
        expect(orderOf(messages, id)).toEqual([1, 2, 3, "answer"])
      }
    } finally {
      child.kill()
    }
  })

  it("over HTTP", async () => {
    const file = tempConfig({ now: server })
    const gateway = await httpGateway(file.file)
    const post = async (message: object, session?: string) => {
      const response = await postMcp(gateway.url, JSON.stringify(message), session)
      const text = response.text
      const sse = response.contentType.includes("text/event-stream")
      const messages: Array<Message> = sse
        // Every event that carries a message (the priming event carries none).
        ? text.split("\n").map((line) => line.startsWith("data:") ? line.slice(5).trim() : "")
          .filter((data) => data !== "").map((data) => JSON.parse(data))
        : text === ""
        ? []
        : [JSON.parse(text)]
      return { session: response.session ?? undefined, messages }
    }
    try {
      const { session } = await post(initialize)
      await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session)
      for (let id = 1; id <= CALLS; id++) {
        const { messages } = await post(callOf(id), session)
        expect(orderOf(messages, id)).toEqual([1, 2, 3, "answer"])
      }
    } finally {
      await gateway.close()
      file.remove()
    }
  })
})
