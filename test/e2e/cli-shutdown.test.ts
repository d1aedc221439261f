// A one-shot command ends soon after its answer: the process is ending, so its servers are
// stopped within the shutdown budget (500 ms), not given the grace a long-running fleet gives
// a server that ignores its stdin closing (2 s) or SIGTERM (2 s more). And `test` reports the
// shutdown such a call sees: it declares the host features a call declares.
import { afterAll, describe, expect, it } from "vitest"
import { config, FIXTURES, leavesNothing, marked, run, SERVERS, start, tempDir } from "../support/cli.js"
import { bound } from "../support/processes.js"

const mark = `cli-shutdown-${process.pid}-${Date.now()}`

const cwd = tempDir({
  ".mcp.json": config({
    // Ignores its stdin closing while a client that declares roots (--root) is connected: ends
    // on SIGTERM. The published server, not the wrapper that ends with its stdin.
    everything: marked({ command: process.execPath, args: [SERVERS.publishedEverything, "stdio"] }, mark),
    // Leaves when its stdin closes.
    memory: marked({ command: process.execPath, args: [SERVERS.memory] }, mark),
    // Ignores stdin closing and SIGTERM: only SIGKILL ends it.
    stubborn: marked({ command: process.execPath, args: [FIXTURES.stubborn] }, mark)
  })
})

afterAll(() => leavesNothing(mark))

// How long the CLI runs after printing the first stdout line that `answer` accepts.
const afterAnswer = async (args: ReadonlyArray<string>, answer: (line: string) => boolean, budgetMs: number) => {
  const running = start(args, { cwd, mark })
  await running.line(answer, "the answer")
  const answeredAt = performance.now()
  const limit = bound(budgetMs)
  const code = await running.exited
  return { code, ms: performance.now() - answeredAt, limit: await limit }
}

describe("a one-shot command's shutdown", () => {
  it("call exits within 0.3 s of its answer for a server that leaves on its stdin closing", async () => {
    const { code, limit, ms } = await afterAnswer(
      ["call", "memory", "read_graph"],
      (line) => line.includes("entities"),
      300
    )
    expect(code).toBe(0)
    expect(ms).toBeLessThan(limit)
  })

  it("call does not wait out the stop grace of a server that ignores its stdin closing (SIGTERM at 200 ms)", async () => {
    const { code, limit, ms } = await afterAnswer(
      ["call", "everything", "echo", "--arg", "message=hi"],
      (line) => line.includes("Echo: hi"),
      400
    )
    expect(code).toBe(0)
    expect(ms).toBeLessThan(limit)
  })

  it("call ends a server that ignores SIGTERM too within the 500 ms budget", async () => {
    const { code, limit, ms } = await afterAnswer(
      ["call", "stubborn", "pids"],
      (line) => line.includes("grandchild"),
      600
    )
    expect(code).toBe(0)
    expect(ms).toBeLessThan(limit)
  })

  it("test reports the shutdown a call sees: with a call's host features declared", async () => {
    const result = await run(["test", "everything", "--json", "--root", "."], { cwd, mark })
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as { steps: Array<{ step: string; detail: string }> }
    expect(report.steps.find((step) => step.step === "close")?.detail).toBe("SIGTERM needed")
  })
})
