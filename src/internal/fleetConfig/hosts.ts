/**
 * Other MCP hosts' config files: where each keeps them, and what a file of theirs means by
 * its folder. An editor's project file lives in a folder of the project (`.vscode/`,
 * `.cursor/`), and there `${workspaceFolder}`, a relative `envFile` or `cwd` mean the project
 * (the folder holding it), as in that editor; any other file's folder is its project.
 *
 * @internal
 */
import type { PathOps } from "../platform.js"

/** The hosts whose files `import` reads. */
export const hosts = ["claude-desktop", "claude-code", "vscode", "cursor"] as const

/** One of {@link hosts}. */
export type Host = (typeof hosts)[number]

// The folders an editor keeps its project's config in.
const editorFolders = new Set([".vscode", ".cursor"])

/** The project folder of a config file in `dir`: the parent of `.vscode/` or `.cursor/`, else `dir`. */
export const workspaceOf = (dir: string, path: PathOps): string =>
  editorFolders.has(path.basename(dir)) ? path.dirname(dir) : dir

/** Where a host's file is, and which of its servers are this project's. */
export interface Location {
  readonly path: string
  /**
   * Where the servers are in the file: `mcpServers`/`servers` at the top (the default), or
   * Claude Code's `projects[<folder>].mcpServers` for its local scope.
   */
  readonly project?: string | undefined
}

/** What the locations depend on. */
export interface Machine {
  readonly platform: string
  readonly home: string
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  readonly path: PathOps
}

// The folder applications keep their settings in, per OS (as Electron's `appData`).
const appData = ({ env, home, path, platform }: Machine): string =>
  platform === "darwin"
    ? path.join(home, "Library", "Application Support")
    : platform === "win32"
    ? env.APPDATA ?? path.join(home, "AppData", "Roaming")
    : env.XDG_CONFIG_HOME ?? path.join(home, ".config")

/**
 * The files a host reads its servers from, lowest precedence first, as each documents them:
 * Claude Desktop's `claude_desktop_config.json`; Claude Code's `~/.claude.json` (user scope,
 * then this project's local scope) and the project's `.mcp.json`; VS Code's user `mcp.json`
 * and the project's `.vscode/mcp.json`; Cursor's `~/.cursor/mcp.json` and `.cursor/mcp.json`.
 */
export const locations = (host: Host, machine: Machine): ReadonlyArray<Location> => {
  const { cwd, home, path } = machine
  switch (host) {
    case "claude-desktop":
      return [{ path: path.join(appData(machine), "Claude", "claude_desktop_config.json") }]
    case "claude-code":
      return [
        { path: path.join(home, ".claude.json") },
        { path: path.join(cwd, ".mcp.json") },
        { path: path.join(home, ".claude.json"), project: path.resolve(cwd) }
      ]
    case "vscode":
      return [
        { path: path.join(appData(machine), "Code", "User", "mcp.json") },
        { path: path.join(cwd, ".vscode", "mcp.json") }
      ]
    case "cursor":
      return [{ path: path.join(home, ".cursor", "mcp.json") }, { path: path.join(cwd, ".cursor", "mcp.json") }]
  }
}

type Json = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** The server entries of a host's parsed file at `location`, by name (`mcpServers` winning over `servers`). */
export const entriesOf = (json: unknown, location: Location): ReadonlyArray<readonly [string, Json]> => {
  const projects = isObject(json) ? json.projects : undefined
  const holder = location.project === undefined
    ? json
    : isObject(projects)
    ? projects[location.project]
    : undefined
  if (!isObject(holder)) return []
  const found = new Map<string, Json>()
  for (const key of ["servers", "mcpServers"]) {
    const servers = holder[key]
    if (!isObject(servers)) continue
    for (const [name, entry] of Object.entries(servers)) if (isObject(entry)) found.set(name, entry)
  }
  return [...found]
}
