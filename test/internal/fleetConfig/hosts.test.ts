// Other hosts' config files: where each keeps them, and what `${workspaceFolder}`, a relative
// envFile and cwd mean in an editor's project file (the project, not `.cursor/`).
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FleetConfig from "../../../src/FleetConfig.js"
import * as Hosts from "../../../src/internal/fleetConfig/hosts.js"
import { posixPath } from "../../../src/internal/platform.js"
import type * as ServerSpec from "../../../src/ServerSpec.js"

const stdio = (spec: ServerSpec.ServerSpec) => spec.transport as ServerSpec.StdioTransportSpec

const entry = {
  command: "x",
  args: ["${workspaceFolder}/data", "${workspaceFolderBasename}"],
  cwd: "tools",
  envFile: ".env"
}

describe("hosts", () => {
  it("in .cursor/mcp.json and .vscode/mcp.json, ${workspaceFolder}, ${workspaceFolderBasename} and cwd mean the project", () => {
    for (const folder of [".cursor", ".vscode"]) {
      const servers = Either.getOrThrow(
        FleetConfig.parse(
          JSON.stringify({ mcpServers: { a: { ...entry, envFile: undefined } } }),
          `/work/app/${folder}/mcp.json`,
          {}
        )
      )
      expect(stdio(servers[0]!).args).toEqual(["/work/app/data", "app"])
      expect(stdio(servers[0]!).cwd).toBe("/work/app/tools")
    }
    // Any other file's folder is its project.
    const plain = Either.getOrThrow(
      FleetConfig.parse(
        JSON.stringify({ mcpServers: { a: { ...entry, envFile: undefined } } }),
        "/work/app/.mcp.json",
        {}
      )
    )
    expect(stdio(plain[0]!).args).toEqual(["/work/app/data", "app"])
    expect(Hosts.workspaceOf("/work/app/conf", posixPath)).toBe("/work/app/conf")
  })

  it.effect("a relative envFile of .cursor/mcp.json is read from the project folder", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-hosts-"))
      try {
        fs.mkdirSync(path.join(dir, ".cursor"))
        fs.writeFileSync(path.join(dir, ".env"), "TOKEN=from-project\n")
        fs.writeFileSync(path.join(dir, ".cursor", "mcp.json"), JSON.stringify({ mcpServers: { a: entry } }))
        const loaded = yield* FleetConfig.load({ paths: [path.join(dir, ".cursor", "mcp.json")], env: {} })
        expect(loaded.servers[0]!.problem).toBeUndefined()
        expect(Object.keys(stdio(loaded.servers[0]!).env ?? {})).toEqual(["TOKEN"])
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it("knows each host's files per OS, lowest precedence first", () => {
    const machine = (platform: string, env: Record<string, string> = {}): Hosts.Machine => ({
      platform,
      home: "/home/me",
      env,
      cwd: "/work/app",
      path: posixPath
    })
    expect(Hosts.locations("claude-desktop", machine("darwin"))).toEqual([
      { path: "/home/me/Library/Application Support/Claude/claude_desktop_config.json" }
    ])
    expect(Hosts.locations("claude-desktop", machine("win32", { APPDATA: "/roaming" }))[0]!.path)
      .toBe("/roaming/Claude/claude_desktop_config.json")
    expect(Hosts.locations("claude-desktop", machine("linux"))[0]!.path)
      .toBe("/home/me/.config/Claude/claude_desktop_config.json")
    expect(Hosts.locations("claude-code", machine("linux"))).toEqual([
      { path: "/home/me/.claude.json" },
      { path: "/work/app/.mcp.json" },
      { path: "/home/me/.claude.json", project: "/work/app" }
    ])
    expect(Hosts.locations("vscode", machine("linux")).map((location) => location.path)).toEqual([
      "/home/me/.config/Code/User/mcp.json",
      "/work/app/.vscode/mcp.json"
    ])
    expect(Hosts.locations("cursor", machine("darwin")).map((location) => location.path)).toEqual([
      "/home/me/.cursor/mcp.json",
      "/work/app/.cursor/mcp.json"
    ])
  })

  it("reads the servers of a host's file: mcpServers, servers, and Claude Code's projects", () => {
    const json = {
      mcpServers: { user: { command: "u" }, broken: 5 },
      projects: { "/work/app": { mcpServers: { local: { command: "l" } } } }
    }
    expect(Hosts.entriesOf(json, { path: "/home/me/.claude.json" })).toEqual([["user", { command: "u" }]])
    expect(Hosts.entriesOf(json, { path: "/home/me/.claude.json", project: "/work/app" }))
      .toEqual([["local", { command: "l" }]])
    expect(Hosts.entriesOf(json, { path: "x", project: "/elsewhere" })).toEqual([])
    expect(Hosts.entriesOf({ servers: { v: { url: "https://x" } } }, { path: "x" })).toEqual([["v", {
      url: "https://x"
    }]])
  })
})
