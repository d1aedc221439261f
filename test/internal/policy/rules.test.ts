/**
 * Rule decisions and limit resolution alone, without a fleet.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Rules from "../../../src/internal/policy/rules.js"

const qualified = (server: string, tool: string): Rules.Target => ({ name: `mcp__${server}__${tool}`, server, tool })

describe("rules", () => {
  it("deny beats ask beats allow, across global and server rules", () => {
    const compiled = Rules.compile({ allow: ["*"], ask: ["mcp__a__*"], servers: { a: { deny: ["drop"] } } })
    expect(Rules.decide(compiled, qualified("a", "drop"), true)).toMatchObject({
      action: "deny",
      source: `deny "drop" (server 'a')`
    })
    expect(Rules.decide(compiled, qualified("a", "read"), true).action).toBe("ask")
    expect(Rules.decide(compiled, qualified("b", "read"), true).action).toBe("allow")
  })

  it("a server's globs match its own tools only, by original or qualified name", () => {
    const compiled = Rules.compile({ servers: { a: { deny: ["drop", "mcp__a__wipe"] } } })
    expect(Rules.decide(compiled, qualified("a", "wipe"), false).action).toBe("deny")
    expect(Rules.decide(compiled, qualified("b", "drop"), false).action).toBe("allow")
    // A bare name with no server is judged by the global rules alone.
    expect(Rules.decide(compiled, { name: "drop" }, false).action).toBe("allow")
  })

  it("defaults: the server's, else the global one; ask without an approver is deny", () => {
    const compiled = Rules.compile({ default: "ask", servers: { a: { default: "deny" } } })
    expect(Rules.decide(compiled, qualified("a", "x"), true)).toMatchObject({
      action: "deny",
      reason: "default deny (server 'a')"
    })
    expect(Rules.decide(compiled, qualified("b", "x"), true)).toMatchObject({
      action: "ask",
      reason: "default ask (global)"
    })
    expect(Rules.decide(compiled, qualified("b", "x"), false)).toMatchObject({
      action: "deny",
      reason: "default ask (global) needs approval, and no approver is provided"
    })
    expect(Rules.decide(Rules.compile({}), qualified("b", "x"), false)).toEqual({
      action: "allow",
      rule: undefined,
      reason: "no rule matches",
      source: undefined
    })
  })

  it("limits: closer to the tool wins; slots and buckets split by server and tool", () => {
    const compiled = Rules.compile({
      limits: { timeout: 1, maxConcurrent: 8 },
      tools: { "mcp__a__*": { timeout: 2, maxConcurrent: 4 } },
      servers: { a: { limits: { timeout: 3, maxConcurrent: 2 }, tools: { slow: { timeout: 4 } } } }
    })
    expect(Rules.resolveLimits(compiled, qualified("a", "slow"))).toEqual({
      call: { timeout: 4, maxConcurrent: 2 },
      server: { timeout: 3, maxConcurrent: 2 },
      tool: { timeout: 4, maxConcurrent: 4 }
    })
    expect(Rules.resolveLimits(compiled, qualified("b", "x"))).toEqual({
      call: { timeout: 1, maxConcurrent: 8 },
      server: { timeout: 1, maxConcurrent: 8 },
      tool: {}
    })
  })

  it("stricter and ruleText", () => {
    expect(Rules.stricter("allow", "ask")).toBe("ask")
    expect(Rules.stricter("deny", "ask")).toBe("deny")
    expect(Rules.stricter(undefined, "allow")).toBe("allow")
    expect(Rules.ruleText({ action: "ask", pattern: "delete_*", server: "github" })).toBe(
      `ask "delete_*" (server 'github')`
    )
  })
})
