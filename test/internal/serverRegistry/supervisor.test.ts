import { describe, expect, it } from "@effect/vitest"
import { backoff, decide, judge } from "../../../src/internal/serverRegistry/supervisor.js"
import * as McpError from "../../../src/McpError.js"
import * as ServerSpec from "../../../src/ServerSpec.js"

const policy: ServerSpec.RestartPolicy = {
  ...ServerSpec.defaultRestartPolicy,
  initialDelay: "100 millis",
  factor: 2,
  maxDelay: "1 second",
  jitter: 0.5,
  stableAfter: "10 seconds"
}

const refused = McpError.transport("s", { message: "refused" })

describe("supervisor", () => {
  it("backs off exponentially, varied by jitter, never past the cap", () => {
    expect([1, 2, 3, 4, 5].map((attempt) => backoff(policy, attempt, 0.5))).toEqual([100, 200, 400, 800, 1000])
    expect(backoff(policy, 1, 0)).toBe(50)
    expect(backoff(policy, 1, 1)).toBe(150)
    expect(backoff(policy, 5, 1)).toBe(1000)
  })

  it("counts attempts in a row, from one again after a stable session", () => {
    expect(judge(policy, refused, 0, 2)).toEqual({ attempt: 3, permanent: false })
    expect(judge(policy, refused, 10_000, 2)).toEqual({ attempt: 1, permanent: false })
  })

  it("gives up on an error that is not retryable, or when the attempts run out", () => {
    const config = McpError.config("s", { message: "bad" })
    const auth = McpError.http("s", { status: 401, method: "initialize", body: "" })
    expect(judge(policy, config, 0, 0).permanent).toBe(true)
    expect(judge(policy, auth, 0, 0).permanent).toBe(true)
    expect(judge({ ...policy, maxAttempts: 3 }, refused, 0, 1).permanent).toBe(false)
    expect(judge({ ...policy, maxAttempts: 3 }, refused, 0, 2).permanent).toBe(true)
  })

  it("decides the state that follows a failure, and when the next attempt starts", () => {
    expect(decide(policy, refused, 0, 1, 5_000, 0.5)).toMatchObject({
      attempt: 2,
      permanent: false,
      retryAt: 5_200,
      state: { _tag: "Failed", attempt: 2, retryAt: 5_200, error: refused }
    })
    const auth = McpError.http("s", { status: 403, method: "tools/call", body: "" })
    expect(decide(policy, auth, 0, 0, 5_000, 0.5)).toMatchObject({ permanent: true, state: { _tag: "NeedsAuth" } })
    // With OAuth that may recover (a refresh, a client credentials grant), the refusal is
    // tried again at once, the server still Connecting (no health check settles on it);
    // once it cannot, NeedsAuth carries the authorization URL.
    expect(decide(policy, auth, 0, 0, 5_000, 0.5, { recoverable: true, authorizationUrl: undefined })).toMatchObject({
      permanent: false,
      retryAt: 5_000,
      state: { _tag: "Connecting", attempt: 2 }
    })
    const url = "https://as.example/authorize?client_id=c"
    expect(decide(policy, auth, 0, 0, 5_000, 0.5, { recoverable: false, authorizationUrl: url }).state).toMatchObject({
      _tag: "NeedsAuth",
      authorizationUrl: url
    })
    const missing = McpError.transport("s", { message: "no such command", code: "ENOENT" })
    expect(decide(policy, missing, 0, 0, 5_000, 0.5).state).toMatchObject({ _tag: "Failed", retryAt: undefined })
  })
})
