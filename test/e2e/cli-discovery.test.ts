// `.vscode/mcp.json` and `.cursor/mcp.json` in the working directory are found like
// `.mcp.json`, trusted the same way, and mean their project (the folder holding them).
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { leavesNothing, marked, run, SERVERS, tempDir } from "../support/cli.js"

const mark = `cli-discovery-${process.pid}-${Date.now()}`

afterAll(() => leavesNothing(mark))

describe("editor project files", () => {
  it.each([".cursor", ".vscode"])(
    "%s/mcp.json is found, trusted like .mcp.json, and ${workspaceFolder} is the project",
    async (folder) => {
      const project = fs.realpathSync(tempDir())
      const key = folder === ".vscode" ? "servers" : "mcpServers"
      const entry = marked({ command: process.execPath, args: [SERVERS.memory, "${workspaceFolder}/data"] }, mark)
      fs.mkdirSync(path.join(project, folder))
      fs.writeFileSync(path.join(project, folder, "mcp.json"), JSON.stringify({ [key]: { memory: entry } }))
      const cli = (trust: string, ...args: Array<string>) =>
        run(args, { cwd: project, mark, env: { MCP_FLEET_TRUST: trust } })

      const refused = await cli("", "get", "memory")
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain(`./${folder}/mcp.json is a project config not trusted yet`)

      // `trust` with no file trusts the one found here.
      const trust = await cli("", "trust", "--json")
      expect(trust.code).toBe(0)
      expect(JSON.parse(trust.stdout).file).toBe(path.join(project, folder, "mcp.json"))
      const trusted = await cli("", "get", "memory", "--json")
      expect(trusted.code).toBe(0)
      const json = JSON.parse(trusted.stdout)
      expect(json.file).toBe(path.join(project, folder, "mcp.json"))
      expect(json.config.args).toEqual([SERVERS.memory, path.join(project, "data")])
      expect(json.state).toBe("Ready")
    }
  )
})
