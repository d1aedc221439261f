// Lazy servers end to end: the CLI on a config whose servers are lazy (`"lazy": true` at the
// top of the file), each server a real stdio fixture that notes every start in a log file, so
// the test sees exactly when the fleet spawned it. One CLI config dir for the whole file: the
// catalog cache a run leaves is what the next run lists from.
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { CLI, cliEnv, config, MARK, marked, run, tempDir } from "../support/cli.js"
import { sdkClient } from "../support/gateway.js"
import { hangGuard } from "../support/guard.js"
import { survivors, waitGone } from "../support/processes.js"

const LAZY = fileURLToPath(new URL("../fixtures/lazy-server.mjs", import.meta.url))

const mark = "lazy-e2e"
const dir = tempDir()
const log = path.join(dir, "starts.log")

// Who started, one label per start, in order.
const starts = (): Array<string> =>
  fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").filter(Boolean).map((line) => line.split(" ")[0]!) : []

const server = (label: string, extra: Record<string, unknown> = {}, tools: ReadonlyArray<string> = []) =>
  marked({ command: process.execPath, args: [LAZY, label, log, ...tools], ...extra }, mark)

const writeConfig = (docsTools: ReadonlyArray<string> = []) =>
  fs.writeFileSync(
    path.join(dir, ".mcp.json"),
    config({ docs: server("docs", {}, docsTools), eager: server("eager", { lazy: false }) }, { lazy: true })
  )

const cli = (...args: Array<string>) => run(args, { cwd: dir, mark })

const toolNames = async (): Promise<Array<string>> => {
  const result = await cli("tools", "--json")
  expect(result.code, result.stderr).toBe(0)
  return (JSON.parse(result.stdout) as Array<{ name: string }>).map((tool) => tool.name).sort()
}

describe("lazy servers (CLI, real stdio servers)", () => {
  it("fills the cache once, then lists a lazy server's tools without starting it; a call starts it", async () => {
    writeConfig()
    // Never seen: started once, after the eager one, to fill the cache.
    expect(await toolNames()).toEqual([
      "mcp__docs__lookup",
      "mcp__docs__note",
      "mcp__eager__lookup",
      "mcp__eager__note"
    ])
    expect(starts()).toEqual(["eager", "docs"])
    // From the cache now: the eager server starts, the lazy one does not.
    expect(await toolNames()).toEqual([
      "mcp__docs__lookup",
      "mcp__docs__note",
      "mcp__eager__lookup",
      "mcp__eager__note"
    ])
    expect(starts()).toEqual(["eager", "docs", "eager"])
    const servers = await cli("servers", "--json")
    // Idle is no fault: `servers` as a health check passes.
    expect(servers.code, servers.stderr).toBe(0)
    const docs = (JSON.parse(servers.stdout) as Array<Record<string, unknown>>).find((status) => status.name === "docs")
    expect(docs).toMatchObject({ state: "Idle", detail: "Idle (lazy: starts on first use)", tools: 2, pid: null })
    expect(starts().filter((label) => label === "docs")).toHaveLength(1)
    // The first call starts it, and goes through.
    const called = await cli("call", "mcp__docs__lookup")
    expect(called.code, called.stderr).toBe(0)
    expect(called.stdout).toContain("docs:lookup")
    expect(starts().filter((label) => label === "docs")).toHaveLength(2)
  }, hangGuard(120_000))

  it("a changed command drops the cache: the server is started again to fill it", async () => {
    const before = starts().length
    writeConfig(["lookup", "note", "search"])
    const names = await toolNames()
    expect(names).toContain("mcp__docs__search")
    expect(starts().slice(before)).toEqual(["eager", "docs"])
  }, hangGuard(60_000))

  it("the gateway (serve --stdio) lists a lazy server's cached tools without starting it", async () => {
    const before = starts().length
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio"],
      cwd: dir,
      env: { ...process.env, ...cliEnv(), [MARK]: mark } as Record<string, string>,
      stderr: "pipe"
    })
    transport.stderr?.on("data", () => {})
    const client = sdkClient()
    await client.connect(transport)
    try {
      const listed = await client.listTools()
      expect(listed.tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(["mcp__docs__lookup", "mcp__docs__note", "mcp__docs__search"])
      )
      expect(starts().slice(before)).not.toContain("docs")
      const result = await client.callTool({ name: "mcp__docs__search", arguments: {} }) as CallToolResult
      expect(result.content).toEqual([{ type: "text", text: "docs:search" }])
      expect(starts().slice(before)).toContain("docs")
    } finally {
      await client.close()
    }
  }, hangGuard(60_000))

  it("leaves no process behind", async () => {
    const pids = survivors(MARK, mark).map((line) => Number(line.split(" ")[0]))
    const left = await Effect.runPromise(waitGone(pids, 10_000))
    expect(Object.values(left).filter((state) => state === "alive")).toEqual([])
  }, hangGuard(20_000))
})
