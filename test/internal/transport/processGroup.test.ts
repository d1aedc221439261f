/**
 * A stdio server's process tree on its own: a process found by the server's token stays part
 * of the tree until it is gone, also once its environment no longer shows the token (an exiting
 * process reads an empty one before it becomes a zombie; this one execs without the token).
 */
import * as cp from "node:child_process"
import * as fs from "node:fs"
import { afterEach, describe, expect, it } from "vitest"
import { alive, makeTree, signalTree } from "../../../src/internal/transport/processGroup.js"
import { TOKEN_VARIABLE } from "../../../src/internal/transport/processScan.js"
import { within } from "../../support/processes.js"

const started: Array<cp.ChildProcess> = []

afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL")
})

// No process group has this id (above any pid_max), so only the token finds the process.
const NO_GROUP = 0x7ffffff0

describe.runIf(process.platform === "linux")("a process tree", () => {
  it("keeps a process found by its token until it is gone, though it no longer shows the token", async () => {
    const token = `test-${process.pid}-${Date.now()}`
    // Waits for a line, then becomes `sleep` without the token (same pid, same start time).
    const child = cp.spawn("sh", ["-c", `read line; exec env -u ${TOKEN_VARIABLE} sleep 60`], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
      env: { ...process.env, [TOKEN_VARIABLE]: token }
    })
    started.push(child)
    const exited = new Promise((resolve) => child.once("exit", resolve))
    const pid = child.pid!
    const tree = makeTree(NO_GROUP, token)
    const environ = () => fs.readFileSync(`/proc/${pid}/environ`, "latin1")
    expect(await within(() => environ().includes(token), 10_000)).toBeDefined()
    expect(alive(tree)).toBe(true)

    child.stdin!.end("go\n")
    // The exec is an event only /proc shows.
    expect(await within(() => fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").startsWith("sleep"), 10_000))
      .toBeDefined()
    expect(environ()).not.toContain(token)
    expect(alive(tree)).toBe(true)

    signalTree(tree, "SIGKILL")
    expect(await exited).toBe(null)
    expect(alive(tree)).toBe(false)
  })
})
