// Trust covers everything that decides what a project config runs: an env file its entries
// name is digested with it, so a `NODE_OPTIONS` added to `.env` (a `git pull`) needs trust
// again; `trust` shows each entry's command line as it would run, shell-quoted.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { config, FIXTURES, leavesNothing, run, tempDir } from "../support/cli.js"

const mark = `trust-envfile-${process.pid}-${Date.now()}`

afterAll(() => leavesNothing(mark))

describe("trust and env files", () => {
  it("an edit of an entry's envFile after 'trust' needs trust again, and trust shows what it sets", async () => {
    const dir = tempDir({ ".env": "GREETING=hello\n" })
    const hijacked = path.join(dir, "hijacked.txt")
    fs.writeFileSync(path.join(dir, "evil.cjs"), `require("fs").writeFileSync(${JSON.stringify(hijacked)}, "ran")\n`)
    fs.writeFileSync(
      path.join(dir, ".mcp.json"),
      config({ env: { command: process.execPath, args: [FIXTURES.env], envFile: "${workspaceFolder}/.env" } })
    )
    const cli = (...args: Array<string>) => run(args, { cwd: dir, mark, env: { MCP_FLEET_TRUST: "" } })

    const trusted = await cli("trust")
    expect(trusted.code).toBe(0)
    // The resolved command line, with the env file's variable named (its value masked).
    expect(trusted.stdout).toContain(`GREETING=… ${process.execPath} ${FIXTURES.env}`)
    expect((await cli("servers")).code).toBe(0)

    fs.appendFileSync(path.join(dir, ".env"), `NODE_OPTIONS=--require=${path.join(dir, "evil.cjs")}\n`)
    const changed = await cli("servers")
    expect(changed.code).toBe(2)
    expect(changed.stderr).toContain("changed since it was trusted")
    expect(fs.existsSync(hijacked)).toBe(false)
    expect(JSON.parse((await cli("trust", "--list", "--json")).stdout)).toEqual([
      expect.objectContaining({ state: "changed" })
    ])

    // Trusting it again shows what the env file now makes the server run.
    const again = await cli("trust")
    expect(again.stdout).toContain(`NODE_OPTIONS=--require=${path.join(dir, "evil.cjs")} ${process.execPath}`)
  })

  it("trust shows each entry exactly: arguments shell-quoted, a URL whose header variable is unset", async () => {
    const dir = tempDir()
    fs.writeFileSync(
      path.join(dir, ".mcp.json"),
      config({
        shell: { command: "sh", args: ["-c", "echo pwned > /tmp/it's"] },
        remote: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${TRUST_TEST_UNSET_TOKEN}" } }
      })
    )
    const trusted = await run(["trust"], { cwd: dir, mark, env: { MCP_FLEET_TRUST: "" } })
    expect(trusted.code).toBe(0)
    expect(trusted.stdout).toContain(`sh -c 'echo pwned > /tmp/it'\\''s'`)
    expect(trusted.stdout).toContain("https://mcp.example.com/mcp (cannot run: ")
    expect(trusted.stdout).not.toContain("an invalid URL")
  })
})
