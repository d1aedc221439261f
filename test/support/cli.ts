// Runs the `mcp-fleet` CLI as a user would: a real process on the machine's node, in a
// temp folder with its own config. Every process carries an environment marker (servers get it
// through their config's `env`: see `marked`), so a test can check that nothing it started survives.
import { afterAll, expect } from "@effect/vitest"
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { server } from "./bundle.js"
import { CLI_BUNDLE } from "./cliBundle.js"
import { survivors } from "./processes.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** How to run the CLI: the bundle of the source tree built by the test run's global setup. */
export const CLI = [process.execPath, path.join(CLI_BUNDLE, "bin.js")] as const

/** The marker every process of a CLI test inherits. */
export const MARK = "MCP_FLEET_CLI_TEST"

/**
 * Paths of the real servers the configs use (the run's bundles of them: bundle.ts `server`).
 * `everything` is server-everything behind a wrapper that exits when its stdin ends
 * (test/fixtures/everything-stdio.mjs), so that a command's stop does not wait out the 2 s
 * grace period the published server needs; give it "stdio" as its argument, as the published
 * one. `publishedEverything` is the published one itself, for tests whose subject is that stop.
 */
export const SERVERS = {
  everything: server("everythingStdio"),
  publishedEverything: path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
  memory: server("memory")
}

/** Fixture servers of test/fixtures. */
export const FIXTURES = {
  failing: path.join(root, "test/fixtures/failing.mjs"),
  stubborn: path.join(root, "test/fixtures/stubborn.mjs"),
  escaping: path.join(root, "test/fixtures/escaping.mjs"),
  drifting: path.join(root, "test/fixtures/drifting.mjs"),
  env: path.join(root, "test/fixtures/env.mjs"),
  hang: path.join(root, "test/fixtures/hang.mjs")
}

const tempDirs = new Set<string>()

/**
 * A temp folder for one test; `files` are written into it. `removeTempDirs` removes it, and
 * so does the end of every test file that imports this module.
 */
export const tempDir = (files: Record<string, string> = {}): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-cli-"))
  tempDirs.add(dir)
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text)
  return dir
}

/** Removes every folder `tempDir` made (call it in `afterAll`). */
export const removeTempDirs = (): void => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true })
  tempDirs.clear()
  configHome = undefined
}

/**
 * The end of a test file of real processes (call it in `afterAll`): its temp folders are
 * removed, and no process carrying the marker `name=mark` (`MARK`, see `marked`) survives it.
 */
export const leavesNothing = (mark: string, name: string = MARK): void => {
  removeTempDirs()
  expect(survivors(name, mark)).toEqual([])
}

let configHome: string | undefined

/**
 * What every CLI process gets besides the test's own environment: a user config dir (trust
 * records, tool pins) of this test file, made on first use and removed by `removeTempDirs`,
 * so no test reads or writes the real one; and `MCP_FLEET_TRUST=1`, so the `.mcp.json` a
 * test writes in its folder runs without a `trust` first (a trust test sets it to "");
 * and a user cache dir beside the test run's bundle, where its V8 code cache is kept (src/cli/bin.ts)
 * instead of in the real one.
 */
export const cliEnv = (): Record<string, string> => {
  configHome ??= tempDir()
  return {
    XDG_CONFIG_HOME: configHome,
    XDG_CACHE_HOME: path.join(CLI_BUNDLE, "..", "cache-home"),
    MCP_FLEET_TRUST: "1"
  }
}

/** What one run printed and how it ended. */
export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Where a CLI process runs, and the marker it carries. */
export interface Options {
  readonly cwd: string
  readonly mark: string
  readonly env?: Record<string, string>
}

const spawn = (args: ReadonlyArray<string>, options: Options) =>
  cp.spawn(CLI[0], [...CLI.slice(1), ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...cliEnv(), ...options.env, [MARK]: options.mark, NO_COLOR: "1" },
    stdio: "pipe"
  })

/** Runs the CLI to its end. */
export const run = (args: ReadonlyArray<string>, options: Options) =>
  new Promise<Run>((resolve, reject) => {
    const child = spawn(args, options)
    // Nothing to say on stdin: it ends at once.
    child.stdin.end()
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout += chunk)
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk)
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** Whether `script` (util-linux) is there to run the CLI on a terminal of its own. */
export const hasScript = cp.spawnSync("script", ["--version"]).status === 0

/**
 * Runs the CLI on a terminal of its own (through `script`, which gives it a pty): when its
 * output shows `prompt`, `answer` is typed. Resolves with everything the terminal showed.
 * `NO_COLOR` is set unless `options.env` says otherwise.
 */
export const runOnTerminal = (
  args: ReadonlyArray<string>,
  options: Options,
  prompt?: { readonly shows: string; readonly answer: string }
) =>
  new Promise<Run>((resolve, reject) => {
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`
    const child = cp.spawn("script", ["-qec", [...CLI, ...args].map(quote).join(" "), "/dev/null"], {
      cwd: options.cwd,
      env: { ...process.env, ...cliEnv(), NO_COLOR: "1", ...options.env, [MARK]: options.mark },
      stdio: "pipe"
    })
    let shown = ""
    let typed = false
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      shown += chunk
      if (prompt !== undefined && !typed && shown.includes(prompt.shows)) {
        typed = true
        child.stdin.write(`${prompt.answer}\n`)
      }
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout: shown, stderr: "" }))
  })

/** A CLI process that keeps running (`watch`, `serve`), read line by line. */
export interface Running {
  readonly child: cp.ChildProcessWithoutNullStreams
  /** Resolves with the first stdout line (from the start) that `match` accepts. */
  readonly line: (match: (line: string) => boolean, what: string) => Promise<string>
  /** Resolves with the first stderr line (from the start) that `match` accepts. */
  readonly errorLine: (match: (line: string) => boolean, what: string) => Promise<string>
  /** Everything written to stdout so far. */
  readonly stdout: () => string
  /** Everything written to stderr so far. */
  readonly stderr: () => string
  /** Resolves with the exit code once it has exited by itself. */
  readonly exited: Promise<number | null>
  /** Sends SIGTERM and resolves with the exit code once it has exited. */
  readonly stop: () => Promise<number | null>
}

// The lines of a stream as they come, and a wait for the first line that matches.
const lines = (stream: NodeJS.ReadableStream, exited: Promise<unknown>, dump: () => string) => {
  const seen: Array<string> = []
  const waiters = new Set<() => void>()
  let buffer = ""
  stream.on("data", (chunk: string) => {
    buffer += chunk
    const parts = buffer.split("\n")
    buffer = parts.pop()!
    for (const part of parts) seen.push(part)
    for (const wake of waiters) wake()
  })
  return (match: (line: string) => boolean, what: string) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = seen.find(match)
        if (found !== undefined) {
          waiters.delete(check)
          resolve(found)
        }
      }
      waiters.add(check)
      check()
      void exited.then(() => {
        if (waiters.has(check)) reject(new Error(`exited before ${what};\n${dump()}`))
      })
    })
}

/** Starts the CLI and leaves it running. */
export const start = (args: ReadonlyArray<string>, options: Options): Running => {
  const child = spawn(args, options)
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout += chunk)
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk)
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const dump = () => `stdout:\n${stdout}\nstderr:\n${stderr}`
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    line: lines(child.stdout, exited, dump),
    errorLine: lines(child.stderr, exited, dump),
    exited,
    stop: () => {
      child.kill("SIGTERM")
      return exited
    }
  }
}

/** A config entry given the marker in its `env`, so the server and its children can be found. */
export const marked = <E extends Record<string, unknown>>(entry: E, mark: string): E => ({
  ...entry,
  env: { ...(entry.env as Record<string, string> | undefined), [MARK]: mark }
})

/**
 * The real servers from npm of a CLI test's config, carrying `mark`: server-memory, with its
 * graph in a temp folder of its own, and server-everything (the wrapper that ends with its stdin).
 */
export const realServers = (mark: string) => ({
  memory: marked({
    command: process.execPath,
    args: [SERVERS.memory],
    env: { MEMORY_FILE_PATH: path.join(tempDir(), "memory.jsonl") }
  }, mark),
  everything: marked({ command: process.execPath, args: [SERVERS.everything, "stdio"] }, mark)
})

/** A config file's text with the given servers under `mcpServers`. */
export const config = (servers: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ...extra, mcpServers: servers }, null, 2)

// Whatever a test file made here (its temp folders, the CLI's config dir) goes with it.
afterAll(removeTempDirs)
