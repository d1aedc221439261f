import { describe, expect, it } from "@effect/vitest"
import * as McpError from "../src/McpError.js"

describe("McpError", () => {
  it("names the one server a failure concerns", () => {
    const error = McpError.transport("github", { message: "spawn failed", exitCode: 1 })
    expect(error.server).toBe("github")
    expect(error.message).toBe("server 'github': spawn failed (process exited with code 1)")
  })

  it("has no server for a failure of the fleet as a whole, and never an empty one", () => {
    const unknown = McpError.notFound(
      undefined,
      { what: "tool", name: "mcp__x__y", suggestions: [] }
    )
    expect(unknown.server).toBeUndefined()
    expect("server" in unknown).toBe(false)
    expect(unknown.message).toBe("there is no tool 'mcp__x__y'")
    const late = McpError.unavailable(
      undefined,
      { state: "NotReady", message: "not ready in time" }
    )
    expect(late.message).toBe("not ready in time")
    expect(() => McpError.config("", { message: "x" })).toThrow()
  })

  it("a request the connection never sent: 'was not sent', unless the process ended (it did not answer either way)", () => {
    const refused = McpError.closed(
      "srv",
      { message: "the connection is closed", method: "ping", unsent: true }
    )
    expect(refused.message).toBe("server 'srv': the connection is closed (ping was not sent)")
    const exited = McpError.closed(
      "srv",
      { message: "closed", method: "initialize", unsent: true, exitCode: 1 }
    )
    expect(exited.message).toBe("server 'srv' exited with code 1 before answering initialize")
    expect(exited.unsent).toBe(true)
  })

  it("keeps the last 20 lines of a dead process's stderr, within 2 KiB; stderrTail keeps it all", () => {
    // What Node writes when a server's script path is wrong: the reason is 10 lines from the end.
    const nodeMissingModule = [
      "node:internal/modules/cjs/loader:1228",
      "  throw err;",
      "  ^",
      "",
      "Error: Cannot find module '/srv/mcp/dist/index.js'",
      "    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)",
      "    at Module._load (node:internal/modules/cjs/loader:1051:27)",
      "    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:174:12)",
      "    at node:internal/main/run_main_module:28:49 {",
      "  code: 'MODULE_NOT_FOUND',",
      "  requireStack: []",
      "}",
      "",
      "Node.js v20.20.2",
      ""
    ].join("\n")
    const closed = (stderrTail: string) =>
      McpError.closed("docs", { message: "x", exitCode: 1, method: "initialize", stderrTail })
    const missing = closed(nodeMissingModule)
    expect(missing.message).toBe(
      `server 'docs' exited with code 1 before answering initialize: ${nodeMissingModule.trim()}`
    )
    expect(missing.message).toContain("Error: Cannot find module '/srv/mcp/dist/index.js'")

    const many = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n")
    expect(closed(many).message).toBe(
      `server 'docs' exited with code 1 before answering initialize: ${many.split("\n").slice(10).join("\n")}`
    )

    // Long lines: at most 2 KiB, starting where a line starts.
    const long = Array.from({ length: 10 }, (_, i) => `${i}`.repeat(300)).join("\n")
    const kept = closed(long).message.split("initialize: ")[1]!
    expect(kept.length).toBeLessThanOrEqual(2049)
    expect(kept).toBe(`…${long.split("\n").slice(-6).join("\n")}`)
    // One huge line: its end.
    expect(closed("x".repeat(5000)).message.split("initialize: ")[1]).toBe(`…${"x".repeat(2048)}`)
    expect(closed(long).reason).toMatchObject({ stderrTail: long })
  })

  it("says a server's error code once, when its message repeats it", () => {
    const error = (message: string) =>
      McpError.protocol("everything", { method: "resources/read", code: -32602, message })
    expect(error("MCP error -32602: Resource demo://x not found").message).toBe(
      "server 'everything' answered resources/read with error -32602: Resource demo://x not found"
    )
    expect(error("bad uri").message).toBe("server 'everything' answered resources/read with error -32602: bad uri")
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
