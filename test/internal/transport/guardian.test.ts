/**
 * The guardian on its own: its program started as Stdio starts it, groups handed to it and
 * taken back over its pipe, and the pipe closed as a dying host's is.
 */
import * as cp from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { guardianSource } from "../../../src/internal/transport/guardian.js"
import { TOKEN_VARIABLE } from "../../../src/internal/transport/processScan.js"
import { bound, procState, within } from "../../support/processes.js"

const fixture = fileURLToPath(new URL("../../fixtures/escaping.mjs", import.meta.url))
const started: Array<number> = []

/** A process that ignores SIGTERM, leading a group of its own; resolves with its pid once it runs. */
const lone = (env: Record<string, string> = {}) =>
  new Promise<number>((resolve, reject) => {
    const child = cp.spawn(process.execPath, [fixture, "--child", "detached"], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, ...env }
    })
    started.push(child.pid!)
    child.stdout.once("data", () => resolve(child.pid!))
    child.once("error", reject)
  })

afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // ended by the test
    }
  }
})

describe("the guardian", () => {
  it("when its pipe closes, ends the groups and the marked processes it holds, and nothing it gave back", async () => {
    const held = await lone()
    const givenBack = await lone()
    // Left the group it was started in, but carries the token of a held group.
    const escaped = await lone({ [TOKEN_VARIABLE]: "held-token" })
    const guardian = cp.spawn(process.execPath, ["-e", guardianSource()], { stdio: ["pipe", "ignore", "ignore"] })
    started.push(guardian.pid!)
    guardian.stdin.write(`+${held} held-token\n+${givenBack} other-token\n`)
    guardian.stdin.write(`-${givenBack}\n`)
    const exited = new Promise((resolve) => guardian.once("exit", resolve))

    const limit = bound(2500)
    const start = performance.now()
    guardian.stdin.end()
    await exited
    // 500 ms for them to exit by themselves, SIGTERM (ignored), SIGKILL at 1 s.
    expect(performance.now() - start).toBeGreaterThanOrEqual(950)
    expect(performance.now() - start).toBeLessThan(await limit)
    expect(await within(() => procState(held) !== "alive" && procState(escaped) !== "alive", 10_000)).toBeDefined()
    expect(procState(givenBack)).toBe("alive")
  })

  it("exits at once when its pipe closes holding nothing", async () => {
    const guardian = cp.spawn(process.execPath, ["-e", guardianSource()], { stdio: ["pipe", "ignore", "ignore"] })
    started.push(guardian.pid!)
    const exited = new Promise<number | null>((resolve) => guardian.once("exit", resolve))
    guardian.stdin.end()
    expect(await exited).toBe(0)
  })
})
