/**
 * A library program that ends, as processes do: killed with SIGKILL (the guardian ends its
 * servers), or sent SIGTERM with `Stdio.layerShutdownOnSignal` (the fleet is gone within a
 * second; each bound on the wall clock is given the margin the machine's load calls for:
 * `bound`). The program is test/fixtures/host.ts, a real process running a fleet of a server
 * that ignores stdin's end and SIGTERM (with a grandchild in its group) and one whose
 * children left its group.
 */
import * as cp from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { bundled } from "../support/bundle.js"
import { bound, groupMembers, guardianOf, procState, within } from "../support/processes.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const started: Array<cp.ChildProcess> = []
// The host bundled (support/bundle.ts): under tsx each start cost seconds of CPU.
const HOST = await bundled("test/fixtures/host.ts")

/** Starts the host and resolves, once its servers are ready, with their pids and a check that all are gone. */
const startHost = (...flags: Array<string>) => {
  const host = cp.spawn(process.execPath, [HOST, ...flags], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"]
  })
  started.push(host)
  let stderr = ""
  host.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk)
  return new Promise<{ host: cp.ChildProcess; gone: () => boolean }>((resolve, reject) => {
    let out = ""
    const read = (chunk: string) => {
      out += chunk
      if (!out.includes("\n")) return
      host.stdout.off("data", read)
      const { escaping, stubborn } = JSON.parse(out.slice(0, out.indexOf("\n")))
      const groups: Array<number> = [stubborn.server, escaping.server]
      const escaped: Array<number> = [escaping.detached, escaping.setsid, escaping.daemon]
      const gone = () =>
        groups.every((pgid) => groupMembers(pgid).length === 0) && escaped.every((pid) => procState(pid) !== "alive")
      expect(gone()).toBe(false)
      resolve({ host, gone })
    }
    host.stdout.setEncoding("utf8").on("data", read)
    host.once("exit", (code) => reject(new Error(`the host exited with ${code}: ${stderr}`)))
  })
}

afterEach(() => {
  for (const host of started.splice(0)) if (host.exitCode === null && host.signalCode === null) host.kill("SIGKILL")
})

describe("a library host that ends", () => {
  it("SIGKILL: the guardian ends every server within 3 s, and then itself", async () => {
    const { gone, host } = await startHost()
    const guardian = guardianOf(host.pid!)
    expect(guardian).toBeDefined()
    const limit = bound(3000)
    host.kill("SIGKILL")
    expect(await within(gone, 10_000)).toBeLessThan(await limit)
    expect(await within(() => procState(guardian!) !== "alive", 10_000)).toBeDefined()
  })

  it("a guardian killed while the host runs is replaced at once, holding every server", async () => {
    const { gone, host } = await startHost()
    const first = guardianOf(host.pid!)!
    process.kill(first, "SIGKILL")
    let second: number | undefined
    expect(await within(() => (second = guardianOf(host.pid!)) !== undefined && second !== first, 10_000)).toBeDefined()
    const limit = bound(3000)
    host.kill("SIGKILL")
    expect(await within(gone, 10_000)).toBeLessThan(await limit)
    expect(await within(() => procState(second!) !== "alive", 10_000)).toBeDefined()
  })

  it("SIGTERM with Stdio.layerShutdownOnSignal: every server is gone within 1 s, and the host exits", async () => {
    const { gone, host } = await startHost("--on-signal")
    const exited = new Promise((resolve) => host.once("exit", resolve))
    const limit = bound(1000)
    host.kill("SIGTERM")
    expect(await within(gone, 10_000)).toBeLessThan(await limit)
    await exited
  })
})
