// Process checks for tests that start real servers: states from /proc, waiting for pids to
// end, and finding survivors by an environment marker every child inherits.
import * as Effect from "effect/Effect"
import * as cp from "node:child_process"
import * as fs from "node:fs"

export type ProcState = "alive" | "zombie" | "gone"

/** Reads a process's state from /proc; a zombie has exited and only waits to be reaped. */
export const procState = (pid: number): ProcState => {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    // No /proc entry: cross-check with signal 0, which must say ESRCH.
    try {
      process.kill(pid, 0)
      return "alive"
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ESRCH" ? "gone" : "alive"
    }
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
  return state === "Z" ? "zombie" : "alive"
}

/**
 * Polls until none of `pids` is alive or `withinMs` passed; returns the states seen last.
 * Polling is the only way to see another process end.
 */
export const waitGone = (pids: ReadonlyArray<number>, withinMs: number) =>
  Effect.gen(function*() {
    const deadline = performance.now() + withinMs
    for (;;) {
      const states = pids.map((pid) => [pid, procState(pid)] as const)
      if (states.every(([, state]) => state !== "alive") || performance.now() >= deadline) {
        return Object.fromEntries(states) as Record<number, ProcState>
      }
      yield* Effect.sleep("20 millis")
    }
  })

/** Processes (other than this one) whose environment has `name=value`, as "pid cmdline". */
export const survivors = (name: string, value: string): Array<string> => {
  const found: Array<string> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    let environ: string
    try {
      environ = fs.readFileSync(`/proc/${entry}/environ`, "utf8")
    } catch {
      continue
    }
    if (!environ.split("\0").includes(`${name}=${value}`)) continue
    let cmdline = ""
    try {
      cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ")
    } catch {
      // gone meanwhile
    }
    found.push(`${entry} ${cmdline}`)
  }
  return found
}

/** The live (not zombie) processes of process group `pgid`, from /proc. */
export const groupMembers = (pgid: number): Array<number> => {
  const found: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(fields[2]) === pgid && fields[0] !== "Z") found.push(Number(entry))
  }
  return found
}

/**
 * Polls until `done()` holds or `withinMs` passed; resolves with the milliseconds it took,
 * or undefined when it never held. Polling is the only way to see other processes end.
 */
export const within = async (done: () => boolean, withinMs: number): Promise<number | undefined> => {
  const start = performance.now()
  for (;;) {
    if (done()) return performance.now() - start
    if (performance.now() - start >= withinMs) return undefined
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** The pid of the mcp-fleet guardian that process `host` spawned, if it has one. */
export const guardianOf = (host: number): number | undefined => {
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (ppid === host && fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").startsWith("mcp-fleet guardian")) {
        return Number(entry)
      }
    } catch {
      continue
    }
  }
  return undefined
}

/**
 * The wall time, in ms, a bare `node -e 0` takes right now from spawn to exit: how late this
 * machine runs things at the moment (about 50 ms when quiet, seconds when busy).
 */
export const lateness = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const start = performance.now()
    const child = cp.spawn(process.execPath, ["-e", "0"], { stdio: "ignore" })
    child.once("error", reject)
    child.once("exit", () => resolve(performance.now() - start))
  })

/**
 * A time bound of the product (a shutdown budget, a deadline) as a test may assert it on the
 * wall clock: `ms`, plus three times the `lateness` measured now, so that a loaded machine,
 * which runs every process and timer late, does not fail a promise the code keeps. Start it
 * as the timed action starts (do not await it first): the probe then runs late by as much as
 * the processes it stands for.
 */
export const bound = async (ms: number): Promise<number> => ms + 3 * (await lateness())

/** `bound` as an Effect, for tests on the live clock. */
export const margin = (ms: number): Effect.Effect<number> => Effect.promise(() => bound(ms))
