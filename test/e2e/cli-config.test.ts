// The `mcp-fleet` CLI end to end (see cli.test.ts): VS Code inputs, the wording of config
// mistakes, editing the config with add/remove/enable/disable, and what `test <name>` flags.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  config,
  FIXTURES,
  hasScript,
  leavesNothing,
  marked,
  realServers,
  run,
  runOnTerminal,
  tempDir
} from "../support/cli.js"
import { hangGuard } from "../support/guard.js"

const mark = `cli-config-${process.pid}-${Date.now()}`
const servers = realServers(mark)
const json = (text: string) => JSON.parse(text) as any

// Every server any command started has ended with it.
afterAll(() => leavesNothing(mark))

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
