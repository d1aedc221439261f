// The CLI when servers are slow to come, hung or broken for good: `servers` works as a
// health check.
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { config, MARK, removeTempDirs, run, tempDir } from "./support/cli.js"
import { survivors } from "./support/processes.js"

const mark = `cli-readiness-${process.pid}-${Date.now()}`
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

const ok = { command: process.execPath, args: [fixture("env.mjs")] }
// Never answers initialize; leaves when its stdin closes.
const hung = {
  command: process.execPath,
  args: ["-e", "process.stdin.on('end', () => process.exit(0)); process.stdin.resume()"]
}

const cliIn = (servers: Record<string, unknown>) => {
  const cwd = tempDir({ ".mcp.json": config(servers) })
  return (...args: Array<string>) => run(args, { cwd, mark })
}

afterAll(() => {
  removeTempDirs()
  expect(survivors(MARK, mark)).toEqual([])
})

describe("servers as a health check", () => {
  it("exits 1 naming a required server that is not ready, and shows how long it has been connecting", async () => {
    const cli = cliIn({ ok: { ...ok, required: true }, hung: { ...hung, required: true } })
    const human = await cli("servers", "--timeout", "1500ms")
    expect(human.code).toBe(1)
    expect(human.stdout).toMatch(/ok\s+Ready/)
    expect(human.stdout).toMatch(/hung\s+Connecting\s.*Connecting for \d+(\.\d)? s/)
    expect(human.stderr).toMatch(/required server is not ready: 'hung' \(Connecting for \d+(\.\d)? s\)/)

    const asJson = await cli("servers", "--json", "--timeout", "1500ms")
    expect(asJson.code).toBe(1)
    expect(JSON.parse(asJson.stdout).map((status: any) => [status.name, status.state])).toEqual([
      ["ok", "Ready"],
      ["hung", "Connecting"]
    ])
  })

  it("exits 0 when every required server is ready, whatever the others do", async () => {
    const cli = cliIn({ ok: { ...ok, required: true }, hung })
    const result = await cli("servers", "--timeout", "1s")
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/hung\s+Connecting/)
  })
})
