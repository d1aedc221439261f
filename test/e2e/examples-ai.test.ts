// The model bridges' examples run as written, offline: examples/agent.ts (@effect/ai with a
// scripted model) and examples/ai-sdk.ts (the AI SDK's mock model), over the quickstart
// fleet, and leave no process behind. Each runs bundled (support/bundle.ts, its files found
// beside it as under tsx): under tsx each run cost about 2 s more of CPU and of wall time.
import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bundled } from "../support/bundle.js"
import { hangGuard } from "../support/guard.js"
import { survivors } from "../support/processes.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const MARK = "MCP_FLEET_EXAMPLES_AI_TEST"
const bundles = new Map<string, string>()

beforeAll(async () => {
  for (const example of ["agent.ts", "ai-sdk.ts"]) bundles.set(example, await bundled(`examples/${example}`))
})

// Runs an example's bundle, its temp files (the memory server's graph) in a folder of its own.
const run = (example: string, args: ReadonlyArray<string> = []) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-example-"))
  const mark = `${process.pid}-${example}${args.join("")}`
  return new Promise<{ code: number | null; stdout: string; stderr: string; mark: string }>((resolve) => {
    const child = cp.spawn(process.execPath, [bundles.get(example)!, ...args], {
      cwd: root,
      env: { ...process.env, TMPDIR: tmp, [MARK]: mark }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.once("exit", (code) => {
      fs.rmSync(tmp, { recursive: true, force: true })
      resolve({ code, stdout, stderr, mark })
    })
  })
}

describe("the model bridges' examples", () => {
  it(
    "examples/agent.ts: the scripted model calls tools on two servers and a management tool, then answers",
    async () => {
      const { code, mark, stderr, stdout } = await run("agent.ts")
      expect(stderr).toBe("")
      expect(code).toBe(0)
      expect(stdout).toContain("✓ mcp__everything__echo")
      expect(stdout).toContain("✓ mcp__filesystem__list_directory")
      expect(stdout).toContain("✓ ListMcpResources")
      expect(stdout).toMatch(/The everything server said "Echo: hello from the agent", this folder holds \d+ entries/)
      expect(survivors(MARK, mark)).toEqual([])
    },
    90_000
  )

  it("examples/ai-sdk.ts: generateText with the mock model calls tools on two servers, then answers", async () => {
    const { code, mark, stderr, stdout } = await run("ai-sdk.ts")
    expect(stderr).toBe("")
    expect(code).toBe(0)
    expect(stdout).toContain("2 steps; 2 tool calls in the first")
    expect(stdout).toContain("mcp__everything__echo: Echo: hi")
    expect(stdout).toContain("mcp__memory__read_graph: {")
    expect(survivors(MARK, mark)).toEqual([])
  }, hangGuard(90_000))

  // A deferred example runs clean and leaves nothing behind; its output is checked by the test.
  const deferredRun = async (example: string) => {
    const { code, mark, stderr, stdout } = await run(example, ["--deferred"])
    expect({ code, stderr, survivors: survivors(MARK, mark) }).toEqual({ code: 0, stderr: "", survivors: [] })
    return stdout
  }

  it(
    "examples/agent.ts --deferred: the model searches, is offered the hit on the next turn, and calls it",
    async () => {
      const stdout = await deferredRun("agent.ts")
      const offered = stdout.split("\n").filter((line) => line.startsWith("  offered: "))
      expect(offered[0]).not.toContain("mcp__everything__echo")
      expect(offered[1]).toContain("mcp__everything__echo")
      expect(stdout).toContain("✓ search_tools")
      expect(stdout).toContain("Found mcp__everything__echo by searching; it said \"Echo: hello from a deferred tool\"")
    },
    hangGuard(90_000)
  )

  it("examples/ai-sdk.ts --deferred: prepareStep gives the model the hit in the step after its search", async () => {
    const stdout = await deferredRun("ai-sdk.ts")
    expect(stdout).toContain("offered: search_tools, mcp__memory__read_graph\n")
    expect(stdout).toContain("3 steps; 1 tool calls in the first")
    expect(stdout).toContain("Found mcp__everything__echo by searching; it said Echo: hi")
  }, hangGuard(90_000))
})
