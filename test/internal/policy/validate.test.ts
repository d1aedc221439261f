/**
 * Argument validation alone: against the tool's inputSchema, with schemas that cannot be
 * compiled left to the server.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Catalog from "../../../src/Catalog.js"
import { makeCheck } from "../../../src/internal/policy/validate.js"

const tool = (inputSchema: Record<string, unknown>) =>
  ({ name: "mcp__a__t", server: "a", tool: { name: "t", inputSchema } }) as unknown as Catalog.ToolEntry

describe("validate", () => {
  it.effect("passes valid arguments, fails invalid ones naming the tool and the field", () =>
    Effect.gen(function*() {
      const check = makeCheck()
      const entry = tool({ type: "object", properties: { path: { type: "string" } }, required: ["path"] })
      yield* check(entry, { path: "/x" })
      const error = yield* Effect.flip(check(entry, {}))
      expect(error.reason._tag).toBe("Validation")
      expect(error.message).toContain("invalid arguments for tool 't'")
      expect(error.message).toContain("path")
      // Absent arguments count as {}.
      yield* Effect.flip(check(entry, undefined))
    }))

  it.effect("arguments named after Object.prototype members count only when given", () =>
    Effect.gen(function*() {
      const check = makeCheck()
      const entry = tool({
        type: "object",
        properties: { constructor: { type: "string" }, toString: { type: "string" } },
        required: ["toString", "hasOwnProperty"]
      })
      const missing = yield* Effect.flip(check(entry, {}))
      expect(missing.message).toContain("the required argument 'toString' is missing")
      expect(missing.message).toContain("the required argument 'hasOwnProperty' is missing")
      expect(missing.message).not.toContain("constructor")
      yield* check(entry, JSON.parse(`{"toString":"a","hasOwnProperty":1,"constructor":"c"}`))
      const wrong = yield* Effect.flip(check(entry, JSON.parse(`{"toString":1,"hasOwnProperty":1}`)))
      expect(wrong.message).toContain("argument 'toString' must be a string")
    }))

  it.effect("a schema that cannot be compiled lets every call through", () =>
    Effect.gen(function*() {
      yield* makeCheck()(tool({ type: "object", properties: { x: { $ref: "#/nowhere" } } }), { x: 1 })
    }))
})
