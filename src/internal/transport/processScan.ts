/**
 * Finding what is left of a stdio server: the live members of its process group, and the
 * processes carrying its token (the marker variable every descendant inherits, also those
 * that left the group: `detached`, `setsid`, double-forked daemons).
 *
 * Both functions also run inside the guardian (`guardian.ts`), sent there as their source
 * text: each uses only its arguments and Node's globals, never anything imported.
 *
 * @internal
 */

/** The variable that marks a server's processes; its value is the server's own token. */
export const TOKEN_VARIABLE = "MCP_FLEET_SERVER_TOKEN"

/** The part of `node:fs` these functions use. */
export interface ProcFs {
  readonly readdirSync: (path: string) => Array<string>
  readonly readFileSync: (path: string, encoding: "latin1") => string
  readonly statSync: (path: string) => { readonly uid: number }
}

/**
 * Whether any process of group `pgid` is still alive (on Windows: process `pgid`). Signal 0
 * only checks. Zombies count as members until someone reaps them, and an orphan's reaper
 * (PID 1) may be slow or never come, so on Linux a group of nothing but zombies counts as gone.
 */
export function groupAlive(fs: ProcFs, pgid: number): boolean {
  try {
    // Windows has no process groups: there, the server's own process.
    process.kill(process.platform === "win32" ? pgid : -pgid, 0)
  } catch (error) {
    return (error as { code?: string }).code === "EPERM"
  }
  if (process.platform !== "linux") return true
  // A live member's stat: "pid (comm) state ppid pgrp ...", where comm may hold spaces and parentheses.
  const member = (pid: string): boolean => {
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    } catch {
      return false
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return Number(fields[2]) === pgid && fields[0] !== "Z"
  }
  // Most checks find the leader itself alive: then no other process's stat is read.
  if (member(String(pgid))) return true
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) >= 48 && entry.charCodeAt(0) <= 57 && member(entry)) return true
  }
  return false
}

/**
 * The live processes of user `uid`, other than this one, whose environment gives `variable`
 * one of `tokens`. Read from `/proc/<pid>/environ`, so Linux only (elsewhere: none). A
 * zombie's environment reads empty, so zombies are never found.
 */
export function markedPids(fs: ProcFs, variable: string, tokens: ReadonlySet<string>, uid: number): Array<number> {
  const found: Array<number> = []
  if (tokens.size === 0 || process.platform !== "linux") return found
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return found
  }
  const prefix = `${variable}=`
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57 || Number(entry) === process.pid) continue
    let environ: string
    try {
      if (fs.statSync(`/proc/${entry}`).uid !== uid) continue
      environ = fs.readFileSync(`/proc/${entry}/environ`, "latin1")
    } catch {
      continue
    }
    // Variables are NUL-separated.
    const at = environ.startsWith(prefix) ? -1 : environ.indexOf(`\0${prefix}`)
    if (at === -1 && !environ.startsWith(prefix)) continue
    const start = at + 1
    const end = environ.indexOf("\0", start)
    if (tokens.has(environ.slice(start + prefix.length, end === -1 ? undefined : end))) found.push(Number(entry))
  }
  return found
}
