// The CLI when servers are slow to come, hung or broken for good: one-shot commands stop
// waiting for what cannot come, `servers` works as a health check, and the gateway answers
// at once instead of waiting for the whole fleet.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { CLI, cliEnv, config, leavesNothing, MARK, run, tempDir } from "../support/cli.js"
import { hangGuard } from "../support/guard.js"
import { bound } from "../support/processes.js"

const mark = `cli-readiness-${process.pid}-${Date.now()}`
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))

const ok = { command: process.execPath, args: [fixture("env.mjs")] }
// Never answers initialize; leaves when its stdin closes.
const hung = {
  command: process.execPath,
  args: ["-e", "process.stdin.on('end', () => process.exit(0)); process.stdin.resume()"]
}
const missing = { command: path.join(tempDir(), "no-such-server") }
// Exits with the same message at every start.
const crashing = { command: process.execPath, args: [fixture("early-exit.mjs")] }

const cliIn = (servers: Record<string, unknown>) => {
  const cwd = tempDir({ ".mcp.json": config(servers) })
  return (...args: Array<string>) => run(args, { cwd, mark })
}

// How long a run took, with what it printed.
const timed = async (running: Promise<Awaited<ReturnType<typeof run>>>) => {
  const start = performance.now()
  const result = await running
  return { ...result, ms: performance.now() - start }
}

afterAll(() => leavesNothing(mark))

describe("servers as a health check", () => {
  it("exits 1 naming a required server that is not ready, and shows how long it has been connecting", async () => {
    const cli = cliIn({ ok: { ...ok, required: true }, hung: { ...hung, required: true } })
    const human = await cli("servers", "--timeout", "1500ms")
    expect(human.code).toBe(1)
    expect(human.stdout).toMatch(/ok\s+Ready/)
    expect(human.stdout).toMatch(/hung\s+Connecting\s.*Connecting for \d+(\.\d)? s/)
    expect(human.stderr).toMatch(/1 server is not ready: 'hung' \(Connecting for \d+(\.\d)? s\)/)

    const asJson = await cli("servers", "--json", "--timeout", "1500ms")
    expect(asJson.code).toBe(1)
    expect(JSON.parse(asJson.stdout).map((status: any) => [status.name, status.state])).toEqual([
      ["ok", "Ready"],
      ["hung", "Connecting"]
    ])
  })

  it("exits 1 for any enabled server that is not ready, required or not; 0 when it is disabled", async () => {
    const down = await cliIn({ ok: { ...ok, required: true }, hung })("servers", "--timeout", "1s")
    expect(down.code).toBe(1)
    expect(down.stdout).toMatch(/hung\s+Connecting/)
    const off = await cliIn({ ok, hung: { ...hung, disabled: true } })("servers", "--timeout", "1s")
    expect(off.code).toBe(0)
  })
})

describe("one-shot commands and servers that cannot come up", () => {
  const cli = cliIn({ ok, missing, crashing })

  it("tools --server stops at once for a command that does not exist, and says why", async () => {
    const result = await timed(cli("tools", "--server", "missing"))
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("server 'missing': cannot become ready: Failed after 1 attempt")
    expect(result.stderr).toContain(`could not start '${missing.command}'`)
    expect(result.ms).toBeLessThan(await bound(10_000))
  })

  it("call stops once a server has failed the same way twice at start-up, and says why", async () => {
    const result = await timed(cli("call", "crashing", "anything"))
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      "server 'crashing': fails the same way at every start (twice in a row), so waiting will not help: " +
        "server 'crashing' exited with code 1 before answering the handshake: error: MISSING_API_KEY is not set"
    )
    expect(result.ms).toBeLessThan(await bound(10_000))
  })
})

describe("serve with a hung server", () => {
  it("answers initialize at once, and lists the ready servers after the settle window", async () => {
    const cwd = tempDir({ ".mcp.json": config({ ok, hung }) })
    const client = new Client({ name: "cli-readiness", version: "1.0.0" })
    // 1 s when the machine is quiet; on a busy one the ok server's start takes longer than that.
    const settle = hangGuard(1000)
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio", "--settle", `${settle}ms`],
      cwd,
      env: { ...process.env, ...cliEnv(), [MARK]: mark } as Record<string, string>,
      stderr: "pipe"
    })
    try {
      const slack = bound(0)
      const start = performance.now()
      await client.connect(transport)
      expect(performance.now() - start).toBeLessThan(5_000 + (await slack))
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(["mcp__ok__env"])
      expect(performance.now() - start).toBeLessThan(7_000 + settle + (await slack))
    } finally {
      await client.close()
    }
  })
})
