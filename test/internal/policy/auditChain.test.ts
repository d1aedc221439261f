/**
 * The audit log's hash chain: what the writer appends, and that the verifier finds every
 * edit, insertion, deletion and truncation, and says where.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "@effect/platform/FileSystem"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { digestArguments, makeAuditor } from "../../../src/internal/policy/audit.js"
import {
  chained,
  CHECKPOINT_EVERY,
  lineHash,
  newKey,
  type Report,
  Verifier
} from "../../../src/internal/policy/auditChain.js"
import type * as Policy from "../../../src/Policy.js"

const dirs: Array<string> = []
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })))
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-audit-chain-"))
  dirs.push(dir)
  return dir
}

const entry = (i: number): Policy.AuditEntry => ({
  time: "2026-01-01T00:00:00.000Z",
  server: "a",
  tool: "t",
  name: "mcp__a__t",
  argsDigest: digestArguments({ i }),
  durationMs: i,
  outcome: "ok"
})

// `count` entries written by one auditor, whose scope then closes (a closing checkpoint).
const writeLog = (config: Policy.Config, count: number, from = 0) =>
  Effect.scoped(Effect.gen(function*() {
    const auditor = yield* makeAuditor(Option.none(), Option.some(yield* FileSystem.FileSystem))
    yield* Effect.forEach(
      Array.from({ length: count }, (_, i) => from + i),
      (i) => auditor.write(entry(i), config),
      { concurrency: 16, discard: true }
    )
  })).pipe(Effect.provide(NodeFileSystem.layer))

const linesOf = (file: string) => fs.readFileSync(file, "utf8").replace(/\n$/, "").split("\n")
const verify = (lines: ReadonlyArray<string>, options?: ConstructorParameters<typeof Verifier>[0]): Report => {
  const verifier = new Verifier(options)
  for (const line of lines) verifier.push(line)
  return verifier.finish()
}
const problems = (report: Report) => report.problems.map((found) => `${found.line}: ${found.what}`)

const signedLog = (count: number) =>
  Effect.gen(function*() {
    const dir = tempDir()
    const key = newKey()
    fs.writeFileSync(path.join(dir, "audit.key"), `${key.privateKey}\n`)
    const config = { audit: path.join(dir, "audit.jsonl"), auditKey: path.join(dir, "audit.key") }
    yield* writeLog(config, count)
    return { file: config.audit, publicKey: key.publicKey, config }
  })

describe("the audit chain", () => {
  it.effect("each line names the hash of the line before; a signed checkpoint closes the log", () =>
    Effect.gen(function*() {
      const { file, publicKey } = yield* signedLog(5)
      const lines = linesOf(file)
      expect(lines).toHaveLength(6)
      expect(JSON.parse(lines[0]!)).toMatchObject({ server: "a", line: 1, prev: `sha256:${"0".repeat(64)}` })
      expect(JSON.parse(lines[5]!)).toMatchObject({ checkpoint: "close", line: 6, key: publicKey })
      const report = verify(lines, { publicKey })
      expect(report.problems).toEqual([])
      expect(report).toMatchObject({ lines: 6, checkpoints: 1, signed: 1, closed: true, keys: [publicKey] })
    }))

  it.effect("finds an edit, an insertion, a deletion, and says at which line", () =>
    Effect.gen(function*() {
      const { file, publicKey } = yield* signedLog(6)
      const lines = linesOf(file)
      const edited = lines.map((line, i) => i === 2 ? line.replace(`"outcome":"ok"`, `"outcome":"denied"`) : line)
      expect(problems(verify(edited, { publicKey }))).toEqual([
        `4: line 3 was edited (its hash is not the one line 4 names), or line 4's "prev" was`
      ])
      // An inserted line forged to follow line 2 exactly.
      const forged = chained(JSON.stringify(entry(99)), 3, lineHash(lines[1]!))
      const inserted = [...lines.slice(0, 2), forged, ...lines.slice(2)]
      expect(problems(verify(inserted, { publicKey }))[0]).toBe("4: line 3 was inserted")
      expect(problems(verify([...lines.slice(0, 2), ...lines.slice(4)], { publicKey }))).toEqual([
        "3: 2 line(s) deleted before line 3"
      ])
    }))

  it.effect("finds a cut-off tail, a cut line, an edited checkpoint and another key's signature", () =>
    Effect.gen(function*() {
      const { file, publicKey } = yield* signedLog(4)
      const lines = linesOf(file)
      expect(problems(verify(lines.slice(0, 3), { publicKey }))).toEqual([
        "3: the log ends at line 3 with no checkpoint: lines after it may have been cut off (or its writer is still running: --open)"
      ])
      expect(verify(lines.slice(0, 3), { open: true }).problems).toEqual([])
      expect(problems(verify([...lines.slice(0, 3), lines[3]!.slice(0, 40)]))[0]).toBe(
        "4: not a chained audit line: it was edited or cut"
      )
      const checkpointEdited = [...lines.slice(0, 4), lines[4]!.replace(`"line":5`, `"line":50`)]
      expect(problems(verify(checkpointEdited))).toContain(
        "5: the checkpoint's signature does not verify: the checkpoint was edited"
      )
      const other = yield* signedLog(4)
      expect(problems(verify(lines, { publicKey: other.publicKey }))[0]).toMatch(
        /^5: the checkpoint is signed by another key/
      )
      // Truncation back to a closing checkpoint shows only against an anchor kept elsewhere.
      const longer = yield* Effect.zipRight(writeLog({ audit: file }, 2, 4), Effect.sync(() => linesOf(file)))
      expect(verify(longer, { anchor: verify(lines).head }).problems).toEqual([])
      const anchor = verify(longer).head
      expect(verify(lines).problems).toEqual([])
      expect(problems(verify(lines, { anchor }))).toEqual([
        `5: the anchor ${anchor} is not in the log: it was cut off or rewritten`
      ])
    }))

  it.effect("a later writer, and one appending between our batches, continue the chain", () =>
    Effect.gen(function*() {
      const { file, config } = yield* signedLog(3)
      yield* writeLog(config, 2, 3)
      yield* Effect.scoped(Effect.gen(function*() {
        const files = Option.some(yield* FileSystem.FileSystem)
        const first = yield* makeAuditor(Option.none(), files)
        yield* first.write(entry(5), config)
        yield* writeLog(config, 1, 6)
        yield* first.write(entry(7), config)
      })).pipe(Effect.provide(NodeFileSystem.layer))
      const report = verify(linesOf(file))
      expect(report.problems).toEqual([])
      expect(report).toMatchObject({ lines: 12, checkpoints: 4, closed: true })
    }))

  it.effect(`a checkpoint every ${CHECKPOINT_EVERY} entries`, () =>
    Effect.gen(function*() {
      const { file, publicKey } = yield* signedLog(CHECKPOINT_EVERY + 1)
      const lines = linesOf(file)
      expect(JSON.parse(lines[CHECKPOINT_EVERY]!)).toMatchObject({ checkpoint: "every", line: CHECKPOINT_EVERY + 1 })
      expect(verify(lines, { publicKey })).toMatchObject({ problems: [], checkpoints: 2, signed: 2 })
    }), 60_000)
})
