/**
 * The bare baseline client, with no validation. Over stdio: `child_process.spawn`, NDJSON
 * framing and a `Map` of pending requests keyed by id. Over HTTP (`--url`): `node:http` with
 * a keep-alive `Agent` (a socket per call in flight), one POST per message, the body read
 * whole and parsed as JSON or as an SSE stream. It is the physical limit the others are
 * compared with. Same contract as `bench/client.ts`; prints client "bare".
 *
 * @module
 */
import { spawn } from "node:child_process"
import * as http from "node:http"
import * as https from "node:https"
import { drive, fail, now, parseArgs, Run, serverCommand } from "./shared.js"

/** One MCP connection, whichever the transport. */
interface Connection {
  readonly request: (method: string, params: unknown) => Promise<any>
  readonly notify: (method: string) => Promise<void>
  /** Ends the session and releases everything (the server process, the sockets). */
  readonly close: () => Promise<void>
  /** Releases everything at once, after a failure. */
  readonly abort: () => void
}

interface Pending {
  readonly resolve: (result: any) => void
  readonly reject: (error: Error) => void
}

const resultOf = (msg: any): any => {
  if (msg.error !== undefined) throw new Error(`JSON-RPC error ${msg.error.code}: ${msg.error.message}`)
  return msg.result
}

// ---- stdio ------------------------------------------------------------------------------

const connectStdio = (): Connection => {
  const server = serverCommand()
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
    try {
      p.resolve(resultOf(msg))
    } catch (e) {
      p.reject(e as Error)
    }
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

  return {
    request: (method, params) =>
      new Promise((resolve, reject) => {
        const id = nextId++
        pending.set(id, { resolve, reject })
        child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
      }),
    notify: async (method) => {
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method }) + "\n")
    },
    // End stdin, the server exits; bounded by a SIGKILL.
    close: async () => {
      child.stdin.end()
      const killTimer = setTimeout(() => child.kill("SIGKILL"), 2000)
      await exited
      clearTimeout(killTimer)
    },
    abort: () => child.kill("SIGKILL")
  }
}

// ---- Streamable HTTP --------------------------------------------------------------------

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
}

/** The JSON-RPC messages of an SSE body: each event's `data:` lines joined; other fields ignored. */
const sseMessages = (text: string): Array<any> => {
  const messages: Array<any> = []
  let data: Array<string> = []
  const dispatch = () => {
    if (data.length > 0) messages.push(JSON.parse(data.join("\n")))
    data = []
  }
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
    if (line === "") dispatch()
    else if (line.startsWith("data:")) data.push(line.slice(line.charCodeAt(5) === 0x20 ? 6 : 5))
  }
  dispatch()
  return messages
}

const connectHttp = (url: string, concurrency: number): Connection => {
  const target = new URL(url)
  const lib = target.protocol === "https:" ? https : http
  // One socket per call in flight, kept open between calls.
  const agent = new lib.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency, noDelay: true })
  const path = target.pathname + target.search
  let sessionId: string | undefined
  let protocolVersion: string | undefined
  let nextId = 1

  const send = (method: "POST" | "DELETE", body: string | undefined): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { accept: "application/json, text/event-stream" }
      if (body !== undefined) {
        headers["content-type"] = "application/json"
        headers["content-length"] = Buffer.byteLength(body)
      }
      if (sessionId !== undefined) headers["mcp-session-id"] = sessionId
      if (protocolVersion !== undefined) headers["mcp-protocol-version"] = protocolVersion
      const req = lib.request({ agent, hostname: target.hostname, port: target.port, path, method, headers }, (res) => {
        const chunks: Array<Buffer> = []
        let length = 0
        res.on("data", (chunk: Buffer) => {
          chunks.push(chunk)
          length += chunk.length
        })
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length)
          }))
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end(body)
    })

  const unexpected = (what: string, answer: Answer): Error =>
    new Error(`${what}: HTTP ${answer.status}: ${answer.body.toString("utf8", 0, 200)}`)

  return {
    request: async (method, params) => {
      const id = nextId++
      const answer = await send("POST", JSON.stringify({ jsonrpc: "2.0", id, method, params }))
      if (answer.status !== 200) throw unexpected(method, answer)
      if (method === "initialize") {
        const header = answer.headers["mcp-session-id"]
        if (typeof header === "string") sessionId = header
      }
      const text = answer.body.toString("utf8")
      const sse = answer.headers["content-type"]?.startsWith("text/event-stream") === true
      // The response to this request; anything else the server says on the stream is ignored.
      const messages: Array<any> = sse ? sseMessages(text) : [JSON.parse(text)].flat()
      const response = messages.find((m) =>
        m !== null && typeof m === "object" && m.id === id && m.method === undefined
      )
      if (response === undefined) {
        throw new Error(`${method}: no response with id ${id} in the ${sse ? "SSE" : "JSON"} body`)
      }
      const result = resultOf(response)
      if (method === "initialize") protocolVersion = result?.protocolVersion
      return result
    },
    notify: async (method) => {
      const answer = await send("POST", JSON.stringify({ jsonrpc: "2.0", method }))
      if (answer.status !== 202 && answer.status !== 200) throw unexpected(method, answer)
    },
    // End the session (DELETE), then close the sockets.
    close: async () => {
      if (sessionId !== undefined) {
        const answer = await send("DELETE", undefined)
        if (answer.status !== 200 && answer.status !== 204 && answer.status !== 405) throw unexpected("DELETE", answer)
      }
      agent.destroy()
    },
    abort: () => agent.destroy()
  }
}

// ---- the run ----------------------------------------------------------------------------

const args = parseArgs()
const run = new Run(args)

const connectStarted = now()
const connection = args.url === undefined ? connectStdio() : connectHttp(args.url, args.concurrency)

try {
  await connection.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "bench", version: "0.0.0" }
  })
  await connection.notify("notifications/initialized")
  const connectMs = now() - connectStarted

  const totalMs = await drive(run, async (text) => {
    const result = await connection.request("tools/call", { name: args.tool, arguments: { text } })
    return result?.content?.[0]?.text
  })

  await connection.close()
  run.report("bare", connectMs, totalMs)
} catch (e) {
  connection.abort()
  fail(e instanceof Error ? e.message : String(e))
}
