import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as McpError from "../src/McpError.js"
import * as McpErrorSchema from "../src/McpErrorSchema.js"

const encode = Schema.encodeSync(McpErrorSchema.McpError)
const decode = Schema.decodeUnknownEither(McpErrorSchema.McpError)

describe("McpErrorSchema", () => {
  it("an error sent over a wire reads back as the same McpError, its reason's class included", () => {
    const sent = McpError.closed("github", { message: "closed", method: "tools/call", exitCode: 1, stderrTail: "boom" })
    const wire: unknown = JSON.parse(JSON.stringify(encode(sent)))
    expect(wire).toEqual({
      _tag: "McpError",
      server: "github",
      reason: { _tag: "Closed", message: "closed", method: "tools/call", exitCode: 1, stderrTail: "boom" }
    })
    const read = Either.getOrThrow(decode(wire))
    expect(read).toBeInstanceOf(McpError.McpError)
    expect(read.reason).toBeInstanceOf(McpError.ClosedReason)
    expect(read.message).toBe(sent.message)
    expect(read.retryable).toBe(sent.retryable)
  })

  it("keeps a fleet-wide error without a server, and a cause as a defect's text", () => {
    const sent = McpError.notFound(undefined, { what: "tool", name: "x", suggestions: ["y"] }, new Error("why"))
    const wire = encode(sent)
    expect("server" in wire).toBe(false)
    const read = Either.getOrThrow(decode(JSON.parse(JSON.stringify(wire))))
    expect(read.server).toBeUndefined()
    expect(read.reason).toEqual(new McpError.NotFoundReason({ what: "tool", name: "x", suggestions: ["y"] }))
    expect(read.message).toBe("there is no tool 'x'; did you mean 'y'?")
  })

  it("refuses an empty server name, an unknown reason and a reason with a wrong field", () => {
    const reason = { _tag: "Config", message: "bad" }
    expect(Either.isRight(decode({ _tag: "McpError", reason }))).toBe(true)
    expect(Either.isLeft(decode({ _tag: "McpError", server: "", reason }))).toBe(true)
    expect(Either.isLeft(decode({ _tag: "McpError", reason: { _tag: "Nope", message: "bad" } }))).toBe(true)
    expect(Either.isLeft(decode({ _tag: "McpError", reason: { _tag: "Http", status: "401", method: "x", body: "" } })))
      .toBe(true)
  })

  it("every reason constructor's error survives the round trip", () => {
    const errors = [
      McpError.transport("s", { message: "spawn", code: "ENOENT" }),
      McpError.protocol("s", { method: "m", code: -32602, message: "bad", data: { x: 1 } }),
      McpError.timeout("s", { method: "m", afterMs: 5, kind: "idle" }),
      McpError.http("s", { status: 401, method: "m", body: "", wwwAuthenticate: "Bearer" }),
      McpError.limit("s", { what: "message", size: 9, limit: 8 }),
      McpError.validation("s", { message: "shape", method: "m" }),
      McpError.unsupported("s", { message: "no" }),
      McpError.unavailable("s", { state: "Stopped", message: "stopped" }),
      McpError.config("s", { message: "bad" }),
      McpError.denied(undefined, { tool: "t", rule: "deny \"t\"", message: "no" }),
      McpError.inDoubt("s", { tool: "t", message: "died" })
    ]
    for (const error of errors) {
      const read = Either.getOrThrow(decode(JSON.parse(JSON.stringify(encode(error)))))
      expect(read.reason).toEqual(error.reason)
      expect(read.message).toBe(error.message)
      expect([read.retryable, read.needsAuth]).toEqual([error.retryable, error.needsAuth])
    }
  })
})
