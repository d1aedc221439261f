// Mistakes on the command line, told as a new user needs them: `mcp-fleet:` first, the closest
// command or option, the help to read, a JSON error with --json; one exit code (2) for every
// name that does not exist; arguments checked plainly; `servers` as a health check.
import { afterAll, describe, expect, it } from "vitest"
import { config, leavesNothing, marked, run, SERVERS, tempDir } from "../support/cli.js"

const mark = `cli-errors-${process.pid}-${Date.now()}`

const servers = {
  everything: marked({ command: process.execPath, args: [SERVERS.everything] }, mark),
  memory: marked({ command: process.execPath, args: [SERVERS.memory, "--no-file"] }, mark)
}
const cwd = tempDir({ ".mcp.json": config(servers) })
const cli = (...args: Array<string>) => run(args, { cwd, mark })
const json = (text: string) => JSON.parse(text) as Record<string, unknown>

afterAll(() => leavesNothing(mark))

describe("the command line", () => {
  it("serve --http with no port in range says so, also as JSON", async () => {
    const high = await cli("serve", "--http", "80000")
    expect(high.code).toBe(2)
    expect(high.stderr).toBe("mcp-fleet: --http 80000 is not a port: give 1 to 65535, or 0 for any free port\n")
    const negative = await cli("serve", "--http", "-5", "--json")
    expect(negative.code).toBe(2)
    expect(json(negative.stderr)).toEqual({
      error: "CliError",
      message: "--http -5 is not a port: give 1 to 65535, or 0 for any free port"
    })
    const word = await cli("serve", "--http", "abc")
    expect(word.stderr).toBe("mcp-fleet: 'abc' is not an integer; see 'mcp-fleet serve --help'\n")
  })

  it("an unknown option or command names the closest and the help, never the parser's raw text", async () => {
    const option = await cli("servers", "--jsno")
    expect(option.code).toBe(2)
    expect(option.stderr).toBe(
      "mcp-fleet: unknown option '--jsno' for 'servers' (did you mean '--json'?); see 'mcp-fleet servers --help'\n"
    )
    const command = await cli("servrs")
    expect(command.code).toBe(2)
    expect(command.stderr).toBe(
      "mcp-fleet: unknown command 'servrs' (did you mean 'servers'?); see 'mcp-fleet --help'\n"
    )
    const asJson = await cli("servrs", "--json")
    expect(asJson.code).toBe(2)
    expect(json(asJson.stderr)).toEqual({
      error: "CliError",
      message: "unknown command 'servrs' (did you mean 'servers'?); see 'mcp-fleet --help'"
    })
    for (const result of [option, command, asJson]) expect(result.stderr).not.toContain("Received unknown argument")
  })
})

describe("names and arguments", () => {
  it("a typo'd tool exits 2, as a typo'd server does", async () => {
    const tool = await cli("call", "everything", "ech")
    expect(tool.code).toBe(2)
    expect(tool.stderr).toContain("there is no tool 'mcp__everything__ech'; did you mean 'mcp__everything__echo'?")
    const server = await cli("call", "evrything", "echo")
    expect(server.code).toBe(2)
  })

  it("arguments that do not fit the tool name the argument and what was expected", async () => {
    const missing = await cli("call", "memory", "create_entities", "--arg", "x=1")
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain(
      "mcp-fleet: server 'memory': invalid arguments for tool 'create_entities': the required argument 'entities' is missing"
    )
    const wrong = await cli("call", "everything", "echo", "{\"message\": 5}")
    expect(wrong.stderr).toContain("argument 'message' must be a string")
  })

  it("prompt takes a qualified name and --arg, and checks required arguments", async () => {
    const given = await cli("prompt", "mcp__everything__args-prompt", "--arg", "city=Paris")
    expect(given.code).toBe(0)
    expect(given.stdout).toContain("Paris")
    const missing = await cli("prompt", "everything", "args-prompt")
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain(
      "mcp-fleet: prompt 'mcp__everything__args-prompt' needs the argument 'city' (Name of the city): give --arg city=<value>"
    )
    const typo = await cli("prompt", "mcp__everything__args-promt")
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain("did you mean 'mcp__everything__args-prompt'?")
  })
})

describe("servers as a health check", () => {
  it("exits 1 when an enabled server is not ready, required or not; a disabled one is no fault", async () => {
    const failing = tempDir({
      ".mcp.json": config({
        memory: servers.memory,
        // A program that does not exist: Failed for good.
        broken: { command: "/nonexistent/mcp-server" }
      })
    })
    const down = await run(["servers"], { cwd: failing, mark })
    expect(down.code).toBe(1)
    expect(down.stderr).toMatch(/mcp-fleet: 1 server is not ready: 'broken' \(Failed/)
    const off = tempDir({
      ".mcp.json": config({ memory: servers.memory, broken: { ...servers.memory, disabled: true } })
    })
    const healthy = await run(["servers"], { cwd: off, mark })
    expect(healthy.code).toBe(0)
  })
})
