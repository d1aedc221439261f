/**
 * Variable expansion alone: the forms it knows, and problems that name a field and never
 * a value.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Redacted from "effect/Redacted"
import { type Context, expand, expandRecord } from "../../../src/internal/fleetConfig/variables.js"

const context = (env: Record<string, string>): Context => ({ env, dir: "/p", workspace: "/w", problems: [] })

describe("variables", () => {
  it("expands ${VAR}, ${env:VAR}, ${VAR:-default} and ${workspaceFolder}", () => {
    const ctx = context({ A: "a", EMPTY: "" })
    expect(expand("${A}-${env:A}-${EMPTY:-d}-${UNSET:-u}-${workspaceFolder}", "f", ctx))
      .toEqual({ value: "a-a-d-u-/w", referenced: true })
    expect(expand("plain", "f", ctx)).toEqual({ value: "plain", referenced: false })
    expect(ctx.problems).toEqual([])
  })

  it("collects problems naming the field, never the value", () => {
    const ctx = context({ SECRET: "s3cret" })
    expand("${UNSET}", "env.TOKEN", ctx)
    expand("${input:token}", "headers.A", ctx)
    expand("${SECRET:-${X}}", "args[0]", ctx)
    expand("${SECRET", "url", ctx)
    expect(ctx.problems).toEqual([
      "variable UNSET is not set (used in env.TOKEN)",
      "VS Code input variables are not supported (${input:token} in headers.A)",
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
