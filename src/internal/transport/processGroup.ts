/**
 * A child's process group: whether any of it is still alive, signalling all of it, and
 * waiting (on the Clock) for it to be gone. Stdio servers run in a group of their own so
 * that ending the group ends the children they spawned too.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"

/** The signals a group is ended with. */
type Signal = "SIGTERM" | "SIGKILL"

/**
 * Whether any process of group `pid` is still alive. Signal 0 only checks. Zombies count
 * as members until someone reaps them, and an orphan's reaper (PID 1) may be slow or never
 * come, so on Linux a group of nothing but zombies counts as gone.
 */
const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  return process.platform !== "linux" || hasLiveMember(pid)
}

const hasLiveMember = (pgid: number): boolean => {
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(fields[2]) === pgid && fields[0] !== "Z") return true
  }
  return false
}

/** Sends `signal` to every process of group `pid`. */
export const signalGroup = (pid: number, signal: Signal): void => {
  try {
    process.kill(-pid, signal)
  } catch {
    // Already gone.
  }
}

/**
 * Waits until group `pid` is gone, at most `within`; whether it is gone. Polls with
 * Clock-based sleeps, starting fast because most servers exit at once.
 */
export const waitGone = (pid: number, within: Duration.DurationInput): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    let left = Duration.toMillis(within)
    let step = 2
    while (groupAlive(pid)) {
      if (left <= 0) return false
      const wait = Math.min(step, left)
      yield* Effect.sleep(wait)
      left -= wait
      step = Math.min(step * 2, 50)
    }
    return true
  })
