/**
 * Variable expansion alone: the forms it knows, and problems that name a field and never
 * a value.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Redacted from "effect/Redacted"
import { type Context, expand, expandRecord } from "../../../src/internal/fleetConfig/variables.js"
import { posixPath } from "../../../src/internal/platform.js"

const context = (env: Record<string, string>, inputs: Record<string, string> = {}): Context => ({
  env,
  path: posixPath,
  workspace: "/w/app",
  home: "/home/me",
  inputs: new Map(Object.entries(inputs)),
  unanswered: new Set(),
  problems: []
})

describe("variables", () => {
  it("expands ${VAR}, ${env:VAR}, ${VAR:-default} and VS Code's ${workspaceFolder}, ${userHome} and kin", () => {
    const ctx = context({ A: "a", EMPTY: "" })
    expect(expand("${A}-${env:A}-${EMPTY:-d}-${UNSET:-u}-${workspaceFolder}", "f", ctx))
      .toEqual({ value: "a-a-d-u-/w/app", referenced: true })
    expect(expand("${userHome}${pathSeparator}x ${workspaceFolderBasename}", "f", ctx).value).toBe("/home/me/x app")
    expect(expand("plain", "f", ctx)).toEqual({ value: "plain", referenced: false })
    expect(ctx.problems).toEqual([])
  })

  it("${input:id}: an answer, else MCP_FLEET_INPUT_<ID>, else noted as unanswered", () => {
    const ctx = context({ MCP_FLEET_INPUT_API_KEY: "from-env" }, { "github-token": "answered" })
    expect(expand("${input:github-token} ${input:api-key}", "f", ctx).value).toBe("answered from-env")
    expect(ctx.problems).toEqual([])
    expand("${input:other.id}", "env.X", ctx)
    expect([...ctx.unanswered]).toEqual(["other.id"])
    expect(ctx.problems).toEqual([
      `input "other.id" has no value (\${input:other.id} in env.X): set MCP_FLEET_INPUT_OTHER_ID, ` +
      "or run on a terminal to be asked"
    ])
  })

  it("collects problems naming the field, never the value", () => {
    const ctx = context({ SECRET: "s3cret" })
    expand("${UNSET}", "env.TOKEN", ctx)
    expand("${command:pick}", "headers.A", ctx)
    expand("${SECRET:-${X}}", "args[0]", ctx)
    expand("${SECRET", "url", ctx)
    expect(ctx.problems).toEqual([
      "variable UNSET is not set (used in env.TOKEN)",
      "${command:pick} in headers.A is not supported",
      "nested variables are not supported (in args[0])",
      `unterminated "\${" in url`
    ])
    expect(ctx.problems.join()).not.toContain("s3cret")
  })

  it("expandRecord: referenced values become Redacted, literal ones stay strings", () => {
    const expanded = expandRecord({ KEY: "${SECRET}", MODE: "fast" }, "env", context({ SECRET: "s3cret" }))!
    expect(Redacted.isRedacted(expanded.KEY)).toBe(true)
    expect(Redacted.value(expanded.KEY as Redacted.Redacted<string>)).toBe("s3cret")
    expect(expanded.MODE).toBe("fast")
    expect(expandRecord({}, "env", context({}))).toBeUndefined()
  })
})
