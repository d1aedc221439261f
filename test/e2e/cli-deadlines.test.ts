// `call`'s time limits on the command line: `--timeout` is the call's own (its inactivity),
// `--ready-timeout` the wait for its server to start (by default the server's readyTimeout),
// `--max-time` the whole call.
import { afterAll, describe, expect, it } from "vitest"
import { config, leavesNothing, run, tempDir } from "../support/cli.js"

const mark = `cli-deadlines-${process.pid}-${Date.now()}`

// Never answers initialize; leaves when its stdin closes. Ready within 2 s, or not at all.
const hung = {
  command: process.execPath,
  args: ["-e", "process.stdin.on('end', () => process.exit(0)); process.stdin.resume()"],
  readyTimeout: 2000
}

const cwd = tempDir({ ".mcp.json": config({ hung }) })
const cli = (...args: Array<string>) => run(args, { cwd, mark })

afterAll(() => leavesNothing(mark))

describe("call's deadlines", () => {
  it("waits for its server within the server's readyTimeout, not --timeout, or within --ready-timeout", async () => {
    const byServer = await cli("call", "hung", "anything", "--timeout", "500ms")
    expect(byServer.code).toBe(1)
    expect(byServer.stderr).toContain("server 'hung': was not ready within 2000 ms")
    const given = await cli("call", "hung", "anything", "--ready-timeout", "1s")
    expect(given.code).toBe(1)
    expect(given.stderr).toContain("server 'hung': was not ready within 1000 ms")
    const bad = await cli("call", "hung", "anything", "--ready-timeout", "soon")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--ready-timeout 'soon' is not a duration such as 30s, 500ms or 2m")
  })

  it("--help says what each limit is", async () => {
    const help = await cli("call", "--help")
    expect(help.stdout).toContain("--ready-timeout")
    expect(help.stdout).toContain("The call's own time limit")
  })
})
