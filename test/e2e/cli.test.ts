// The `mcp-fleet` CLI end to end, as a user runs it: real processes in a temp folder with a
// `.mcp.json` of real servers from npm, what it shows of the fleet, errors, help and logs,
// with their --json shape and exit code. Calls and their errors are in cli-call.test.ts;
// editing the config, inputs and `test <name>`'s flags in cli-config.test.ts; watch, serve
// and secrets in cli-serve.test.ts (four files that run side by side).
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { config, hasScript, leavesNothing, run, runOnTerminal, tempDir } from "../support/cli.js"
import { cliFleet, json } from "../support/cliFleet.js"
import { undescribed } from "../support/help.js"

const { cli, cwd, mark, onPair, servers } = cliFleet("cli")

// Every server any command started has ended with it.
afterAll(() => leavesNothing(mark))

describe("inspecting the fleet", () => {
  it("servers: a table, and with --json an object per server with its state and last error", async () => {
    const human = await cli("servers")
    // 'broken' is not ready: as a health check, servers fails.
    expect(human.code).toBe(1)
    expect(human.stderr).toContain("config: ./.mcp.json")
    expect(human.stdout).toMatch(/memory\s+Ready\s+stdio\s+2025-11-25/)
    expect(human.stdout).toContain(
      "broken: server 'broken' exited with code 1 before answering the handshake: error: GITHUB_TOKEN is not set"
    )

    const result = await cli("servers", "--json")
    expect(result.code).toBe(1)
    const statuses = json(result.stdout)
    expect(statuses.map((status: any) => [status.name, status.state])).toEqual([
      ["memory", "Ready"],
      ["everything", "Ready"],
      ["failing", "Ready"],
      ["broken", "Failed"]
    ])
    const everything = statuses[1]
    expect(everything).toMatchObject({ transport: "stdio", protocolVersion: "2025-11-25", error: null })
    expect(everything.serverInfo.name).toBe("mcp-servers/everything")
    expect(everything.tools).toBeGreaterThan(5)
    expect(statuses[3].error).toMatchObject({ reason: "Closed" })
    expect(statuses[3].error.message).toContain("GITHUB_TOKEN is not set")
  })

  it("tools: qualified names with their server, original name and schema; denied tools are hidden", async () => {
    const result = await cli("tools", "--json")
    expect(result.code).toBe(0)
    const tools = json(result.stdout)
    const readGraph = tools.find((tool: any) => tool.name === "mcp__memory__read_graph")
    expect(readGraph).toMatchObject({ server: "memory", tool: "read_graph", inputSchema: { type: "object" } })
    expect(typeof readGraph.description).toBe("string")
    expect(tools.some((tool: any) => tool.name === "mcp__everything__echo")).toBe(true)
    // The config's policy denies mcp__memory__delete_*: nobody sees those tools.
    expect(tools.filter((tool: any) => tool.name.startsWith("mcp__memory__delete_"))).toEqual([])

    const one = await cli("tools", "--server", "everything")
    expect(one.code).toBe(0)
    expect(one.stdout).toContain("mcp__everything__echo")
    expect(one.stdout).not.toContain("mcp__memory__")
  })

  it("resources, read, prompts and prompt", async () => {
    const listed = json((await onPair("resources", "--json", "--server", "everything")).stdout)
    const doc = listed.resources.find((resource: any) => resource.uri.endsWith("architecture.md"))
    expect(doc).toMatchObject({ server: "everything", mimeType: "text/markdown" })

    const read = await onPair("read", "everything", doc.uri)
    expect(read.code).toBe(0)
    expect(read.stdout.length).toBeGreaterThan(100)

    const prompts = await onPair("prompts", "--server", "everything")
    expect(prompts.stdout).toMatch(/args-prompt\s+city \[state\]/)

    const prompt = await onPair("prompt", "everything", "args-prompt", `{"city": "Paris"}`, "--json")
    expect(prompt.code).toBe(0)
    expect(JSON.stringify(json(prompt.stdout).messages)).toContain("Paris")
  })
})

describe("errors", () => {
  it("no config file, a bad --timeout, and --json errors as a JSON object on stderr", async () => {
    const empty = tempDir()
    const none = await run(["servers"], { cwd: empty, mark, env: { HOME: empty } })
    expect(none.code).toBe(2)
    expect(none.stderr).toContain("no config file found")

    const noneJson = await run(["servers", "--json"], { cwd: empty, mark, env: { HOME: empty } })
    expect(json(noneJson.stderr)).toMatchObject({
      error: "CliError",
      message: expect.stringContaining("no config file found")
    })

    const timeout = await cli("servers", "--timeout", "soon")
    expect(timeout.code).toBe(2)
    expect(timeout.stderr).toContain("--timeout 'soon' is not a duration")
  })

  it("a config file named by --config or MCP_FLEET_CONFIG that does not exist: exit 2, naming it", async () => {
    const empty = tempDir()
    const missing = path.join(empty, "nope.json")
    const named = await run(["servers", "--config", missing], { cwd: empty, mark, env: { HOME: empty } })
    expect(named.code).toBe(2)
    expect(named.stdout).toBe("")
    expect(named.stderr).toContain(`mcp-fleet: config file ${missing} does not exist`)

    const listed = await run(["tools", "--json"], { cwd: empty, mark, env: { HOME: empty, MCP_FLEET_CONFIG: missing } })
    expect(listed.code).toBe(2)
    expect(json(listed.stderr)).toMatchObject({
      error: "ConfigError",
      message: `config file ${missing} does not exist`
    })

    const watching = await run(["watch", "--config", missing], { cwd: empty, mark, env: { HOME: empty } })
    expect(watching.code).toBe(2)
    expect(watching.stderr).toContain(`config file ${missing} does not exist`)
  })

  it("a schema error lists every bad entry, one sentence each", async () => {
    const dir = tempDir({
      ".mcp.json": config({ memory: { command: 5 }, other: { command: "x", args: "--verbose" } })
    })
    const result = await run(["servers"], { cwd: dir, mark })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      `mcp-fleet: invalid config file ${path.join(dir, ".mcp.json")}: mcpServers.memory.command: expected a string, ` +
        `got 5; mcpServers.other.args: expected an array of strings, got "--verbose"\n`
    )
  })
})

describe("help and logs", () => {
  // Each command's page is checked in process (test/cli/Help.test.ts); here the overview, and
  // `--help` and `-h` reaching a command's page through the real command line.
  it("--help describes every command in our words, with mcp-fleet <command> usage, and -h too", async () => {
    const [overview, help, late] = await Promise.all([
      run(["--help"], { cwd, mark }),
      run(["servers", "--help"], { cwd, mark }),
      // -h after the command's own arguments too, and nothing runs.
      run(["call", "mcp__memory__read_graph", "-h"], { cwd, mark })
    ])
    expect(overview.code).toBe(0)
    expect(overview.stdout).toContain("  mcp-fleet <command> [options]")
    const commands = [
      "servers",
      "tools",
      "call",
      "resources",
      "read",
      "prompts",
      "prompt",
      "add",
      "remove",
      "enable",
      "disable",
      "test",
      "watch",
      "serve",
      "trust",
      "approve",
      "auth"
    ]
    for (const command of commands) {
      expect(overview.stdout).toMatch(new RegExp(`^  ${command} +\\S`, "m"))
    }
    expect(undescribed(overview.stdout)).toEqual([])
    expect(overview.stdout).toContain("--log-level")
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("USAGE\n  mcp-fleet servers ")
    expect(help.stdout).not.toContain("\x1b[")
    expect(late.stdout).toContain("mcp-fleet call ")
  })

  it.skipIf(!hasScript)("--help is bold on a terminal, and plain with NO_COLOR", async () => {
    const colored = await runOnTerminal(["servers", "--help"], { cwd, mark, env: { NO_COLOR: "" } })
    expect(colored.stdout).toContain("\x1b[1mUSAGE\x1b[0m")
    const plain = await runOnTerminal(["servers", "--help"], { cwd, mark })
    expect(plain.stdout).toContain("USAGE")
    expect(plain.stdout).not.toContain("\x1b[")
  })

  it("--log-level is accepted anywhere, before or after the command and its options", async () => {
    const dir = tempDir({ ".mcp.json": config({ broken: servers.broken }) })
    for (const args of [["--log-level", "debug", "servers", "--json"], ["servers", "--json", "--log-level", "debug"]]) {
      const result = await run(args, { cwd: dir, mark })
      // Parsed: the command ran (and, 'broken' being down, its health check failed).
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/DEBUG .*error: GITHUB_TOKEN is not set/)
    }
    const warning = await run(["tools", "--server", "broken", "--log-level=warning"], { cwd: dir, mark })
    expect(warning.stderr).toContain("WARN")
    expect(warning.stderr).not.toContain("DEBUG")
    const quiet = await run(["servers", "--json"], { cwd: dir, mark })
    expect(quiet.stderr).not.toMatch(/DEBUG|WARN/)

    const bad = await run(["servers", "--log-level", "loud"], { cwd: dir, mark })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(
      "--log-level 'loud' is not one of all, trace, debug, info, warning, error, fatal, none"
    )
  })
})

describe("test <name>", () => {
  it("reports each lifecycle step of a working server, and where a broken one fails", async () => {
    const ok = await cli("test", "everything", "--json")
    expect(ok.code).toBe(0)
    const report = json(ok.stdout)
    expect(report.ok).toBe(true)
    expect(report.steps.map((step: any) => step.step)).toEqual([
      "connect",
      "initialize",
      "tools/list",
      "resources/list",
      "resources/templates/list",
      "prompts/list",
      "ping",
      "close"
    ])
    expect(report.steps[1].detail).toContain("2025-11-25, mcp-servers/everything")

    const broken = await cli("test", "broken")
    expect(broken.code).toBe(1)
    expect(broken.stdout).toMatch(/✗\s+initialize/)
    expect(broken.stdout).toContain("GITHUB_TOKEN is not set")
  })
})
