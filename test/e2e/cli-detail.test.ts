// One tool, prompt or resource in full: `tools <name>`, `prompts <name>`, `resources <uri>`;
// and the tools table's description column shows the description, not the title.
import { afterAll, describe, expect, it } from "vitest"
import { config, leavesNothing, marked, run, SERVERS, tempDir } from "../support/cli.js"

const mark = `cli-detail-${process.pid}-${Date.now()}`
const cwd = tempDir({
  ".mcp.json": config({ everything: marked({ command: process.execPath, args: [SERVERS.everything] }, mark) })
})
const cli = (...args: Array<string>) => run(args, { cwd, mark })

afterAll(() => leavesNothing(mark))

describe("details", () => {
  it("the tools table shows each tool's description", async () => {
    const listed = await cli("tools")
    expect(listed.code).toBe(0)
    const echo = listed.stdout.split("\n").find((line) => line.startsWith("mcp__everything__echo "))
    expect(echo).toContain("Echoes back the input string")
    expect(echo).not.toContain("Echo Tool")
  })

  it("tools <name>: description, arguments, annotations and server; by qualified name or with --server", async () => {
    const shown = await cli("tools", "mcp__everything__echo")
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain("mcp__everything__echo\n  server: everything\n  tool: echo\n  title: Echo Tool")
    expect(shown.stdout).toContain("Echoes back the input string")
    expect(shown.stdout).toMatch(
      /arguments:\n {2}name +type +required +description\n.*\n {2}message +string +yes +Message to echo/
    )
    expect(shown.stdout).toContain(`annotations:\n  {"readOnlyHint":true`)
    const plain = await cli("tools", "echo", "--server", "everything")
    expect(plain.stdout).toBe(shown.stdout)
    const asJson = await cli("tools", "mcp__everything__echo", "--json")
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      server: "everything",
      tool: "echo",
      inputSchema: { required: ["message"] }
    })
    const typo = await cli("tools", "mcp__everything__ecko")
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain("there is no tool 'mcp__everything__ecko'; did you mean 'mcp__everything__echo'?")
  })

  it("prompts <name> and resources <uri>", async () => {
    const prompt = await cli("prompts", "mcp__everything__args-prompt")
    expect(prompt.code).toBe(0)
    expect(prompt.stdout).toContain("A prompt with two arguments, one required and one optional")
    expect(prompt.stdout).toMatch(/ {2}city +string +yes +Name of the city/)
    expect(prompt.stdout).toMatch(/ {2}state +string +no/)
    const uri = "demo://resource/static/document/architecture.md"
    const resource = await cli("resources", uri)
    expect(resource.code).toBe(0)
    expect(resource.stdout).toContain(
      `${uri}\n  server: everything\n  name: architecture.md\n  mimeType: text/markdown`
    )
    expect(resource.stdout).toContain(`read it: mcp-fleet read everything ${uri}`)
  })
})
