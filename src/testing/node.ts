/**
 * The part of the test kit that needs Node (`mcp-fleet/testing/node`): temp folders and
 * fixture servers run as child processes, each owned by a Scope, so a test leaves nothing
 * behind — the folder is removed and the process ended (and waited for) when the Scope closes.
 * The rest of the kit (`mcp-fleet/testing`) stays platform-neutral.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * A temp folder holding `files` (name → text), removed with everything in it when the Scope
 * closes. Its path is the real one (no symlinked tmp), as child processes report it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tempDir = (files: Readonly<Record<string, string>> = {}): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-test-")))
      for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text)
      return dir
    }),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/**
 * How a fixture script runs: on this process's Node, with `execArgv` before the script (such
 * as `["--import", "tsx"]` for a TypeScript one) and `args` after it.
 *
 * @since 0.1.0
 * @category models
 */
export interface FixtureOptions {
  readonly args?: ReadonlyArray<string> | undefined
  readonly execArgv?: ReadonlyArray<string> | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
}

/**
 * A fixture server as a stdio `ServerSpec` (written out, as `FakeServer.Spec` is): the fleet
 * spawns it on this process's Node and ends it with the server. Other `ServerSpec` fields go
 * in by spreading it.
 *
 * @since 0.1.0
 * @category models
 */
export interface FixtureSpec {
  readonly name: string
  readonly transport: {
    readonly type: "stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly env?: Readonly<Record<string, string>> | undefined
    readonly cwd?: string | undefined
  }
}

const commandLine = (script: string, options: FixtureOptions): Array<string> => [
  ...(options.execArgv ?? []),
  script,
  ...(options.args ?? [])
]

/**
 * The fixture script `script` as the stdio server `name` of a fleet.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fixtureSpec = (name: string, script: string, options: FixtureOptions = {}): FixtureSpec => ({
  name,
  transport: {
    type: "stdio",
    command: process.execPath,
    args: commandLine(script, options),
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd })
  }
})

/**
 * A fixture running as a child process of the test.
 *
 * @since 0.1.0
 * @category models
 */
export interface Spawned {
  readonly child: cp.ChildProcessWithoutNullStreams
  /** Everything it wrote to `stream` so far. */
  readonly output: (stream: "stdout" | "stderr") => string
  /**
   * Waits until what it wrote to `stream` matches `pattern`, and succeeds with the match;
   * fails if it exits first.
   */
  readonly waitFor: (stream: "stdout" | "stderr", pattern: RegExp) => Effect.Effect<RegExpMatchArray, Error>
  /** Waits for it to exit, with its exit code (null when a signal ended it). */
  readonly exited: Effect.Effect<number | null>
}

// How long a fixture may take to end after SIGTERM before it gets SIGKILL.
const killAfterMs = 5_000

const stop = (child: cp.ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const kill = setTimeout(() => child.kill("SIGKILL"), killAfterMs)
    child.once("exit", () => {
      clearTimeout(kill)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })

const watch = (child: cp.ChildProcessWithoutNullStreams): Spawned => {
  const seen = { stdout: "", stderr: "" }
  const changed = new Set<() => void>()
  for (const stream of ["stdout", "stderr"] as const) {
    child[stream].setEncoding("utf8").on("data", (chunk: string) => {
      seen[stream] += chunk
      for (const wake of changed) wake()
    })
  }
  const exited = Effect.async<number | null>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed(child.exitCode))
    child.once("exit", (code) => resume(Effect.succeed(code)))
  })
  const waitFor = (stream: "stdout" | "stderr", pattern: RegExp) =>
    Effect.async<RegExpMatchArray, Error>((resume) => {
      const check = () => {
        const match = seen[stream].match(pattern)
        if (match === null) return false
        changed.delete(check)
        resume(Effect.succeed(match))
        return true
      }
      if (check()) return
      changed.add(check)
      child.once("exit", (code) => {
        if (changed.delete(check)) {
          resume(Effect.fail(new Error(`exited (${code}) before its ${stream} matched ${pattern}:\n${seen.stderr}`)))
        }
      })
      return Effect.sync(() => changed.delete(check))
    })
  return { child, output: (stream) => seen[stream], waitFor, exited }
}

/**
 * Runs the fixture script `script` on this process's Node, with pipes for its stdio; when
 * the Scope closes it is sent SIGTERM (SIGKILL 5 s later) and waited for.
 *
 * @since 0.1.0
 * @category constructors
 */
export const spawn = (script: string, options: FixtureOptions = {}): Effect.Effect<Spawned, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() =>
        cp.spawn(process.execPath, commandLine(script, options), {
          cwd: options.cwd,
          env: { ...process.env, ...options.env },
          stdio: "pipe"
        })
      ),
      stop
    ),
    watch
  )
