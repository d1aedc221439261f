import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import * as Form from "../../../src/internal/host/form.js"

// The validator loads on first use (an Effect); its answer is what these tests look at.
const checkForm = (...args: Parameters<typeof Form.checkForm>) => Effect.runPromise(Form.checkForm(...args))

const schemaOf = (format: string) => ({
  type: "object" as const,
  properties: { field: { type: "string", format } },
  required: ["field"]
})

describe("elicitation form formats", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
    ["uri", ["https://example.com/a?b=c", "urn:isbn:0451450523", "mailto:a@b.example"], [
      "2024-01-01",
      "example.com",
      "",
      "http://a b"
    ]],
    ["date", ["2024-01-01", "2024-02-29"], ["7", "2023-02-29", "2024-13-01", "2024-1-1", "2024-01-01T00:00:00Z"]],
    ["date-time", ["2024-01-01T12:00:00Z", "2024-01-01T12:00:00.5+02:00", "2016-12-31T23:59:60Z"], [
      "7",
      "2024-01-01",
      "2024-01-01T25:00:00Z",
      "2024-01-01 12:00:00",
      "2024-01-01T12:00:00"
    ]],
    ["email", ["ada@example.com", "a.b+c@mail.example.org"], ["7", "ada", "ada@", "@example.com", "a b@example.com"]]
  ]
  for (const [format, good, bad] of cases) {
    it(`accepts a valid ${format} and refuses others, naming the field`, async () => {
      for (const value of good) expect(await checkForm(schemaOf(format), { field: value }), value).toBeUndefined()
      for (const value of bad) {
        const problem = await checkForm(schemaOf(format), { field: value })
        expect(problem, value).toContain("/field must be")
        expect(problem).toContain(JSON.stringify(value))
      }
    })
  }

  it("leaves a format forms do not name, and non-string fields, to the schema", async () => {
    expect(await checkForm(schemaOf("hostname"), { field: "not a host!" })).toBeUndefined()
    expect(await checkForm(schemaOf("uri"), { field: 7 as unknown as string })).toContain("must be string")
  })
})
