// `import --from <host>` (each host's files where it keeps them), `add-json`, and
// `add --scope local|project|user` as Claude Code means them.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { cliEnv, leavesNothing, MARK, run, SERVERS, tempDir } from "../support/cli.js"

const mark = `cli-import-${process.pid}-${Date.now()}`

afterAll(() => leavesNothing(mark))

const write = (file: string, json: unknown) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(json, null, 2))
}

// A project folder and a home of its own, so no real host file is read.
const machine = () => {
  const home = tempDir()
  const project = fs.realpathSync(tempDir())
  const cli = (...args: Array<string>) => run(args, { cwd: project, mark, env: { HOME: home } })
  return { home, project, cli }
}

describe("import --from", () => {
  it("claude-code: ~/.claude.json's user and this project's local servers, and ./.mcp.json; --dry-run writes nothing", async () => {
    const { cli, home, project } = machine()
    write(path.join(home, ".claude.json"), {
      mcpServers: { everywhere: { command: "u" } },
      projects: {
        [project]: { mcpServers: { mine: { command: "l", args: ["x"] } } },
        "/other": { mcpServers: { no: {} } }
      }
    })
    const dry = await cli("import", "--from", "claude-code", "--dry-run", "--scope", "user")
    expect(dry.code).toBe(0)
    expect(dry.stdout).toContain("would add 'everywhere' (stdio: u)")
    expect(dry.stdout).toContain("would add 'mine' (stdio: l x)")
    expect(dry.stdout).not.toContain("'no'")
    const user = path.join(cliEnv().XDG_CONFIG_HOME, "mcp-fleet", "mcp.json")
    expect(fs.existsSync(user)).toBe(false)

    const done = await cli("import", "--from", "claude-code", "--scope", "user", "--json")
    expect(done.code).toBe(0)
    expect(JSON.parse(done.stdout).added.map((server: { name: string }) => server.name)).toEqual(["everywhere", "mine"])
    expect(Object.keys(JSON.parse(fs.readFileSync(user, "utf8")).mcpServers)).toEqual(["everywhere", "mine"])
    // Again: both are there already, and are left alone.
    const again = await cli("import", "--from", "claude-code", "--scope", "user", "--json")
    expect(JSON.parse(again.stdout).skipped.map((server: { name: string }) => server.name)).toEqual([
      "everywhere",
      "mine"
    ])
    fs.rmSync(user)
  })

  it("cursor and vscode: the user's and the project's files, into ./.mcp.json; claude-desktop from its app folder", async () => {
    const { cli, home, project } = machine()
    write(path.join(home, ".cursor", "mcp.json"), { mcpServers: { c1: { url: "https://u:p@example.com/mcp?k=v" } } })
    write(path.join(project, ".cursor", "mcp.json"), { mcpServers: { c2: { command: "c" } } })
    write(path.join(project, ".vscode", "mcp.json"), { servers: { v1: { type: "stdio", command: "v" } } })
    const cursor = await cli("import", "--from", "cursor", "--scope", "project")
    expect(cursor.code).toBe(0)
    expect(cursor.stdout).toContain("added 'c1' (http: https://example.com/mcp)")
    const vscode = await cli("import", "--from", "vscode", "--scope", "project")
    expect(vscode.code).toBe(0)
    const written = JSON.parse(fs.readFileSync(path.join(project, ".mcp.json"), "utf8"))
    expect(Object.keys(written.mcpServers)).toEqual(["c1", "c2", "v1"])

    const none = await cli("import", "--from", "claude-desktop")
    expect(none.code).toBe(1)
    expect(none.stderr).toContain("no claude-desktop config found")
    write(path.join(cliEnv().XDG_CONFIG_HOME, "Claude", "claude_desktop_config.json"), {
      mcpServers: { d1: { command: "d" } }
    })
    const desktop = await cli("import", "--from", "claude-desktop", "--dry-run")
    expect(desktop.stdout).toContain("would add 'd1'")
  })
})

describe("add --scope and add-json", () => {
  it("project writes ./.mcp.json, user the user's config, local a private file of this project that the CLI then reads", async () => {
    const { cli, project } = machine()
    const entry = JSON.stringify({ command: process.execPath, args: [SERVERS.memory], env: { [MARK]: mark } })
    const local = await cli("add-json", "memory", entry, "--scope", "local", "--json")
    expect(local.code).toBe(0)
    const file = JSON.parse(local.stdout).file as string
    expect(file).toContain(path.join(cliEnv().XDG_CONFIG_HOME, "mcp-fleet", "projects", path.basename(project)))
    expect(fs.existsSync(path.join(project, ".mcp.json"))).toBe(false)
    // The local file is this project's: the CLI reads it here, and nowhere else.
    const listed = await cli("tools", "--json")
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain("mcp__memory__")

    // Without --scope, the local file is read but not written: a new ./.mcp.json is.
    const plain = await cli("add", "api", "--", "echo")
    expect(plain.code).toBe(0)
    expect(Object.keys(JSON.parse(fs.readFileSync(file, "utf8")).mcpServers)).toEqual(["memory"])
    const shared = await cli("add", "web", "--url", "https://example.com/mcp", "--scope", "project")
    expect(shared.code).toBe(0)
    expect(Object.keys(JSON.parse(fs.readFileSync(path.join(project, ".mcp.json"), "utf8")).mcpServers))
      .toEqual(["api", "web"])
    const user = await cli("add", "mine", "--scope", "user", "--", "echo")
    expect(user.stdout).toContain("mcp-fleet/mcp.json")
    fs.rmSync(path.join(cliEnv().XDG_CONFIG_HOME, "mcp-fleet", "mcp.json"))
  })

  it("add-json refuses JSON that is not a usable server, naming it", async () => {
    const { cli } = machine()
    const broken = await cli("add-json", "x", "{not json")
    expect(broken.code).toBe(2)
    expect(broken.stderr).toContain("the JSON of server 'x' is not valid")
    const neither = await cli("add-json", "x", `{"args": ["a"]}`)
    expect(neither.code).toBe(2)
    expect(neither.stderr).toContain(`server 'x' cannot be used: neither "command" nor "url" is set`)
    const unset = await cli("add-json", "y", `{"command": "x", "env": {"T": "\${NOT_SET_HERE}"}}`, "--json")
    expect(unset.code).toBe(0)
  })
})
