// `mcp-fleet get <name>`: one server's config with its secrets masked, and what the fleet
// knows of it: state, revision, capabilities, counts, pid, last error with its stderr tail.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { config, leavesNothing, marked, run, SERVERS, tempDir } from "../support/cli.js"

const mark = `cli-get-${process.pid}-${Date.now()}`
const SECRET = "from-the-env-5ecret"
const LITERAL = "sk-literal-key-1234"

afterAll(() => leavesNothing(mark))

const dir = tempDir()
const crash = path.join(dir, "crash.mjs")
fs.writeFileSync(crash, `process.stderr.write("cannot open the database\\n"); process.exit(3)\n`)
fs.writeFileSync(
  path.join(dir, ".mcp.json"),
  config({
    memory: marked({
      command: process.execPath,
      args: [SERVERS.memory],
      env: { TOKEN: "${GET_TEST_TOKEN}", API_KEY: LITERAL, MODE: "plain" }
    }, mark),
    broken: marked({ command: process.execPath, args: [crash] }, mark),
    remote: { url: `https://user:pw@127.0.0.1:9/mcp?key=${LITERAL}`, headers: { Authorization: `Bearer ${LITERAL}` } }
  })
)
const cli = (...args: Array<string>) => run(args, { cwd: dir, mark, env: { GET_TEST_TOKEN: SECRET } })

describe("mcp-fleet get", () => {
  it("shows a ready server's config, secrets masked, with its state, revision, capabilities, counts and pid", async () => {
    const shown = await cli("get", "memory", "--json")
    expect(shown.code).toBe(0)
    expect(shown.stdout).not.toContain(SECRET)
    expect(shown.stdout).not.toContain(LITERAL)
    const json = JSON.parse(shown.stdout)
    expect(json).toMatchObject({
      name: "memory",
      file: path.join(dir, ".mcp.json"),
      config: { type: "stdio", command: process.execPath, env: { TOKEN: "***", API_KEY: "***", MODE: "plain" } },
      state: "Ready",
      capabilities: { tools: {} },
      error: null
    })
    expect(json.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(json.counts.tools).toBeGreaterThan(0)
    expect(typeof json.pid).toBe("number")

    const text = await cli("get", "memory")
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^state:\s+Ready/m)
    expect(text.stdout).toMatch(/^capabilities:\s+.*tools/m)
    expect(text.stdout).toMatch(/^env:\s+.*TOKEN=\*\*\*/m)
    expect(text.stdout + text.stderr).not.toContain(SECRET)
  })

  it("shows a failing server as it is, its last error with the stderr tail", async () => {
    const shown = await cli("get", "broken", "--json", "--timeout", "5s")
    expect(shown.code).toBe(0)
    const json = JSON.parse(shown.stdout)
    expect(json.state).not.toBe("Ready")
    expect(json.error.message).toContain("cannot open the database")
    expect(json.pid).toBeNull()
  })

  it("masks a remote server's URL credentials, query and secret headers; names the closest server on a typo", async () => {
    const json = JSON.parse((await cli("get", "remote", "--json", "--timeout", "2s")).stdout)
    expect(JSON.stringify(json.config)).not.toContain(LITERAL)
    expect(JSON.stringify(json.config)).not.toContain("pw@")
    expect(json.config.headers).toEqual({ Authorization: "***" })
    const typo = await cli("get", "memroy")
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain("did you mean 'memory'")
  })
})
