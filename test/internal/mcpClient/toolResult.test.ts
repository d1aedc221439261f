import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { makeOutputChecks } from "../../../src/internal/mcpClient/toolResult.js"
import type * as McpSchema from "../../../src/McpSchema.js"
import { failure } from "../../../src/testing/Results.js"

const weather: McpSchema.Tool = {
  name: "weather",
  inputSchema: { type: "object" },
  outputSchema: { type: "object", properties: { t: { type: "number" } }, required: ["t"] }
}

// Checks whose listing records `tools` and counts how often it ran.
const checks = (tools: ReadonlyArray<McpSchema.Tool>) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    let listings = 0
    const outputs = makeOutputChecks("s", scope, () =>
      Effect.sync(() => {
        listings++
        outputs.remember(tools)
      }))
    return { outputs, listings: () => listings }
  })

describe("tool results", () => {
  it.scoped("lists the tools once however many calls wait, and again after forget", () =>
    Effect.gen(function*() {
      const { listings, outputs } = yield* checks([weather])
      expect(outputs.listed()).toBe(false)
      const waiting = yield* Effect.forkAll([outputs.ensureListed, outputs.ensureListed, outputs.ensureListed])
      yield* Fiber.join(waiting)
      expect(listings()).toBe(1)
      expect(outputs.listed()).toBe(true)
      outputs.forget()
      yield* outputs.ensureListed
      expect(listings()).toBe(2)
    }))

  it.scoped("checks structured content against the outputSchema, except for an error result", () =>
    Effect.gen(function*() {
      const { outputs } = yield* checks([weather])
      yield* outputs.ensureListed
      const good = { content: [], structuredContent: { t: 3 } }
      expect(yield* outputs.check("weather", good)).toEqual(good)
      const bad = failure(yield* Effect.exit(outputs.check("weather", { content: [], structuredContent: { t: "x" } })))
      expect(bad.reason).toMatchObject({ _tag: "Validation", method: "tools/call" })
      expect(bad.message).toMatch(
        /^server 's' \(tools\/call\): tool 'weather' returned structuredContent that does not match/
      )
      const missing = failure(yield* Effect.exit(outputs.check("weather", { content: [] })))
      expect(missing.message).toBe(
        "server 's' (tools/call): tool 'weather' has an outputSchema but returned no structuredContent"
      )
      const error = { content: [{ type: "text", text: "no" }], isError: true }
      expect(yield* outputs.check("weather", error)).toEqual(error)
    }))

  it.scoped("passes a plain result through and decodes the rest", () =>
    Effect.gen(function*() {
      const { outputs } = yield* checks([])
      const plain = { content: [{ type: "text", text: "hi" }] }
      expect(yield* outputs.check("echo", plain)).toBe(plain)
      const malformed = failure(yield* Effect.exit(outputs.check("echo", { content: "nope" })))
      expect(malformed.reason._tag).toBe("Validation")
    }))
})
