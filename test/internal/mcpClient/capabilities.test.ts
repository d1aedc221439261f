import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { supports, unsupported } from "../../../src/internal/mcpClient/capabilities.js"
import { failure } from "../../../src/testing/Results.js"

describe("capabilities", () => {
  it("gates each feature on the declared capability", () => {
    expect(supports({ tools: {} }, "2025-11-25", "tools")).toBe(true)
    expect(supports({ tools: {} }, "2025-11-25", "prompts")).toBe(false)
    expect(supports({ resources: {} }, "2025-11-25", "resources.subscribe")).toBe(false)
    expect(supports({ resources: { subscribe: true } }, "2025-11-25", "resources.subscribe")).toBe(true)
    expect(supports({ completions: {} }, "2025-11-25", "completions")).toBe(true)
  })

  it("lets a 2024-11-05 server complete with prompts or resources alone", () => {
    expect(supports({ prompts: {} }, "2024-11-05", "completions")).toBe(true)
    expect(supports({ prompts: {} }, "2025-03-26", "completions")).toBe(false)
    expect(supports({ tools: {} }, "2024-11-05", "completions")).toBe(false)
  })

  it.effect("fails an undeclared feature with Unsupported", () =>
    Effect.gen(function*() {
      const error = failure(yield* Effect.exit(unsupported("s", "logging", "set the logging level")))
      expect(error.reason._tag).toBe("Unsupported")
      expect(error.message).toBe(
        "server 's': cannot set the logging level: the server did not declare the 'logging' capability"
      )
    }))
})
