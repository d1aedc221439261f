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
  readonly statSync: (path: string) => { readonly uid: number }
  readonly openSync: (path: string, flags: "r") => number
  readonly readSync: (fd: number, buffer: Uint8Array, offset: number, length: number, position: null) => number
  readonly closeSync: (fd: number) => void
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
  // Each stat is read into this buffer (a stat is some 300 bytes): readFileSync took a 64 KiB
  // chunk per /proc file, megabytes for a scan of every process once the leader is gone.
  const buffer = Buffer.allocUnsafe(4096)
  // A live member's stat: "pid (comm) state ppid pgrp ...", where comm may hold spaces and parentheses.
  const member = (pid: string): boolean => {
    let stat: string
    try {
      const fd = fs.openSync(`/proc/${pid}/stat`, "r")
      try {
        stat = buffer.toString("latin1", 0, fs.readSync(fd, buffer, 0, buffer.length, null))
      } finally {
        fs.closeSync(fd)
      }
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
  // Every environment is read into one buffer and searched as bytes: as a string each (and
  // readFileSync's 64 KiB chunk per file of unknown size), a scan of a busy machine allocated
  // megabytes, the resident set's peak of a client closing its last server.
  let buffer = Buffer.allocUnsafe(16384)
  const needle = Buffer.from(`\0${variable}=`, "latin1")
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57 || Number(entry) === process.pid) continue
    let length = 0
    try {
      if (fs.statSync(`/proc/${entry}`).uid !== uid) continue
      const fd = fs.openSync(`/proc/${entry}/environ`, "r")
      try {
        for (;;) {
          if (length === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(length)])
          const read = fs.readSync(fd, buffer, length, buffer.length - length, null)
          if (read === 0) break
          length += read
        }
      } finally {
        fs.closeSync(fd)
      }
    } catch {
      continue
    }
    const environ = buffer.subarray(0, length)
    // Variables are NUL-separated: ours is the first, or follows a NUL.
    const first = length >= needle.length - 1 &&
      environ.compare(needle, 1, needle.length, 0, needle.length - 1) === 0
    const nul = first ? -1 : environ.indexOf(needle)
    if (!first && nul === -1) continue
    const start = first ? needle.length - 1 : nul + needle.length
    const end = environ.indexOf(0, start)
    if (tokens.has(environ.toString("latin1", start, end === -1 ? length : end))) found.push(Number(entry))
  }
  return found
}
