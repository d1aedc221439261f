import { describe, expect, it } from "@effect/vitest"
import * as McpError from "../src/McpError.js"

describe("McpError: a server that dies before the handshake", () => {
  it("says it exited before answering the handshake (not server/discover), with its stderr tail", () => {
    const error = McpError.closed("broken", {
      message: "closed",
      method: "server/discover",
      exitCode: 1,
      stderrTail: "error: MISSING_API_KEY is not set\n"
    })
    expect(error.message).toBe(
      "server 'broken' exited with code 1 before answering the handshake: error: MISSING_API_KEY is not set"
    )
    // The method itself is kept for code that asks which request it was.
    expect(error.reason).toMatchObject({ method: "server/discover" })
  })
})
