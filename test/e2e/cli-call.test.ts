// `mcp-fleet call` end to end, as a user runs it (the fleet of cli.test.ts, split from it so
// that the two run side by side): calls by name with JSON or --arg arguments, their progress,
// their errors in one sentence with an exit code, and their deadlines.
import { afterAll, describe, expect, it } from "vitest"
import { config, FIXTURES, leavesNothing, MARK, marked, run, start, tempDir } from "../support/cli.js"
import { cliFleet, json } from "../support/cliFleet.js"
import { survivors } from "../support/processes.js"

const { cli, mark, onPair } = cliFleet("cli-call")

// Every server any command started has ended with it.
afterAll(() => leavesNothing(mark))

describe("calling tools", () => {
  it("by qualified name or by server and tool, with JSON or --arg arguments", async () => {
    const plain = await onPair("call", "mcp__everything__echo", `{"message": "hello"}`)
    expect(plain).toMatchObject({ code: 0, stdout: "Echo: hello\n" })

    const asJson = await onPair("call", "everything", "echo", "--arg", "message=a=b", "--json")
    expect(asJson.code).toBe(0)
    expect(json(asJson.stdout)).toEqual({ content: [{ type: "text", text: "Echo: a=b" }] })

    // --arg values are read as JSON where the schema wants numbers.
    const sum = await onPair("call", "everything", "get-sum", "--arg", "a=2", "--arg", "b=3")
    expect(sum.code).toBe(0)
    expect(sum.stdout).toContain("5")
  })

  it("shows the progress of a long call on stderr", async () => {
    const result = await onPair(
      "call",
      "everything",
      "trigger-long-running-operation",
      "--arg",
      "duration=1",
      "--arg",
      "steps=2"
    )
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("Long running operation completed")
    expect(result.stderr).toContain("progress: 1/2")
    expect(result.stderr).toContain("progress: 2/2")
  })

  it("checks arguments against the inputSchema before sending, naming the field", async () => {
    const result = await onPair("call", "everything", "get-sum", "--arg", "a=1", "--arg", "b=x")
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
    expect(result.stderr).toMatch(/mcp-fleet: .*get-sum.*argument 'b' must be a number/)
  })

  it("fails with one sentence and a non-zero exit for denied, unknown and mistyped calls", async () => {
    // Independent runs: side by side.
    const [denied, typo, server, badJson, notFound, isError] = await Promise.all([
      cli("call", "mcp__memory__delete_entities", `{"entityNames": []}`),
      cli("call", "mcp__memory__read_grph"),
      cli("call", "memroy", "read_graph"),
      cli("call", "mcp__everything__echo", "{nope", "--json"),
      cli("read", "everything", "demo://nope"),
      cli("call", "mcp__failing__fail")
    ])
    expect(denied.code).toBe(1)
    expect(denied.stderr).toContain("mcp__memory__delete_*")

    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain("did you mean 'mcp__memory__read_graph'?")

    expect(server.code).toBe(2)
    expect(server.stderr).toContain("there is no server 'memroy' in the config; did you mean 'memory'?")

    expect(badJson.code).toBe(2)
    expect(json(badJson.stderr.trim().split("\n").at(-1)!)).toMatchObject({
      error: "CliError",
      message: expect.stringMatching(/^the arguments are not valid JSON: /)
    })

    // A server's error code is said once, though its message repeats it.
    expect(notFound.code).toBe(1)
    expect(notFound.stderr).toMatch(/answered resources\/read with error -32602: Resource demo:\/\/nope not found/)
    expect(notFound.stderr).not.toContain("MCP error")

    // A result with isError is printed, and the exit code says it failed.
    expect(isError).toMatchObject({ code: 1, stdout: "the disk is full\n" })
    expect(isError.stderr).toContain("mcp-fleet: tool 'mcp__failing__fail' reported an error")
  })
})

describe("timeouts of a call", () => {
  // The hang fixture ignores the end of its stdin and SIGTERM: its shutdown takes seconds.
  const hanging = (own: string) =>
    tempDir({ ".mcp.json": config({ hang: marked({ command: process.execPath, args: [FIXTURES.hang] }, own) }) })
  const alive = (own: string) => survivors(MARK, own).filter((line) => line.includes("hang.mjs"))

  it("--timeout is reported at its deadline, while the server is still being shut down", async () => {
    const own = `${mark}-timeout`
    const calling = start(["call", "hang", "hang", "--timeout", "1s"], { cwd: hanging(own), mark: own })
    await calling.errorLine(
      (line) => line === "mcp-fleet: server 'hang' did not answer tools/call within 1000 ms",
      "the timeout"
    )
    expect(alive(own)).toHaveLength(1)
    expect(await calling.exited).toBe(1)
    expect(alive(own)).toEqual([])
  })

  it("--max-time bounds a call that keeps sending progress; --timeout alone would wait on", async () => {
    const own = `${mark}-max-time`
    const calling = start(["call", "hang", "ticking", "--timeout", "1s", "--max-time", "2s"], {
      cwd: hanging(own),
      mark: own
    })
    await calling.errorLine(
      (line) => line === "mcp-fleet: server 'hang' did not finish tools/call within its maximum of 2000 ms",
      "the maximum"
    )
    // Progress came all along, more than a --timeout apart in all: it was inactivity that --timeout bounds.
    expect(calling.stderr().match(/progress: \d+/g)!.length).toBeGreaterThan(10)
    expect(await calling.exited).toBe(1)
    expect(alive(own)).toEqual([])

    const bad = await run(["call", "hang", "hang", "--max-time", "soon"], { cwd: hanging(own), mark: own })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--max-time 'soon' is not a duration such as 30s, 500ms or 2m")
  })
})
