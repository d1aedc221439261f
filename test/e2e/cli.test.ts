// The `mcp-fleet` CLI end to end, as a user runs it: real processes in a temp folder with a
// `.mcp.json` of real servers from npm, every command, its --json shape and its exit code.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  CLI,
  cliEnv,
  config,
  FIXTURES,
  hasScript,
  MARK,
  marked,
  removeTempDirs,
  run,
  runOnTerminal,
  SERVERS,
  start,
  tempDir
} from "../support/cli.js"
import { hangGuard } from "../support/guard.js"
import { undescribed } from "../support/help.js"
import { bound, groupMembers, guardianOf, procState, survivors, within } from "../support/processes.js"

const mark = `cli-${process.pid}-${Date.now()}`
const memoryFile = path.join(tempDir(), "memory.jsonl")

const servers = {
  memory: marked({ command: process.execPath, args: [SERVERS.memory], env: { MEMORY_FILE_PATH: memoryFile } }, mark),
  everything: marked({ command: process.execPath, args: [SERVERS.everything, "stdio"] }, mark),
  failing: marked({ command: process.execPath, args: [FIXTURES.failing] }, mark),
  broken: marked({
    command: process.execPath,
    args: ["-e", "console.error('error: GITHUB_TOKEN is not set'); process.exit(1)"],
    restart: { maxAttempts: 1, initialDelay: 50 }
  }, mark)
}

const policy = { deny: ["mcp__memory__delete_*"] }
const cwd = tempDir({ ".mcp.json": config(servers, { policy }) })
const cli = (...args: Array<string>) => run(args, { cwd, mark })
const json = (text: string) => JSON.parse(text) as any

afterAll(() => {
  removeTempDirs()
  // Every server any command started has ended with it.
  expect(survivors(MARK, mark)).toEqual([])
})

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
    const listed = json((await cli("resources", "--json", "--server", "everything")).stdout)
    const doc = listed.resources.find((resource: any) => resource.uri.endsWith("architecture.md"))
    expect(doc).toMatchObject({ server: "everything", mimeType: "text/markdown" })

    const read = await cli("read", "everything", doc.uri)
    expect(read.code).toBe(0)
    expect(read.stdout.length).toBeGreaterThan(100)

    const prompts = await cli("prompts", "--server", "everything")
    expect(prompts.stdout).toMatch(/args-prompt\s+city \[state\]/)

    const prompt = await cli("prompt", "everything", "args-prompt", `{"city": "Paris"}`, "--json")
    expect(prompt.code).toBe(0)
    expect(JSON.stringify(json(prompt.stdout).messages)).toContain("Paris")
  })
})

describe("calling tools", () => {
  it("by qualified name or by server and tool, with JSON or --arg arguments", async () => {
    const plain = await cli("call", "mcp__everything__echo", `{"message": "hello"}`)
    expect(plain).toMatchObject({ code: 0, stdout: "Echo: hello\n" })

    const asJson = await cli("call", "everything", "echo", "--arg", "message=a=b", "--json")
    expect(asJson.code).toBe(0)
    expect(json(asJson.stdout)).toEqual({ content: [{ type: "text", text: "Echo: a=b" }] })

    // --arg values are read as JSON where the schema wants numbers.
    const sum = await cli("call", "everything", "get-sum", "--arg", "a=2", "--arg", "b=3")
    expect(sum.code).toBe(0)
    expect(sum.stdout).toContain("5")
  })

  it("shows the progress of a long call on stderr", async () => {
    const result = await cli(
      "call",
      "everything",
      "trigger-long-running-operation",
      "--arg",
      "duration=1",
      "--arg",
      "steps=2"
    )
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("Long running operation completed")
    expect(result.stderr).toContain("progress: 1/2")
    expect(result.stderr).toContain("progress: 2/2")
  })

  it("checks arguments against the inputSchema before sending, naming the field", async () => {
    const result = await cli("call", "everything", "get-sum", "--arg", "a=1", "--arg", "b=x")
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
    expect(result.stderr).toMatch(/mcp-fleet: .*get-sum.*argument 'b' must be a number/)
  })

  it("fails with one sentence and a non-zero exit for denied, unknown and mistyped calls", async () => {
    // Independent runs: side by side.
    const [denied, typo, server, badJson, notFound, isError] = await Promise.all([
      cli("call", "mcp__memory__delete_entities", `{"entityNames": []}`),
      cli("call", "mcp__memory__read_grph"),
      cli("call", "memroy", "read_graph"),
      cli("call", "mcp__everything__echo", "{nope", "--json"),
      cli("read", "everything", "demo://nope"),
      cli("call", "mcp__failing__fail")
    ])
    expect(denied.code).toBe(1)
    expect(denied.stderr).toContain("mcp__memory__delete_*")

    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain("did you mean 'mcp__memory__read_graph'?")

    expect(server.code).toBe(2)
    expect(server.stderr).toContain("there is no server 'memroy' in the config; did you mean 'memory'?")

    expect(badJson.code).toBe(2)
    expect(json(badJson.stderr.trim().split("\n").at(-1)!)).toMatchObject({
      error: "CliError",
      message: expect.stringMatching(/^the arguments are not valid JSON: /)
    })

    // A server's error code is said once, though its message repeats it.
    expect(notFound.code).toBe(1)
    expect(notFound.stderr).toMatch(/answered resources\/read with error -32602: Resource demo:\/\/nope not found/)
    expect(notFound.stderr).not.toContain("MCP error")

    // A result with isError is printed, and the exit code says it failed.
    expect(isError).toMatchObject({ code: 1, stdout: "the disk is full\n" })
    expect(isError.stderr).toContain("mcp-fleet: tool 'mcp__failing__fail' reported an error")
  })
})

describe("timeouts of a call", () => {
  // The hang fixture ignores the end of its stdin and SIGTERM: its shutdown takes seconds.
  const hanging = (own: string) =>
    tempDir({ ".mcp.json": config({ hang: marked({ command: process.execPath, args: [FIXTURES.hang] }, own) }) })
  const alive = (own: string) => survivors(MARK, own).filter((line) => line.includes("hang.mjs"))

  it("--timeout is reported at its deadline, while the server is still being shut down", async () => {
    const own = `${mark}-timeout`
    const calling = start(["call", "hang", "hang", "--timeout", "1s"], { cwd: hanging(own), mark: own })
    await calling.errorLine(
      (line) => line === "mcp-fleet: server 'hang' did not answer tools/call within 1000 ms",
      "the timeout"
    )
    expect(alive(own)).toHaveLength(1)
    expect(await calling.exited).toBe(1)
    expect(alive(own)).toEqual([])
  })

  it("--max-time bounds a call that keeps sending progress; --timeout alone would wait on", async () => {
    const own = `${mark}-max-time`
    const calling = start(["call", "hang", "ticking", "--timeout", "1s", "--max-time", "2s"], {
      cwd: hanging(own),
      mark: own
    })
    await calling.errorLine(
      (line) => line === "mcp-fleet: server 'hang' did not finish tools/call within its maximum of 2000 ms",
      "the maximum"
    )
    // Progress came all along, more than a --timeout apart in all: it was inactivity that --timeout bounds.
    expect(calling.stderr().match(/progress: \d+/g)!.length).toBeGreaterThan(10)
    expect(await calling.exited).toBe(1)
    expect(alive(own)).toEqual([])

    const bad = await run(["call", "hang", "hang", "--max-time", "soon"], { cwd: hanging(own), mark: own })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--max-time 'soon' is not a duration such as 30s, 500ms or 2m")
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

describe("VS Code inputs", () => {
  const withInput = () =>
    tempDir({
      ".mcp.json": JSON.stringify({
        inputs: [{ type: "promptString", id: "api-token", description: "The API token", password: true }],
        mcpServers: {
          env: marked({ command: process.execPath, args: [FIXTURES.env], env: { TOKEN: "${input:api-token}" } }, mark),
          remote: { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${input:api-token}" } }
        }
      })
    })
  const tokenSeen = (output: string) => JSON.parse(output.slice(output.indexOf(`{"env"`)).trim()).env.TOKEN

  it("${input:id} comes from MCP_FLEET_INPUT_<ID>; without it and without a terminal the server says how", async () => {
    const dir = withInput()
    const given = await run(["call", "env", "env"], { cwd: dir, mark, env: { MCP_FLEET_INPUT_API_TOKEN: "from-env" } })
    expect(given.code).toBe(0)
    expect(tokenSeen(given.stdout)).toBe("from-env")

    const missing = await run(["servers"], { cwd: dir, mark })
    expect(missing.stdout).toContain(
      `env: server 'env' is misconfigured: input "api-token" has no value (\${input:api-token} in env.TOKEN): ` +
        "set MCP_FLEET_INPUT_API_TOKEN, or run on a terminal to be asked"
    )
    // A URL server that cannot be used is still shown with its transport.
    expect(missing.stdout).toMatch(/remote\s+Failed\s+http\s/)
  })

  it.skipIf(!hasScript)("${input:id} is asked for on a terminal, typed unseen when it is a password", async () => {
    const dir = withInput()
    const result = await runOnTerminal(["call", "env", "env"], { cwd: dir, mark }, {
      shows: "The API token",
      answer: "typed-secret"
    })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("The API token (${input:api-token}; or set MCP_FLEET_INPUT_API_TOKEN): ")
    expect(tokenSeen(result.stdout)).toBe("typed-secret")
    // Shown once: in the tool's answer, never as it was typed.
    expect(result.stdout.split("typed-secret")).toHaveLength(2)
  })
})

describe("wording", () => {
  it("a disabled server says how to switch it on", async () => {
    const dir = tempDir({ ".mcp.json": config({ memory: { ...servers.memory, disabled: true } }) })
    const called = await run(["call", "memory", "read_graph"], { cwd: dir, mark })
    expect(called.code).toBe(1)
    expect(called.stderr).toContain("server 'memory' is disabled; switch it on with 'mcp-fleet enable memory'")
    const listed = await run(["servers"], { cwd: dir, mark })
    expect(listed.stdout).toMatch(/memory\s+Disabled\s+stdio.*switched off: mcp-fleet enable memory/)
  })

  it("add says what is missing, and refuses names that qualified names would change", async () => {
    const dir = tempDir()
    const add = (...args: Array<string>) => run(["add", ...args], { cwd: dir, mark, env: { HOME: dir } })
    const neither = await add("memory")
    expect(neither.code).toBe(2)
    expect(neither.stderr).toContain(
      "server 'memory' needs a command or a URL: mcp-fleet add memory -- <command> [args...], " +
        "or mcp-fleet add memory --url <url>"
    )
    const both = await add("memory", "--url", "http://127.0.0.1:9/mcp", "--", "node")
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("server 'memory' gets a command (after --) or a URL (--url), not both")
    const dotted = await add("my.server", "--", "node")
    expect(dotted.code).toBe(2)
    expect(dotted.stderr).toContain(
      "server name 'my.server' has characters other than letters, digits, _ and -, so its tools are named " +
        "mcp__my_server__<tool>; use letters, digits, _ and - only"
    )
    const prefixed = await add("mcp__x", "--", "node")
    expect(prefixed.code).toBe(2)
    expect(prefixed.stderr).toContain("server name 'mcp__x' contains '__', so its tools' names (mcp__mcp__x__<tool>)")
    expect(fs.existsSync(path.join(dir, ".mcp.json"))).toBe(false)
  })

  it("a config with such a name works, with a warning", async () => {
    const dir = tempDir({ ".mcp.json": config({ "my.notes": { ...servers.memory, disabled: true } }) })
    const result = await run(["servers"], { cwd: dir, mark })
    expect(result.code).toBe(0)
    expect(result.stderr).toContain(
      `mcp-fleet: warning: server name 'my.notes' in ${path.join(dir, ".mcp.json")} has characters other than ` +
        "letters, digits, _ and -, so its tools are named mcp__my_notes__<tool>"
    )
  })
})

describe("editing the config", () => {
  const original = `{
  // Claude Code's settings live here too
  "theme": "dark",
  "mcpServers": {
    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] }, // notes
    "web": {
      "url": "https://example.com/mcp"
    }
  }
}
`
  it("add, disable, enable and remove change only that server's text", async () => {
    const dir = tempDir({ ".mcp.json": original })
    const file = path.join(dir, ".mcp.json")
    const edit = (...args: Array<string>) => run(args, { cwd: dir, mark })

    expect(
      (await edit("add", "fs", "--env", "A=1", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", ".")).code
    ).toBe(0)
    expect((await edit("add", "remote", "--url", "http://127.0.0.1:9/mcp", "--header", "Authorization=Bearer t")).code)
      .toBe(0)
    const added = fs.readFileSync(file, "utf8")
    expect(added.startsWith(original.slice(0, original.indexOf("}, // notes")))).toBe(true)
    expect(added).toContain(
      `"args": [\n        "-y",\n        "@modelcontextprotocol/server-filesystem",\n        "."\n      ]`
    )
    expect(added).toContain(`"theme": "dark"`)

    const again = await edit("add", "fs", "--", "node")
    expect(again.code).toBe(2)
    expect(again.stderr).toContain("server 'fs' already exists")

    expect((await edit("disable", "memory")).code).toBe(0)
    expect(fs.readFileSync(file, "utf8")).toContain(
      `"args": ["-y", "@modelcontextprotocol/server-memory"], "disabled": true }, // notes`
    )
    expect((await edit("enable", "memory")).code).toBe(0)
    expect((await edit("remove", "fs", "--json")).stdout).toContain(`"action": "removed"`)
    expect((await edit("remove", "remote")).code).toBe(0)
    expect(fs.readFileSync(file, "utf8")).toBe(original)

    const missing = await edit("remove", "nothere")
    expect(missing.code).toBe(2)
  })

  it("remove takes the comment lines right above the entry with it", async () => {
    const text = `{
  "mcpServers": {
    // long-term notes
    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },
    // the web
    "web": { "url": "https://example.com/mcp" }
  }
}
`
    const dir = tempDir({ ".mcp.json": text })
    expect((await run(["remove", "memory"], { cwd: dir, mark })).code).toBe(0)
    expect(fs.readFileSync(path.join(dir, ".mcp.json"), "utf8")).toBe(`{
  "mcpServers": {
    // the web
    "web": { "url": "https://example.com/mcp" }
  }
}
`)
  })

  it("add creates ./.mcp.json when there is no config", async () => {
    const dir = tempDir()
    const result = await run(["add", "memory", "--", "npx", "-y", "@modelcontextprotocol/server-memory"], {
      cwd: dir,
      mark,
      env: { HOME: dir }
    })
    expect(result.code).toBe(0)
    expect(json(fs.readFileSync(path.join(dir, ".mcp.json"), "utf8"))).toEqual({
      mcpServers: { memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] } }
    })
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

describe("test <name> flags what a host would trip over", () => {
  const mini = path.join(path.dirname(FIXTURES.failing), "mini-server.mjs")
  const dir = tempDir({
    ".mcp.json": config({
      stubborn: { command: process.execPath, args: [FIXTURES.stubborn] },
      // Ignores its stdin closing, not SIGTERM.
      deaf: {
        command: process.execPath,
        args: [
          "--input-type=module",
          "-e",
          `import { serve } from ${
            JSON.stringify(mini)
          }; serve({ name: "deaf", exitOnStdinEnd: false }); setInterval(() => {}, 1000)`
        ]
      },
      garbage: { command: process.execPath, args: [path.join(path.dirname(FIXTURES.failing), "garbage.mjs")] },
      chatty: {
        command: process.execPath,
        args: ["-e", "for (let i = 1; i <= 30; i++) console.error('line ' + i); process.exit(1)"]
      }
    })
  })
  const test = (name: string, ...flags: Array<string>) => run(["test", name, ...flags], { cwd: dir, mark })

  it("a server that ignores its stdin closing or SIGTERM, with how long its shutdown took; stdout noise", async () => {
    const [stubborn, deaf, garbage] = await Promise.all([
      test("stubborn", "--json"),
      test("deaf", "--json"),
      test("garbage")
    ])
    expect(stubborn.code).toBe(0)
    const stubbornReport = json(stubborn.stdout)
    expect(stubbornReport.steps.at(-1)).toMatchObject({ step: "close", ok: true, detail: "SIGKILL needed" })
    expect(stubbornReport.warnings).toEqual([
      expect.stringMatching(
        /^it ignores its stdin closing and SIGTERM: it ended only on SIGKILL, \d+ ms after its stdin closed$/
      )
    ])
    // Both grace periods (2 s each) were waited out.
    expect(Number(/(\d+) ms/.exec(stubbornReport.warnings[0])![1])).toBeGreaterThanOrEqual(3900)

    const deafReport = json(deaf.stdout)
    expect(deafReport.warnings).toEqual([
      expect.stringMatching(/^it ignores its stdin closing: it ended only on SIGTERM, \d+ ms after its stdin closed$/)
    ])

    expect(garbage.code).toBe(0)
    expect(garbage.stderr).toMatch(
      /warning: it writes to stdout what is not JSON-RPC \(\d+ lines skipped; the first was not JSON: Server starting up\.\.\. \(this is not JSON\)\); clients may fail on it/
    )
  }, hangGuard(20_000))

  it("a server that died: the whole stderr tail, beyond the 20 lines its error shows", async () => {
    const chatty = await test("chatty")
    expect(chatty.code).toBe(1)
    expect(chatty.stdout).toMatch(
      /initialize failed: server 'chatty' exited with code 1 before answering the handshake: line 11\n/
    )
    expect(chatty.stdout).toContain(
      `its stderr:\n${Array.from({ length: 30 }, (_, i) => `  line ${i + 1}`).join("\n")}`
    )
  })
})

describe("watch", () => {
  it("prints events as they happen and follows an edit of the config", async () => {
    const dir = tempDir({ ".mcp.json": config({ memory: servers.memory }) })
    const watching = start(["watch", "--json"], { cwd: dir, mark })
    const ready = (server: string) => (line: string) => {
      const event = JSON.parse(line)
      return event.type === "ServerStateChanged" && event.server === server && event.state === "Ready"
    }
    await watching.line(ready("memory"), "memory ready")
    const added = await run([
      "add",
      "notes",
      "--env",
      `MEMORY_FILE_PATH=${memoryFile}.notes`,
      "--env",
      `${MARK}=${mark}`,
      "--",
      process.execPath,
      SERVERS.memory
    ], { cwd: dir, mark })
    expect(added.code).toBe(0)
    const applied = JSON.parse(
      await watching.line((line) => JSON.parse(line).type === "ConfigApplied" && line.includes("notes"), "the edit")
    )
    expect(applied).toMatchObject({ added: ["notes"], removed: [], unchanged: ["memory"] })
    await watching.line(ready("notes"), "notes ready")
    expect(await watching.stop()).toBe(0)
  })

  it("shows an invalid edit and a deleted file at the default log level, and keeps the servers", async () => {
    const dir = tempDir({ ".mcp.json": config({ memory: servers.memory }) })
    const file = path.join(dir, ".mcp.json")
    const watching = start(["watch"], { cwd: dir, mark })
    await watching.line((line) => line.includes("memory: Connecting → Ready"), "memory ready")
    fs.writeFileSync(file, config({ memory: { ...servers.memory, command: 5 } }))
    await watching.line(
      (line) =>
        line.endsWith(
          `config: invalid config file ${file}: mcpServers.memory.command: expected a string, got 5; ` +
            "keeping the last good config"
        ),
      "the invalid edit"
    )
    fs.rmSync(file)
    await watching.line(
      (line) => line.endsWith(`config: config file ${file} was deleted; keeping the last good config until it is back`),
      "the deletion"
    )
    expect(await watching.stop()).toBe(0)
    // Nothing was stopped or applied while the file was broken or gone.
    const after = watching.stdout().slice(watching.stdout().indexOf("invalid config file"))
    expect(after).not.toMatch(/→|config: (added|removed)/)
  })
})

describe("serve (the gateway through the CLI)", () => {
  const pair = tempDir({
    ".mcp.json": config({ memory: servers.memory, everything: servers.everything })
  })

  it("over stdio, the official SDK client lists and calls tools of two servers", async () => {
    const client = new Client({ name: "cli-test", version: "1.0.0" })
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio"],
      cwd: pair,
      env: { ...process.env, ...cliEnv(), [MARK]: mark } as Record<string, string>,
      stderr: "pipe"
    })
    await client.connect(transport)
    try {
      const { tools } = await client.listTools()
      const names = tools.map((tool) => tool.name)
      expect(names).toContain("mcp__memory__read_graph")
      expect(names).toContain("mcp__everything__echo")
      const echo = await client.callTool({ name: "mcp__everything__echo", arguments: { message: "via gateway" } })
      expect(echo.content).toEqual([{ type: "text", text: "Echo: via gateway" }])
      const graph = await client.callTool({ name: "mcp__memory__read_graph", arguments: {} })
      expect(graph.isError).not.toBe(true)
    } finally {
      await client.close()
    }
  })

  it("over HTTP, with the URL printed by --json", async () => {
    const serving = start(["serve", "--http", "0", "--json"], { cwd: pair, mark })
    try {
      const url = JSON.parse(await serving.line((line) => line.includes("\"url\""), "the URL")).url as string
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      const client = new Client({ name: "cli-test", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toContain("mcp__everything__echo")
      const echo = await client.callTool({ name: "mcp__everything__echo", arguments: { message: "over http" } })
      expect(echo.content).toEqual([{ type: "text", text: "Echo: over http" }])
      await client.close()
    } finally {
      expect(await serving.stop()).toBe(0)
    }
  })

  it("prints an invalid edit of the config at the default log level", async () => {
    const dir = tempDir({ ".mcp.json": config({ memory: servers.memory }) })
    const file = path.join(dir, ".mcp.json")
    const serving = start(["serve", "--http", "0", "--json"], { cwd: dir, mark })
    try {
      await serving.line((line) => line.includes("\"url\""), "the URL")
      fs.writeFileSync(file, "{ not json")
      await serving.errorLine(
        (line) => line.startsWith(`mcp-fleet: warning: invalid config file ${file}: not valid JSON`),
        "the warning"
      )
    } finally {
      expect(await serving.stop()).toBe(0)
    }
  })
})

describe("serve --stdio leaves no process behind, however its host ends it", () => {
  // A server that ignores stdin's end and SIGTERM, with a grandchild in its group, and one
  // whose children left its group (detached, setsid, a double-forked daemon).
  const unruly = tempDir({
    ".mcp.json": config({
      stubborn: marked({ command: process.execPath, args: [FIXTURES.stubborn] }, mark),
      escaping: marked({ command: process.execPath, args: [FIXTURES.escaping] }, mark)
    })
  })

  /** The official SDK client on `serve --stdio`, and every process of the two servers. */
  const connect = async () => {
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio"],
      cwd: unruly,
      env: { ...process.env, ...cliEnv(), [MARK]: mark } as Record<string, string>,
      stderr: "pipe"
    })
    const client = new Client({ name: "cli-test", version: "1.0.0" })
    await client.connect(transport)
    const pids = async (tool: string) =>
      JSON.parse((await client.callTool({ name: tool, arguments: {} }) as any).content[0].text)
    const stubborn = await pids("mcp__stubborn__pids")
    const escaping = await pids("mcp__escaping__pids")
    const groups = [stubborn.server, escaping.server] as Array<number>
    const escaped = [escaping.detached, escaping.setsid, escaping.daemon] as Array<number>
    const gone = () =>
      groups.every((pgid) => groupMembers(pgid).length === 0) && escaped.every((pid) => procState(pid) !== "alive")
    expect(gone()).toBe(false)
    return { client, gateway: transport.pid!, gone }
  }

  it("a one-shot command ends the children that left a server's group with it", async () => {
    const result = await run(["call", "escaping", "pids", "--json"], { cwd: unruly, mark })
    expect(result.code).toBe(0)
    const pids = JSON.parse(json(result.stdout).content[0].text)
    // The command returned after the stop: nothing is left, not even for a moment.
    expect(groupMembers(pids.server)).toEqual([])
    expect([pids.detached, pids.setsid, pids.daemon].map(procState).filter((state) => state === "alive")).toEqual([])
  }, hangGuard(15_000))

  it("client.close(): every server is gone within 1.5 s of stdin's end, before the SDK's SIGTERM", async () => {
    const { client, gone } = await connect()
    const slack = bound(0)
    const start = performance.now()
    const closed = client.close().then(() => performance.now() - start)
    expect(await within(gone, 10_000)).toBeLessThan(1500 + (await slack))
    // The gateway exited by itself: the SDK sends SIGTERM after 2 s.
    expect(await closed).toBeLessThan(2000 + (await slack))
  })

  it("SIGTERM: every server is gone within 1 s", async () => {
    const { client, gateway, gone } = await connect()
    const limit = bound(1000)
    process.kill(gateway, "SIGTERM")
    expect(await within(gone, 10_000)).toBeLessThan(await limit)
    await client.close()
  })

  it("SIGKILL: the guardian ends every server within 3 s, and then itself", async () => {
    const { client, gateway, gone } = await connect()
    const guardian = guardianOf(gateway)
    expect(guardian).toBeDefined()
    const limit = bound(3000)
    process.kill(gateway, "SIGKILL")
    expect(await within(gone, 10_000)).toBeLessThan(await limit)
    expect(await within(() => procState(guardian!) !== "alive", 10_000)).toBeDefined()
    await client.close()
  })
})

describe("secrets", () => {
  const TOKEN = "tok-7c1e94b0d2a5"
  const AUTH = "auth-5b2d8e61f0c3"
  const KEY = "key-e40a9c3d71b6"
  const PASSWORD = "pw-9f03b7a1c5e2"
  const echoSecret = path.join(path.dirname(FIXTURES.failing), "echo-secret.mjs")
  const echo = (args: Array<string>) => ({
    command: process.execPath,
    args: [echoSecret, ...args],
    env: { API_TOKEN: "${API_TOKEN}" },
    restart: { maxAttempts: 1 }
  })
  const dir = tempDir({
    ".mcp.json": config({
      remote: {
        url: `http://user:${PASSWORD}@127.0.0.1:1/mcp?token=${TOKEN}`,
        headers: { Authorization: "Bearer ${REMOTE_AUTH}", "X-Key": KEY },
        restart: { maxAttempts: 1 }
      },
      echo: echo([]),
      crash: echo(["crash"])
    })
  })
  const env = { API_TOKEN: TOKEN, REMOTE_AUTH: AUTH }
  const secretsCli = (...args: Array<string>) => run(args, { cwd: dir, mark, env })
  const expectNoSecret = (result: { readonly stdout: string; readonly stderr: string }) => {
    for (const secret of [TOKEN, AUTH, KEY, PASSWORD]) {
      expect(result.stdout).not.toContain(secret)
      expect(result.stderr).not.toContain(secret)
    }
  }

  it("servers, its --json and its debug logs show no header, URL credential, token or echoed env secret", async () => {
    const human = await secretsCli("servers")
    expect(human.stdout).toContain("crash: server 'crash' exited with code 1 before answering the handshake")
    expect(human.stdout).toContain("error: the token *** was refused")
    expectNoSecret(human)
    const asJson = await secretsCli("servers", "--json")
    const crash = json(asJson.stdout).find((status: any) => status.name === "crash")
    expect(crash.error.message).toContain("the token *** was refused")
    expectNoSecret(asJson)
    const debug = await secretsCli("--log-level", "debug", "servers")
    expect(debug.stderr).toContain("starting with API_TOKEN=***")
    expectNoSecret(debug)
  })

  it("call and test <name> show the server's errors masked and a URL without user:password@", async () => {
    const called = await secretsCli("call", "echo", "leak")
    expect(called.code).toBe(1)
    expect(called.stderr).toContain("the token *** is not allowed")
    expectNoSecret(called)
    const tested = await secretsCli("test", "remote")
    expect(tested.code).toBe(1)
    expect(tested.stderr).toContain("testing 'remote' (http: http://127.0.0.1:1/mcp)")
    expectNoSecret(tested)
    const crashed = await secretsCli("--log-level", "debug", "test", "crash")
    expect(crashed.stdout).toContain("error: the token *** was refused")
    expectNoSecret(crashed)
  })

  it("the gateway answers with the server's error masked, and logs no secret at debug level", async () => {
    const client = new Client({ name: "cli-test", version: "1.0.0" })
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "--log-level", "debug", "serve", "--stdio"],
      cwd: dir,
      env: { ...process.env, ...cliEnv(), ...env, [MARK]: mark } as Record<string, string>,
      stderr: "pipe"
    })
    let stderr = ""
    transport.stderr!.on("data", (chunk: Buffer) => stderr += chunk.toString("utf8"))
    await client.connect(transport)
    try {
      const answer = await client.callTool({ name: "mcp__echo__leak", arguments: {} }).then(
        (result) => JSON.stringify(result),
        (error: Error) => error.message
      )
      expect(answer).toContain("the token *** is not allowed")
      expectNoSecret({ stdout: answer, stderr })
    } finally {
      await client.close()
    }
    expect(stderr).toContain("starting with API_TOKEN=***")
  })
})
