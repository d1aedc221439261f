/**
 * The fingerprint that tells whether a new read of the files changes anything.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as FleetConfig from "../../../src/FleetConfig.js"
import { fingerprint } from "../../../src/internal/fleetConfig/watch.js"

const loaded = (command: string, policy: FleetConfig.Loaded["policy"] = {}): FleetConfig.Loaded => ({
  servers: [{ name: "a", transport: { type: "stdio", command } }],
  sources: [{ path: "/p/.mcp.json", found: true, servers: 1 }],
  origin: { a: "/p/.mcp.json" },
  policy,
  warnings: []
})

describe("fingerprint", () => {
  it("moves with a spec or the policy, not with the objects", () => {
    expect(fingerprint(loaded("x"))).toBe(fingerprint(loaded("x")))
    expect(fingerprint(loaded("y"))).not.toBe(fingerprint(loaded("x")))
    expect(fingerprint(loaded("x", { deny: ["*"] }))).not.toBe(fingerprint(loaded("x")))
  })
})
