/**
 * `markedPids` reads each process's environment into one buffer and searches it as bytes: the
 * variable first or after a NUL (never as the tail of a longer name), an environment larger
 * than the buffer, another user's processes skipped, a process gone meanwhile skipped.
 */
import { describe, expect, it } from "vitest"
import { markedPids, type ProcFs, TOKEN_VARIABLE as V } from "../../../src/internal/transport/processScan.js"

const UID = 1000

/** A /proc of these processes: pid to its owner and environment (undefined: gone meanwhile). */
const procOf = (processes: Record<string, { readonly uid: number; readonly environ: string | undefined }>): ProcFs => {
  const open = new Map<number, { readonly bytes: Buffer; at: number }>()
  let nextFd = 3
  const environOf = (path: string) => processes[path.split("/")[2]!]
  return {
    readdirSync: () => ["self", "cpuinfo", ...Object.keys(processes)],
    statSync: (path) => ({ uid: environOf(path)!.uid }),
    openSync: (path) => {
      const environ = environOf(path)?.environ
      if (environ === undefined) throw new Error("ENOENT")
      open.set(nextFd, { bytes: Buffer.from(environ, "latin1"), at: 0 })
      return nextFd++
    },
    readSync: (fd, buffer, offset, length) => {
      const file = open.get(fd)!
      // Short reads, as a pipe or /proc may give.
      const n = file.bytes.copy(buffer, offset, file.at, Math.min(file.at + Math.min(length, 5000), file.bytes.length))
      file.at += n
      return n
    },
    closeSync: (fd) => {
      open.delete(fd)
    }
  }
}

describe.runIf(process.platform === "linux")("markedPids", () => {
  it("finds the processes whose environment gives the variable one of the tokens", () => {
    const big = Array.from({ length: 3000 }, (_, i) => `FILLER_${i}=${"x".repeat(10)}`).join("\0")
    const fs = procOf({
      "101": { uid: UID, environ: `${V}=a\0HOME=/root\0` },
      "102": { uid: UID, environ: `HOME=/root\0${V}=b\0PATH=/bin` },
      "103": { uid: UID, environ: `HOME=/root\0${V}=c` },
      "104": { uid: UID, environ: `X${V}=a\0HOME=/root` },
      "105": { uid: UID, environ: `HOME=/root\0${V}=ab` },
      "106": { uid: UID, environ: `${big}\0${V}=b\0` },
      "107": { uid: 0, environ: `${V}=a` },
      "108": { uid: UID, environ: undefined },
      "109": { uid: UID, environ: "" },
      "110": { uid: UID, environ: `${V}=` },
      [String(process.pid)]: { uid: UID, environ: `${V}=a` }
    })
    expect(big.length).toBeGreaterThan(16384 * 2)
    expect(markedPids(fs, V, new Set(["a", "b"]), UID)).toEqual([101, 102, 106])
    expect(markedPids(fs, V, new Set(["c", ""]), UID)).toEqual([103, 110])
    expect(markedPids(fs, V, new Set(), UID)).toEqual([])
  })
})
