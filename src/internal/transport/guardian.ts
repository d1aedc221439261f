/**
 * The guardian: one small process per host process that ends its stdio servers' process
 * trees when the host dies without stopping them (SIGKILL, a crash, `process.exit`).
 *
 * It is spawned with the first stdio server, in a session and process group of its own (a
 * Ctrl-C on the terminal is not for it), with an empty environment (it carries neither a
 * server's token nor the host's variables), and reads a pipe that only the host holds:
 * `+<pgid> <token>` when a server starts, `-<pgid>` once its tree is gone. When the pipe
 * closes (the host exited or died) it gives what it still holds 500 ms to exit by itself
 * (stdin closed with the host), then sends SIGTERM, from 1 s SIGKILL, to each group and
 * each process carrying one of the tokens, and exits once they are gone (at most 2.5 s).
 *
 * Its program goes as `node -e` source, so it runs the same from the sources, the build
 * and the CLI bundle. Cost: one spawn per host process, a line per server start and stop,
 * nothing per call. Not on Windows, which has no process groups to hand it.
 *
 * @internal
 */
import * as ChildProcess from "node:child_process"
import type { Writable } from "node:stream"
import { groupAlive, markedPids, type ProcFs, TOKEN_VARIABLE } from "./processScan.js"

/** What the guardian scans with; given as arguments, since its source is all it gets. */
interface Scan {
  readonly groupAlive: typeof groupAlive
  readonly markedPids: typeof markedPids
}

/**
 * The guardian's program. It runs in the guardian's own process, sent there as source
 * text: it uses only its arguments and Node's globals.
 */
export function guardianMain(fs: ProcFs, scan: Scan, variable: string): void {
  process.title = "mcp-fleet guardian"
  // A Ctrl-C or a closed terminal is the host's business; the guardian acts when it is gone.
  process.on("SIGINT", () => {})
  process.on("SIGHUP", () => {})
  const groups = new Map<number, string>()
  let pending = ""
  process.stdin.setEncoding("latin1")
  process.stdin.on("data", (chunk: string) => {
    const lines = (pending + chunk).split("\n")
    pending = lines.pop()!
    for (const line of lines) {
      const [pgid, token] = line.slice(1).split(" ")
      if (line[0] === "+") groups.set(Number(pgid), token!)
      else if (line[0] === "-") groups.delete(Number(pgid))
    }
  })
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    const start = Date.now()
    const uid = process.getuid!()
    const tokens = new Set(groups.values())
    let terminated = false
    const sweep = () => {
      const elapsed = Date.now() - start
      const left = [...groups.keys()].filter((pgid) => scan.groupAlive(fs, pgid))
      const marked = scan.markedPids(fs, variable, tokens, uid)
      if ((left.length === 0 && marked.length === 0) || elapsed >= 2500) process.exit(0)
      if (elapsed >= 1000 || (elapsed >= 500 && !terminated)) {
        const signal = elapsed >= 1000 ? "SIGKILL" : "SIGTERM"
        terminated = true
        for (const pgid of left) {
          try {
            process.kill(-pgid, signal)
          } catch {
            // gone meanwhile
          }
        }
        for (const pid of marked) {
          try {
            process.kill(pid, signal)
          } catch {
            // gone meanwhile
          }
        }
      }
      setTimeout(sweep, 50)
    }
    sweep()
  }
  process.stdin.once("end", end)
  process.stdin.once("close", end)
  process.stdin.once("error", end)
}

let source: string | undefined

/**
 * The guardian's whole program, for `node -e`: the functions' source as this process runs
 * them. esbuild's `keepNames` (tsx uses it) wraps named functions in a `__name` helper, which
 * the program defines for itself.
 */
export const guardianSource = (): string =>
  source ??= `var __name = (target) => target;
(${guardianMain.toString()})(require("node:fs"), {
  groupAlive: ${groupAlive.toString()},
  markedPids: ${markedPids.toString()}
}, ${JSON.stringify(TOKEN_VARIABLE)})`

/** The groups being watched, with their tokens: sent again to a guardian that replaces one that died. */
const watched = new Map<number, string>()
type Guardian = ChildProcess.ChildProcessByStdio<Writable, null, null>
let guardian: Guardian | undefined

const spawnGuardian = (): Guardian | undefined => {
  let child: Guardian
  try {
    child = ChildProcess.spawn(process.execPath, ["-e", guardianSource()], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
      // It holds on to no directory of the host's.
      cwd: "/",
      // Electron's binary runs as Node only when told to.
      env: process.versions.electron === undefined ? {} : { ELECTRON_RUN_AS_NODE: "1" }
    })
  } catch {
    return undefined
  }
  const gone = (killed: boolean) => {
    if (guardian !== child) return
    guardian = undefined
    // One that was killed is replaced now; one that could not run is tried again with the
    // next server.
    if (killed && watched.size > 0) guardian = spawnGuardian()
  }
  child.once("error", () => gone(false))
  child.once("exit", (_code, signal) => gone(signal !== null))
  child.stdin.on("error", () => {})
  // The guardian must never keep the host alive.
  child.unref()
  ;(child.stdin as unknown as { unref?: () => void }).unref?.()
  for (const [pgid, token] of watched) child.stdin.write(`+${pgid} ${token}\n`)
  return child
}

/**
 * Hands the process group `pgid`, whose processes carry `token`, to the guardian, spawning
 * it first if needed. Returns the function that takes it back (call it once the tree is gone).
 */
export const watch = (pgid: number, token: string): () => void => {
  if (process.platform === "win32") return () => {}
  watched.set(pgid, token)
  if (guardian === undefined) guardian = spawnGuardian()
  else guardian.stdin.write(`+${pgid} ${token}\n`)
  return () => {
    if (watched.delete(pgid)) guardian?.stdin.write(`-${pgid}\n`)
  }
}
