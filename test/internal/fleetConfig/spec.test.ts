/**
 * One server entry to a spec alone: the transport kind, defaults, and a placeholder with
 * a problem for an entry that cannot be used.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import { toSpec } from "../../../src/internal/fleetConfig/spec.js"
import { posixPath } from "../../../src/internal/platform.js"

const context = {
  env: { TOKEN: "t0k" },
  path: posixPath,
  dir: "/p",
  workspace: "/p",
  home: "/home/me",
  inputs: new Map(),
  unanswered: new Set<string>(),
  envFiles: new Map(),
  unread: new Set<string>()
}

describe("spec", () => {
  it("picks the transport from command, url and type; resolves cwd against the file", () => {
    expect(toSpec("a", { command: "x", cwd: "sub" }, {}, context, []).transport)
      .toEqual({ type: "stdio", command: "x", cwd: "/p/sub" })
    expect(toSpec("b", { url: "wss://h/mcp" }, {}, context, []).transport).toEqual({ type: "ws", url: "wss://h/mcp" })
    expect(toSpec("c", { url: "https://h/mcp", type: "streamable-http" }, {}, context, []).transport.type).toBe("http")
  })

  it("server fields win over defaults; a canonical name over its alias", () => {
    const spec = toSpec(
      "a",
      { command: "x", startupTimeout: 5, requestTimeout: 7 },
      {
        initializeTimeout: 1,
        requestTimeout: 2,
        restart: { maxAttempts: 3 }
      },
      context,
      []
    )
    expect(Duration.toMillis(spec.initializeTimeout!)).toBe(5)
    expect(Duration.toMillis(spec.requestTimeout!)).toBe(7)
    expect(spec.restart).toEqual({ maxAttempts: 3 })
  })

  it("an entry that cannot be used gets a placeholder transport and every problem", () => {
    const spec = toSpec("a", { url: "https://${TOKEN}@h", command: "x" }, { health: { timeout: 1 } }, context, [
      "extra"
    ])
    expect(spec.transport).toEqual({ type: "stdio", command: "" })
    expect(spec.problem).toBe(
      `extra; both "command" and "url" are set; a server has one or the other; "health" needs an "interval"`
    )
    expect(JSON.stringify(spec)).not.toContain("t0k")
  })
})
