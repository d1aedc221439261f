// The help's USAGE and option texts say what the command line does: optional repeatable
// options in brackets, --log-level shown, a duration called a duration, and a negated flag
// (--modern) described as what it does, not as the flag it negates.
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import { describe, expect, it } from "@effect/vitest"
import * as Inspect from "../../src/cli/commands/inspect.js"
import * as Invoke from "../../src/cli/commands/invoke.js"
import * as Serve from "../../src/cli/commands/serve.js"
import * as Help from "../../src/cli/Help.js"
import * as Root from "../../src/cli/Root.js"

const usageOf = (help: string) => help.slice(0, help.indexOf("\n\n")).replace(/\s+/g, " ")

describe("Help usage", () => {
  it("optional repeatable options are in brackets, and --log-level is in every USAGE", () => {
    const usage = usageOf(Help.command(Serve.serve, false))
    expect(usage).toContain("[-c, --config file]... ")
    expect(usage).toContain("[--root folder]... ")
    expect(usage).toContain("[--allow-origin origin]... ")
    expect(usage).not.toMatch(/(^| )--root folder\.\.\./)
    expect(usage).toContain("[--log-level level]")
    expect(usageOf(Help.command(Invoke.call, false))).toContain(
      "[-a, --arg key=value]... <tool> [<tool | json-args>]..."
    )
  })

  it("--settle takes a duration, and --modern is described as the default it is", () => {
    const help = Help.command(Serve.serve, false)
    expect(help).toContain("--settle duration")
    expect(help).toContain("  --modern\n      The opposite of --no-modern, and the default\n")
  })

  it("explain: an unknown option gets the closest of the command's own, and the command's help", () => {
    const error = ValidationError.invalidValue(HelpDoc.p("Received unknown argument: '--drifed'"))
    const commands = [Inspect.servers, Inspect.tools, Invoke.call]
    expect(Help.explain(error, ["tools", "--drifed"], Root.root, commands).message).toBe(
      "unknown option '--drifed' for 'tools' (did you mean '--drifted'?); see 'mcp-fleet tools --help'"
    )
    const mismatch = ValidationError.commandMismatch(HelpDoc.p("Invalid subcommand"))
    const explained = Help.explain(mismatch, ["--timeout", "5s", "tols"], Root.root, commands)
    expect(explained.message).toBe("unknown command 'tols' (did you mean 'tools'?); see 'mcp-fleet --help'")
    expect(explained.exitCode).toBe(2)
  })

  it("the overview documents the exit codes", () => {
    const overview = Help.root(Root.root, [Inspect.servers, Invoke.call], false)
    expect(overview).toContain("EXIT CODES\n  0  done\n  2  a usage mistake")
    expect(overview).toContain("  1  any other failure")
  })
})
