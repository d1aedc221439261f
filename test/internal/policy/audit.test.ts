/**
 * The audit log alone: the digest, outcomes, and writes to the sink and the file.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { digestArguments, makeAuditor, outcomeOf } from "../../../src/internal/policy/audit.js"
import * as McpError from "../../../src/McpError.js"
import type * as Policy from "../../../src/Policy.js"

const entry: Policy.AuditEntry = {
  time: "2026-01-01T00:00:00.000Z",
  server: "a",
  tool: "t",
  name: "mcp__a__t",
  argsDigest: digestArguments({}),
  durationMs: 1,
  outcome: "ok"
}

describe("audit", () => {
  it("digestArguments: canonical JSON, keys sorted, absent arguments as {}", () => {
    const sha = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`
    expect(digestArguments({ b: 1, a: [1, undefined], c: undefined })).toBe(sha(`{"a":[1,null],"b":1}`))
    expect(digestArguments(undefined)).toBe(sha("{}"))
  })

  it("outcomeOf: ok, isError, cancelled, denied, timeout, other reasons and defects", () => {
    const fail = (reason: McpError.Reason) => Exit.fail(McpError.make("a", reason))
    expect(outcomeOf(Exit.succeed({ content: [] }))).toBe("ok")
    expect(outcomeOf(Exit.succeed({ content: [], isError: true }))).toBe("isError")
    expect(outcomeOf(Exit.interrupt(Option.none() as never))).toBe("cancelled")
    expect(outcomeOf(fail(new McpError.DeniedReason({ tool: "t", message: "no" })))).toBe("denied")
    expect(outcomeOf(fail(new McpError.TimeoutReason({ method: "tools/call", afterMs: 1, kind: "total" })))).toBe(
      "timeout"
    )
    expect(outcomeOf(fail(new McpError.LimitReason({ what: "x", limit: 1 })))).toBe("error:Limit")
    expect(outcomeOf(Exit.failCause(Cause.die("boom")))).toBe("error:defect")
  })

  it.scoped("an auditor writes to the sink and appends to the config's file, chained", () =>
    Effect.gen(function*() {
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-audit-")), "audit.jsonl")
      const seen: Array<Policy.AuditEntry> = []
      const files = Option.some(yield* FileSystem.FileSystem)
      const withSink = yield* makeAuditor(Option.some({ write: (line) => Effect.sync(() => seen.push(line)) }), files)
      expect(withSink.enabled({})).toBe(true)
      yield* withSink.write(entry, { audit: file })
      yield* withSink.write({ ...entry, outcome: "denied" }, {})
      expect(seen.map((line) => line.outcome)).toEqual(["ok", "denied"])
      const first = `${JSON.stringify(entry).slice(0, -1)},"line":1,"prev":"sha256:${"0".repeat(64)}"}`
      expect(fs.readFileSync(file, "utf8")).toBe(`${first}\n`)
      const fileOnly = yield* makeAuditor(Option.none(), files)
      expect(fileOnly.enabled({})).toBe(false)
      expect(fileOnly.enabled({ audit: file })).toBe(true)
      fs.rmSync(path.dirname(file), { recursive: true, force: true })
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("a line that cannot be written is a warning, not a failure", () =>
    Effect.gen(function*() {
      const auditor = yield* makeAuditor(Option.none(), Option.some(yield* FileSystem.FileSystem))
      yield* auditor.write(entry, { audit: "/nonexistent-dir/mcp-fleet/audit.jsonl" })
      const noFiles = yield* makeAuditor(Option.none(), Option.none())
      yield* noFiles.write(entry, { audit: "/nonexistent-dir/mcp-fleet/audit.jsonl" })
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
