import { describe, expect, it } from "@effect/vitest"
import * as McpError from "../src/McpError.js"

describe("McpError", () => {
  it("names the one server a failure concerns", () => {
    const error = McpError.make("github", new McpError.TransportReason({ message: "spawn failed", exitCode: 1 }))
    expect(error.server).toBe("github")
    expect(error.message).toBe("server 'github': spawn failed (process exited with code 1)")
  })

  it("has no server for a failure of the fleet as a whole, and never an empty one", () => {
    const unknown = McpError.make(
      undefined,
      new McpError.NotFoundReason({ what: "tool", name: "mcp__x__y", suggestions: [] })
    )
    expect(unknown.server).toBeUndefined()
    expect("server" in unknown).toBe(false)
    expect(unknown.message).toBe("there is no tool 'mcp__x__y'")
    const late = McpError.make(
      undefined,
      new McpError.UnavailableReason({ state: "NotReady", message: "not ready in time" })
    )
    expect(late.message).toBe("not ready in time")
    expect(() => McpError.make("", new McpError.ConfigReason({ message: "x" }))).toThrow()
  })

  it("says whether another attempt may help", () => {
    const of = (reason: McpError.Reason) => McpError.make("s", reason)
    const http = (status: number) => of(new McpError.HttpReason({ status, method: "initialize", body: "" }))
    expect(of(new McpError.TransportReason({ message: "x" })).retryable).toBe(true)
    expect(of(new McpError.ClosedReason({ message: "x" })).retryable).toBe(true)
    expect(of(new McpError.TimeoutReason({ method: "ping", afterMs: 1, kind: "idle" })).retryable).toBe(true)
    expect(http(503).retryable).toBe(true)
    expect(of(new McpError.UnsupportedReason({ message: "x" })).retryable).toBe(false)
    expect(of(new McpError.ConfigReason({ message: "x" })).retryable).toBe(false)
    expect(of(new McpError.DeniedReason({ tool: "t", message: "x" })).retryable).toBe(false)
    expect(of(new McpError.NotFoundReason({ what: "tool", name: "t", suggestions: [] })).retryable).toBe(false)
    expect(of(new McpError.UnavailableReason({ state: "Disabled", message: "is disabled" })).retryable).toBe(false)
    for (const status of [401, 403]) {
      expect(http(status).needsAuth).toBe(true)
      expect(http(status).retryable).toBe(false)
    }
    expect(http(500).needsAuth).toBe(false)
  })
})
