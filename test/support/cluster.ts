// Cluster runners as real processes of the bundled CLI (`mcp-fleet runner --json`), each
// started in its own process group and ended by its pid, and the config of ledger servers
// (test/fixtures/cluster-ledger.mjs) they share.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ClusterRegistry } from "../../src/cluster/index.js"
import * as NodeFleet from "../../src/NodeFleet.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { CLI, cliEnv, MARK } from "./cli.js"
import { type FreshDatabase, freshDatabase } from "./postgres.js"

/** The ledger fixture: every call it runs is a line of its LEDGER file. */
export const LEDGER_SCRIPT = fileURLToPath(new URL("../fixtures/cluster-ledger.mjs", import.meta.url))

/** Writes `mcp.json` in `dir` with one ledger server per name, all writing `dir/ledger.txt`. */
export const ledgerConfig = (dir: string, names: ReadonlyArray<string>): string => {
  const file = path.join(dir, "mcp.json")
  const servers = Object.fromEntries(names.map((name) => [name, {
    command: process.execPath,
    args: [LEDGER_SCRIPT],
    env: { SERVER_NAME: name, LEDGER: path.join(dir, "ledger.txt") }
  }]))
  fs.writeFileSync(file, JSON.stringify({ mcpServers: servers }))
  return file
}

/** The ledger's lines: server, tool, call id, pid of the server process. */
export const ledger = (dir: string) => {
  const file = path.join(dir, "ledger.txt")
  if (!fs.existsSync(file)) return []
  return fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((line) => {
    const [server, tool, id, pid] = line.split(" ")
    return { server: server!, tool: tool!, id: id!, pid: Number(pid) }
  })
}

/** A runner process and the address it announced. */
export interface RunnerProcess {
  readonly child: cp.ChildProcessWithoutNullStreams
  readonly address: string
  readonly stderr: () => string
}

/** Starts `mcp-fleet runner` and resolves once it printed its address. */
export const startRunner = (
  options: {
    readonly url: string
    readonly config: string
    readonly cwd: string
    readonly mark: string
    /** More arguments, e.g. `--log-level info`. */
    readonly args?: ReadonlyArray<string>
  }
) =>
  new Promise<RunnerProcess>((resolve, reject) => {
    const child = cp.spawn(CLI[0], [
      ...CLI.slice(1),
      "runner",
      "--cluster",
      options.url,
      "--config",
      options.config,
      "--json",
      ...(options.args ?? [])
    ], {
      cwd: options.cwd,
      env: { ...process.env, ...cliEnv(), [MARK]: options.mark, NO_COLOR: "1" },
      stdio: "pipe"
    })
    let stdout = ""
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk)
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      const line = stdout.split("\n").find((candidate) => candidate.startsWith("{"))
      if (line !== undefined) resolve({ child, address: JSON.parse(line).runner, stderr: () => stderr })
    })
    child.on("error", reject)
    child.on("exit", (code) => reject(new Error(`the runner exited (${code}) before joining: ${stderr}`)))
  })

/** Ends the runners still alive (SIGTERM) and resolves once each has exited. */
export const stopRunners = (runners: ReadonlyArray<RunnerProcess>): Promise<unknown> =>
  Promise.all(runners.map((runner) =>
    new Promise((resolve) => {
      if (runner.child.exitCode !== null || runner.child.signalCode !== null) return resolve(undefined)
      runner.child.on("exit", resolve)
      runner.child.kill("SIGTERM")
    })
  ))

/**
 * A gateway replica in this process: a ClusterRegistry on `url` hosting nothing (unless
 * `options` make it a runner), with the host services of `host`, for the Scope.
 */
export const replica = <H = never>(
  url: string,
  options: Omit<ClusterRegistry.Options, "url"> = {},
  host: Layer.Layer<H> = Layer.empty as Layer.Layer<H>
) =>
  Effect.map(
    Layer.build(ClusterRegistry.layer({ url, ...options }).pipe(Layer.provide(NodeFleet.layer), Layer.provide(host))),
    (context) => Context.get(context, ServerRegistry.ServerRegistry)
  )

/** A cluster of a test file: its database, folder, config of ledger servers and runners. */
export interface TestCluster {
  readonly db: FreshDatabase
  readonly dir: string
  readonly config: string
  readonly runners: Array<RunnerProcess>
  /** Ends the runners, drops the database, removes the folder. */
  readonly stop: () => Promise<void>
}

/** Starts `count` runners of the ledger servers `names` on a fresh database. */
export const startCluster = async (names: ReadonlyArray<string>, count: number, mark: string): Promise<TestCluster> => {
  const db = await freshDatabase()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mcp-fleet-${mark}-`))
  const config = ledgerConfig(dir, names)
  const runners: Array<RunnerProcess> = []
  const stop = async () => {
    await stopRunners(runners)
    await db.drop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  try {
    for (let i = 0; i < count; i++) runners.push(await startRunner({ url: db.url, config, cwd: dir, mark }))
  } catch (error) {
    // The file's afterAll never sees a cluster that failed to start: end what did start here.
    await stop()
    throw error
  }
  return { db, dir, config, runners, stop }
}
