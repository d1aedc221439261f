// How the CLI chooses roots, on the real server-filesystem (which replaces the folders of its
// arguments with the roots its client declares): never wider than what the user named.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { config, leavesNothing, marked, run, tempDir } from "../support/cli.js"

const mark = `cli-roots-${process.pid}-${Date.now()}`
const FILESYSTEM = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url)
)

afterAll(() => leavesNothing(mark))

describe("the CLI's roots", () => {
  it("a filesystem server configured for data/ keeps to data/; --root names what it gets instead", async () => {
    const project = fs.realpathSync(tempDir())
    const data = path.join(project, "data")
    fs.mkdirSync(data)
    const files = marked({ command: process.execPath, args: [FILESYSTEM, data] }, mark)
    fs.writeFileSync(path.join(project, ".mcp.json"), config({ files }))
    const cli = (...args: Array<string>) => run(args, { cwd: project, mark })

    const byDefault = await cli("call", "files", "list_allowed_directories")
    expect(byDefault.code).toBe(0)
    expect(byDefault.stdout).toContain(data)
    expect(byDefault.stdout).not.toMatch(new RegExp(`${project}\\s*$`, "m"))
    // The config file itself stays out of its reach.
    const config_ = await cli(
      "call",
      "files",
      "read_text_file",
      JSON.stringify({ path: path.join(project, ".mcp.json") })
    )
    expect(`${config_.stdout}${config_.stderr}`).toMatch(/denied|outside allowed/i)

    const other = fs.realpathSync(tempDir())
    const given = await cli("call", "files", "list_allowed_directories", "--root", other)
    expect(given.code).toBe(0)
    expect(given.stdout).toContain(other)
    expect(given.stdout).not.toContain(data)
  })
})
