// `--protocol <version>` and a server's own `protocolVersion` in the config: the revision the
// fleet speaks, as `servers --json` reports it.
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { config, removeTempDirs, run, tempDir } from "../support/cli.js"
import { survivors } from "../support/processes.js"

const mark = `cli-protocol-${process.pid}-${Date.now()}`
const env = { command: process.execPath, args: [fileURLToPath(new URL("../fixtures/env.mjs", import.meta.url))] }

afterAll(() => {
  removeTempDirs()
  expect(survivors("MCP_FLEET_CLI_TEST", mark)).toEqual([])
})

const revisions = async (...args: Array<string>) => {
  const cwd = tempDir({ ".mcp.json": config({ plain: env, pinned: { ...env, protocolVersion: "2025-03-26" } }) })
  const result = await run(["servers", "--json", ...args], { cwd, mark })
  expect(result.code).toBe(0)
  return Object.fromEntries(JSON.parse(result.stdout).map((status: any) => [status.name, status.protocolVersion]))
}

describe("choosing the protocol revision", () => {
  it("--protocol sets it for every server that does not name its own; a config's protocolVersion wins", async () => {
    expect(await revisions("--protocol", "2025-06-18")).toEqual({ plain: "2025-06-18", pinned: "2025-03-26" })
  })

  it("--protocol refuses a revision mcp-fleet does not speak", async () => {
    const cwd = tempDir({ ".mcp.json": config({ plain: env }) })
    const result = await run(["servers", "--protocol", "1999-01-01"], { cwd, mark })
    expect(result.code).not.toBe(0)
  })
})
