/**
 * A stdio server's process tree: its process group (stdio servers run in a group of their
 * own, so ending the group ends the children they spawned too) and, on Linux, every process
 * carrying the server's token, which finds those that left the group (`detached`, `setsid`,
 * double-forked daemons). Whether any of it is alive, signalling all of it, and waiting (on
 * the Clock) for it to be gone.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { groupAlive, markedPids, TOKEN_VARIABLE } from "./processScan.js"

/**
 * A server's process tree: the group its process leads, the token its processes carry, and
 * the processes found by the token so far (pid to start time). A process that is exiting
 * reads an empty environment well before it is a zombie (its memory goes first), and one may
 * exec without the token: once found, a process belongs to the tree until it is gone.
 */
export interface Tree {
  readonly pgid: number
  readonly token: string
  readonly found: Map<number, string>
}

/** The tree of the server whose process leads group `pgid`, its processes marked with `token`. */
export const makeTree = (pgid: number, token: string): Tree => ({ pgid, token, found: new Map() })

/** The signals a tree is ended with. */
export type Signal = "SIGTERM" | "SIGKILL"

const uid = process.getuid?.() ?? -1

/**
 * A live process's start time (field 22 of its stat), which tells it from a later process
 * given the same pid; undefined when it is gone or a zombie.
 */
const startTime = (pid: number): string | undefined => {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  } catch {
    return undefined
  }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return fields[0] === "Z" || fields[0] === "X" ? undefined : fields[19]
}

/**
 * The live processes of the tree outside its group's check: those carrying its token now,
 * and those found so far that are still the same live process.
 */
const marked = (tree: Tree): Array<number> => {
  for (const pid of markedPids(fs, TOKEN_VARIABLE, new Set([tree.token]), uid)) {
    if (!tree.found.has(pid)) {
      const started = startTime(pid)
      if (started !== undefined) tree.found.set(pid, started)
    }
  }
  for (const [pid, started] of tree.found) if (startTime(pid) !== started) tree.found.delete(pid)
  return [...tree.found.keys()]
}

/** Whether the group still has live members. */
export const groupLive = (tree: Tree): boolean => groupAlive(fs, tree.pgid)

/** Whether any process of the tree is alive. */
export const alive = (tree: Tree): boolean => groupLive(tree) || marked(tree).length > 0

/** Sends `signal` to every process of the tree. */
export const signalTree = (tree: Tree, signal: Signal): void => {
  try {
    process.kill(process.platform === "win32" ? tree.pgid : -tree.pgid, signal)
  } catch {
    // Already gone.
  }
  for (const pid of marked(tree)) {
    try {
      process.kill(pid, signal)
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * Waits until the tree is gone, at most until `deadline()` (Clock milliseconds, asked again
 * at every check, since a process that starts ending moves it); whether it is gone. With
 * `resend`, the signal goes again before every check: a daemon may fork once more between a
 * scan and its signal. Polls with Clock-based sleeps, starting fast because most servers
 * exit at once.
 */
export const waitGone = (tree: Tree, deadline: () => number, resend?: Signal): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    let step = 2
    for (;;) {
      if (resend !== undefined) signalTree(tree, resend)
      if (!alive(tree)) return true
      const left = deadline() - (yield* Clock.currentTimeMillis)
      if (left <= 0) return false
      yield* Effect.sleep(Math.min(step, left))
      step = Math.min(step * 2, 50)
    }
  })
