// The Inspector's session commands on one server: ping, complete, log-level (--follow),
// subscribe (until Ctrl-C), and read --output for a binary resource.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { config, hasScript, leavesNothing, marked, run, runOnTerminal, start, tempDir } from "../support/cli.js"

const mark = `cli-session-${process.pid}-${Date.now()}`
const SESSION = fileURLToPath(new URL("../fixtures/session.mjs", import.meta.url))

afterAll(() => leavesNothing(mark))

const dir = tempDir({ ".mcp.json": config({ session: marked({ command: process.execPath, args: [SESSION] }, mark) }) })
const cli = (...args: Array<string>) => run(args, { cwd: dir, mark })

describe("session commands", () => {
  it("ping says how fast the server answered", async () => {
    const text = await cli("ping", "session")
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^'session' answered in \d+ ms$/m)
    const json = JSON.parse((await cli("ping", "session", "--json")).stdout)
    expect(json).toMatchObject({ server: "session" })
  })

  it("complete: a prompt's argument and a template's variable, narrowed by --context", async () => {
    const prompt = await cli("complete", "session", "city", "pa", "--prompt", "weather")
    expect(prompt.code).toBe(0)
    expect(prompt.stdout.trim().split("\n")).toEqual(["Paris", "Parma"])
    const template = await cli(
      "complete",
      "session",
      "name",
      "p",
      "--resource",
      "city://{name}",
      "--context",
      "country=it",
      "--json"
    )
    expect(JSON.parse(template.stdout)).toMatchObject({ values: ["Parma"] })
    const neither = await cli("complete", "session", "city")
    expect(neither.code).toBe(2)
    expect(neither.stderr).toContain("--prompt <name> or --resource <uri-template>")
  })

  it("log-level sets the level; --follow --json prints each message as one line until stopped", async () => {
    const set = await cli("log-level", "session", "warning")
    expect(set.code).toBe(0)
    expect(set.stdout).toContain("'session' logs from warning up")
    const following = start(["log-level", "session", "debug", "--follow", "--json"], { cwd: dir, mark })
    const line = await following.line((text) => text.includes("now at debug"), "the log message")
    expect(JSON.parse(line)).toEqual({ level: "debug", logger: "fixture", data: "now at debug" })
    await following.stop()
  })

  it("subscribe streams a resource's updates (--json: one line each) until SIGINT", async () => {
    const subscribed = start(["subscribe", "file:///notes.txt", "--json"], { cwd: dir, mark })
    // The fixture sends three updates.
    await new Promise<void>((resolve) =>
      subscribed.child.stdout.on("data", () => {
        if (subscribed.stdout().trim().split("\n").length >= 3) resolve()
      })
    )
    const updates = subscribed.stdout().trim().split("\n").map((text) => JSON.parse(text))
    expect(updates[0]).toMatchObject({ server: "session", uri: "file:///notes.txt" })
    subscribed.child.kill("SIGINT")
    await subscribed.exited
    const unknown = await cli("subscribe", "file:///nope")
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("no server lists the resource 'file:///nope'")
  })

  it("read --output writes a blob's bytes; piped without it, the bytes; on a terminal, it is refused", async () => {
    const file = path.join(dir, "image.bin")
    const saved = await cli("read", "session", "file:///image.bin", "--output", file)
    expect(saved.code).toBe(0)
    expect([...fs.readFileSync(file)]).toEqual([0, 1, 2, 250, 255])
    expect(saved.stderr).toContain("wrote 5 bytes")
    const piped = await cli("read", "session", "file:///image.bin")
    expect(piped.code).toBe(0)
    expect(piped.stdout.startsWith("\u0000\u0001\u0002")).toBe(true)
    const text = await cli("read", "session", "file:///notes.txt")
    expect(text.stdout.trim()).toBe("some notes")
    if (hasScript) {
      const terminal = await runOnTerminal(["read", "session", "file:///image.bin"], { cwd: dir, mark })
      expect(terminal.stdout).toContain("is binary (5 bytes): pass --output <file>")
    }
  })
})
