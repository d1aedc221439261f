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

    // server-filesystem asks for the roots once initialized and applies them after checking
    // each folder on disk, while it already answers calls: a call made at once can still see
    // its arguments' folder. Each run is a new server; none may see more than the two folders.
    const other = fs.realpathSync(tempDir())
    const allowed = (stdout: string) => stdout.split("\n").filter((line) => line.startsWith("/"))
    let given = await cli("call", "files", "list_allowed_directories", "--root", other)
    for (let attempt = 1; attempt < 5 && !given.stdout.includes(other); attempt++) {
      expect(given.code).toBe(0)
      expect(allowed(given.stdout)).toEqual([data])
      given = await cli("call", "files", "list_allowed_directories", "--root", other)
    }
    expect(given.code).toBe(0)
    expect(allowed(given.stdout)).toEqual([other])
  })
})
