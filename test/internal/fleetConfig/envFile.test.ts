/**
 * Env files alone: the dotenv forms they take, and problems that name a line, never its text.
 */
import { describe, expect, it } from "@effect/vitest"
import { parse } from "../../../src/internal/fleetConfig/envFile.js"

describe("envFile", () => {
  it("reads KEY=value lines: export, comments, quotes, escapes, values over several lines", () => {
    const text = [
      "\uFEFF# a comment",
      "",
      "export PLAIN = value with spaces  # and a comment",
      `DOUBLE="a \\"quoted\\" # not a comment\\tand\\\\"`,
      "SINGLE='kept as $is \\n'",
      `MULTI="first`,
      `second"`,
      "EMPTY=",
      "dotted.name-x=1"
    ].join("\r\n")
    expect(parse(text)).toEqual({
      values: {
        PLAIN: "value with spaces",
        DOUBLE: `a "quoted" # not a comment\tand\\`,
        SINGLE: "kept as $is \\n",
        MULTI: "first\nsecond",
        EMPTY: "",
        "dotted.name-x": "1"
      },
      problems: []
    })
  })

  it("names the lines it cannot read, never their text", () => {
    const { problems, values } = parse("A=1\nsecret-token-value\nB='open\nC=\"open\n")
    expect(values).toEqual({ A: "1" })
    expect(problems).toEqual([
      "line 2 is not KEY=value",
      "line 3 opens a quote that is never closed",
      "line 4 opens a quote that is never closed"
    ])
    expect(problems.join()).not.toContain("secret")
  })
})
