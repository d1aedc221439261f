// The CLI's host features end to end on server-everything: roots from --root (none without), sampling by the config's `sampling.command`, elicitation asked on the
// terminal (and declined without one).
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { CLI, cliEnv, config, hasScript, leavesNothing, MARK, marked, run, SERVERS, tempDir } from "../support/cli.js"

const mark = `cli-host-${process.pid}-${Date.now()}`
const SAMPLER = fileURLToPath(new URL("../fixtures/sampler.mjs", import.meta.url))
const everything = marked({ command: process.execPath, args: [SERVERS.everything, "stdio"] }, mark)

const withSampling = tempDir({
  ".mcp.json": config({ everything }, { sampling: { command: process.execPath, args: [SAMPLER] } })
})
const plain = tempDir({ ".mcp.json": config({ everything }) })
const cli = (cwd: string, ...args: Array<string>) => run(args, { cwd, mark })

afterAll(() => leavesNothing(mark))

// Runs the CLI on a terminal (through `script`) and types the next answer each time a
// question ends with "> " or "[Y/n] "; resolves with everything the terminal showed.
const onTerminal = (cwd: string, args: ReadonlyArray<string>, answers: Array<string>) =>
  new Promise<string>((resolve, reject) => {
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`
    const child = cp.spawn("script", ["-qec", [...CLI, ...args].map(quote).join(" "), "/dev/null"], {
      cwd,
      env: { ...process.env, ...cliEnv(), NO_COLOR: "1", [MARK]: mark },
      stdio: "pipe"
    })
    let shown = ""
    let asked = 0
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      shown += chunk
      const questions = shown.split(/> |\[Y\/n\] /).length - 1
      while (asked < questions && answers.length > 0) {
        asked++
        child.stdin.write(`${answers.shift()}\n`)
      }
    })
    child.on("error", reject)
    child.on("close", () => resolve(shown))
  })

describe("the CLI's host features", () => {
  it("roots: none declared by default (see cli-roots.test.ts), else each --root", async () => {
    // With roots first: the server's first sight pins get-roots-list with the rest (a tool
    // that appears later is held by pinning until approved).
    const other = tempDir()
    const given = await cli(plain, "call", "everything", "get-roots-list", "--root", other, "--root", ".")
    expect(given.stdout).toContain(`URI: file://${other}`)
    expect(given.stdout).toContain(`URI: file://${path.resolve(fs.realpathSync(plain))}`)
    expect(given.stdout).toContain("(2 total)")

    // Without roots, server-everything offers no get-roots-list.
    const byDefault = await cli(plain, "tools", "--json")
    expect(byDefault.code).toBe(0)
    expect(byDefault.stdout).not.toContain("get-roots-list")
  })

  it("sampling: off without a sampling command; with one, it answers the server's request", async () => {
    const tools = await cli(plain, "tools", "--json")
    expect(tools.code).toBe(0)
    expect(tools.stdout).not.toContain("trigger-sampling-request")

    const sampled = await cli(withSampling, "call", "everything", "trigger-sampling-request", `{"prompt": "hi there"}`)
    expect(sampled.code).toBe(0)
    expect(sampled.stdout).toContain("sampled for everything: Resource trigger-sampling-request context: hi there")
    expect(sampled.stdout).toContain("system: You are a helpful test server.")
    expect(sampled.stdout).toContain("fixture-model")
  })

  it("elicitation: declined without a terminal", async () => {
    const declined = await cli(plain, "call", "everything", "trigger-elicitation-request")
    expect(declined.code).toBe(0)
    expect(declined.stdout).toMatch(/declined/i)
  })

  it.runIf(hasScript)("elicitation: asked on the terminal, typed from the schema, defaults taken", async () => {
    // name, then every other field left to its default (or out), then send.
    const fields = 13
    const shown = await onTerminal(plain, ["call", "everything", "trigger-elicitation-request"], [
      "Ada Lovelace",
      "maybe", // check: not a yes or no, asked again
      "y",
      ...Array.from({ length: fields - 2 }, () => ""),
      "y"
    ])
    expect(shown).toContain("server 'everything' asks: Please provide inputs for the following fields:")
    expect(shown).toContain("String with default")
    expect(shown).toContain("default: It was a dark and stormy night.")
    expect(shown).toContain("1) Superman (hero-1)")
    expect(shown).toContain("(a number; default: Superman)")
    expect(shown).toContain("answer yes or no")
    expect(shown).toContain("User provided the requested information")
    expect(shown).toContain("- Name: Ada Lovelace")
    expect(shown).toContain("- Agreed to terms: true")
    // Left empty: the schema's default was sent (SEP-1034).
    expect(shown).toContain("- Favorite Integer: 42")
  })
})
