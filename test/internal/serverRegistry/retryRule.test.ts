// The rule for a call that may have reached a server that died: which tools may be sent
// again, and which failures are in doubt.
import { describe, expect, it } from "@effect/vitest"
import * as RetryRule from "../../../src/internal/serverRegistry/retryRule.js"
import * as McpError from "../../../src/McpError.js"

describe("retryRule", () => {
  it("retries only a tool annotated idempotentHint or readOnlyHint true", () => {
    expect(RetryRule.mayRetry({ annotations: { readOnlyHint: true } })).toBe(true)
    expect(RetryRule.mayRetry({ annotations: { idempotentHint: true } })).toBe(true)
    expect(RetryRule.mayRetry({ annotations: { readOnlyHint: false, idempotentHint: false } })).toBe(false)
    expect(RetryRule.mayRetry({ annotations: { destructiveHint: false, openWorldHint: false } })).toBe(false)
    expect(RetryRule.mayRetry({})).toBe(false)
    expect(RetryRule.mayRetry(undefined)).toBe(false)
  })

  it("a connection that closed after sending is in doubt; an unsent refusal or a forgotten session is not", () => {
    const closed = (extra: Partial<McpError.ClosedReason> = {}) =>
      McpError.closed("s", { message: "gone", method: "tools/call", ...extra })
    expect(RetryRule.diedMidCall(closed())).toBe(true)
    expect(RetryRule.diedMidCall(closed({ exitCode: 1 }))).toBe(true)
    expect(RetryRule.diedMidCall(closed({ unsent: true }))).toBe(false)
    expect(RetryRule.diedMidCall(closed({ sessionExpired: true }))).toBe(false)
    expect(RetryRule.diedMidCall(McpError.timeout("s", { method: "tools/call", afterMs: 5, kind: "idle" }))).toBe(false)
  })

  it("InDoubt names the server and the tool, says it may have run, and is not retryable", () => {
    const error = RetryRule.inDoubt("db", "drop", "runner r2 was lost")
    expect(error.server).toBe("db")
    expect(error.reason).toMatchObject({ _tag: "InDoubt", tool: "drop" })
    expect(error.retryable).toBe(false)
    expect(error.message).toBe(
      "server 'db' ended while running tool 'drop', which may have run: it is not sent again, " +
        "as 'drop' is not annotated idempotentHint or readOnlyHint (runner r2 was lost)"
    )
  })
})
