// Every text a server sends unasked passes the same masking as its logs: progress messages
// holding its secret (plain, base64, URL-encoded) are masked where `call` prints them and
// where the gateway forwards them over stdio and HTTP.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { CLI, cliEnv, config, leavesNothing, MARK, run, tempDir } from "../support/cli.js"
import { httpGateway, tempConfig } from "../support/gateway.js"

const mark = `masking-progress-${process.pid}-${Date.now()}`
const TOKEN = "tok/progress+9f3a1c77=="
const FORMS = [TOKEN, Buffer.from(TOKEN).toString("base64"), encodeURIComponent(TOKEN)]
const fixture = fileURLToPath(new URL("../fixtures/progress-secret.mjs", import.meta.url))

afterAll(() => leavesNothing(mark))

const project = () =>
  tempDir({
    ".mcp.json": config({
      leaky: { command: process.execPath, args: [fixture], env: { API_TOKEN: TOKEN, [MARK]: mark } }
    })
  })

const expectMasked = (text: string) => {
  for (const form of FORMS) expect(text).not.toContain(form)
}

describe("a server's progress messages are masked", () => {
  it("by call, which prints them", async () => {
    const result = await run(["call", "mcp__leaky__work"], { cwd: project(), mark })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("done")
    expect(result.stderr).toContain("progress: 1/2 using *** *** ***")
    expectMasked(result.stdout + result.stderr)
  })

  it("by the gateway over stdio, which forwards them", async () => {
    const client = new Client({ name: "masking-progress", version: "1.0.0" })
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio"],
      cwd: project(),
      env: { ...process.env, ...cliEnv(), [MARK]: mark } as Record<string, string>,
      stderr: "pipe"
    })
    try {
      await client.connect(transport)
      const messages: Array<string> = []
      const result = await client.callTool({ name: "mcp__leaky__work", arguments: {} }, undefined, {
        onprogress: (progress) => messages.push(progress.message ?? "")
      })
      expect(result.content).toEqual([{ type: "text", text: "done" }])
      expect(messages).toEqual(["using *** *** ***"])
    } finally {
      await client.close()
    }
  })

  it("by the gateway over HTTP, which forwards them", async () => {
    const file = tempConfig({
      leaky: { command: process.execPath, args: [fixture], env: { API_TOKEN: TOKEN, [MARK]: mark } }
    })
    const gateway = await httpGateway(file.file)
    const client = new Client({ name: "masking-progress", version: "1.0.0" })
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)))
      const messages: Array<string> = []
      await client.callTool({ name: "mcp__leaky__work", arguments: {} }, undefined, {
        onprogress: (progress) => messages.push(progress.message ?? "")
      })
      expect(messages).toEqual(["using *** *** ***"])
    } finally {
      await client.close()
      await gateway.close()
      file.remove()
    }
  })
})
