// `mcp-fleet audit`: real CLI processes write a signed, chained audit log through `call`, and
// `audit verify` passes it, then finds an edited line and a cut-off tail, saying where.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { config, leavesNothing, marked, run, SERVERS, tempDir } from "../support/cli.js"

const mark = `cli-audit-${process.pid}-${Date.now()}`

afterAll(() => leavesNothing(mark))

describe("mcp-fleet audit", () => {
  it("verify passes a log written by calls, and finds an edit and a cut-off tail", async () => {
    const dir = tempDir()
    const cli = (...args: Array<string>) => run(args, { cwd: dir, mark })
    const key = await cli("audit", "key", "--json")
    expect(key.code).toBe(0)
    const { privateKey, publicKey } = JSON.parse(key.stdout) as { privateKey: string; publicKey: string }
    fs.writeFileSync(path.join(dir, "audit.key"), privateKey)
    const memory = marked({
      command: process.execPath,
      args: [SERVERS.memory],
      env: { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") }
    }, mark)
    fs.writeFileSync(
      path.join(dir, ".mcp.json"),
      config({ memory }, { policy: { audit: "audit.jsonl", auditKey: "audit.key" } })
    )
    for (let i = 0; i < 2; i++) expect((await cli("call", "memory", "read_graph")).code).toBe(0)
    const file = path.join(dir, "audit.jsonl")
    const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n")
    // Two calls, each process closing with a signed checkpoint.
    expect(lines.map((line) => JSON.parse(line).checkpoint ?? "entry")).toEqual(["entry", "close", "entry", "close"])

    const verified = await cli("audit", "verify", "--public-key", publicKey)
    expect(verified.stderr).not.toContain("tampered")
    expect(verified.code).toBe(0)
    expect(verified.stdout).toContain("audit.jsonl: 4 lines, 2 checkpoints (2 signed), closed")
    expect(verified.stdout).toContain("ok: no line was edited, inserted, deleted or cut off")

    fs.writeFileSync(
      file,
      [lines[0]!.replace(`"outcome":"ok"`, `"outcome":"isError"`), ...lines.slice(1)].join("\n") + "\n"
    )
    const edited = await cli("audit", "verify", file, "--json")
    expect(edited.code).toBe(1)
    const report = JSON.parse(edited.stdout)
    expect(report).toMatchObject({ ok: false, lines: 4 })
    expect(report.problems).toEqual([
      { line: 2, what: `line 1 was edited (its hash is not the one line 2 names), or line 2's "prev" was` }
    ])
    expect(edited.stderr).toContain(`the audit log ${file} was tampered with or damaged`)

    fs.writeFileSync(file, lines.slice(0, 3).join("\n") + "\n")
    const cut = await cli("audit", "verify")
    expect(cut.code).toBe(1)
    expect(cut.stdout).toContain(
      "line 3: the log ends at line 3 without a closing checkpoint: lines after line 2 (the last checkpoint) may have been cut off"
    )
  })

  it("verify of a log that does not exist says so", async () => {
    const dir = tempDir()
    const missing = await run(["audit", "verify", "nope.jsonl"], { cwd: dir, mark })
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(`cannot read ${path.join(dir, "nope.jsonl")}`)
  })
})
