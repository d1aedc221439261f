// `mcp-fleet test -- <command> [args...]` and `test --url <url>`: try a server with no config.
import { it as effectIt } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { afterAll, describe, expect, it } from "vitest"
import { leavesNothing, MARK, run, SERVERS, tempDir } from "../support/cli.js"
import { everything } from "../support/everything.js"

const mark = `cli-adhoc-${process.pid}-${Date.now()}`

afterAll(() => leavesNothing(mark))

// An empty folder: there is no config file at all.
const cli = (...args: Array<string>) => run(args, { cwd: tempDir(), mark })

describe("test with no config", () => {
  it("test -- <command> [args...] connects the command and reports every step", async () => {
    const tried = await cli("test", "--json", "-e", `${MARK}=${mark}`, "--", process.execPath, SERVERS.memory)
    expect(tried.stderr).toBe("")
    expect(tried.code).toBe(0)
    const report = JSON.parse(tried.stdout)
    expect(report.ok).toBe(true)
    expect(report.server).toBe("node")
    expect(report.steps.map((step: { step: string }) => step.step)).toEqual(
      expect.arrayContaining(["connect", "initialize", "tools/list", "close"])
    )
  })

  it("a command that fails is reported as the test's failure, exit 1", async () => {
    const failed = await cli("test", "--", process.execPath, "-e", "process.exit(4)")
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain("failed its test")
  })

  effectIt.scopedLive("test --url <url> tries a remote server", () =>
    Effect.gen(function*() {
      const url = yield* everything("streamableHttp")
      const tried = yield* Effect.promise(() => cli("test", "--url", url, "--json"))
      expect(tried.code).toBe(0)
      const report = JSON.parse(tried.stdout)
      expect(report).toMatchObject({ ok: true, server: "127-0-0-1" })
    }))

  it("a name with no config, or a name and a URL, is a usage error", async () => {
    const named = await cli("test", "memory")
    expect(named.code).toBe(2)
    expect(named.stderr).toContain("no config file found")
    const both = await cli("test", "memory", "--url", "http://127.0.0.1:9/mcp")
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("one of them")
  })
})
