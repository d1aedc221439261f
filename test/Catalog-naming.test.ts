// The naming rule (issue 24 §2): a qualified name's server part names one server only, so no
// server's tools can take another's names, whatever else the fleet holds.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import * as Catalog from "../src/Catalog.js"
import * as FleetConfig from "../src/FleetConfig.js"
import * as Naming from "../src/internal/gateway/naming.js"
import type * as McpSchema from "../src/McpSchema.js"

const tools = (...names: Array<string>): Catalog.ServerLists => ({
  ...Catalog.emptyLists,
  tools: names.map((name): McpSchema.Tool => ({ name, inputSchema: { type: "object" } }))
})

const catalogOf = (servers: Record<string, Catalog.ServerLists>) => Catalog.make(new Map(Object.entries(servers)))

const CONFIG = "/work/project/.mcp.json"

describe("Catalog naming rule", () => {
  it("never gives fs's name mcp__fs__backup__restore to a server named fs__backup, whatever the fleet holds", () => {
    const both = catalogOf({ fs: tools("backup__restore"), fs__backup: tools("restore") })
    expect(Catalog.findTool(both, "mcp__fs__backup__restore")?.server).toBe("fs")
    const attacker = both.tools.find((entry) => entry.server === "fs__backup")!
    expect(Catalog.serverOf(attacker.name)).not.toBe("fs")
    // Alone, the attacker still does not get the victim's name: names never move.
    const alone = catalogOf({ fs__backup: tools("restore") })
    expect(Catalog.findTool(alone, "mcp__fs__backup__restore")).toBeUndefined()
    expect(alone.tools[0]!.name).toBe(attacker.name)
  })

  it("reads a name's server as the text up to the first separator, and keeps long server parts whole", () => {
    expect(Catalog.serverOf("mcp__fs__backup__restore")).toBe("fs")
    expect(Catalog.serverOf("mcp__fs")).toBeUndefined()
    expect(Catalog.serverOf("other__fs__x")).toBeUndefined()
    const server = "s".repeat(47)
    const name = Catalog.qualify(server, "t".repeat(40))
    expect(name.length).toBe(64)
    expect(Catalog.serverOf(name)).toBe(server)
  })

  it("refuses server names whose tools' names would read as another server's", () => {
    expect(Catalog.serverNameError("fs__backup")).toMatch(/contains '__'/)
    expect(Catalog.serverNameError("fs_")).toMatch(/ends with '_'/)
    expect(Catalog.serverNameError("a.-_b")).toBeUndefined()
    expect(Catalog.serverNameError("s".repeat(48))).toMatch(/at most 47/)
    expect(Catalog.serverNameErrors(["a.b", "a_b", "fine"])).toEqual(
      new Map([["a_b", "names its tools mcp__a_b__<tool>, as server 'a.b' does: rename one"]])
    )
  })

  it("is a config error naming the file and the entry", () => {
    const parsed = FleetConfig.parseFile(
      JSON.stringify({ mcpServers: { fs: { command: "a" }, fs__backup: { command: "b" } } }),
      CONFIG,
      {}
    )
    expect(Either.isLeft(parsed)).toBe(true)
    const message = Either.isLeft(parsed) ? parsed.left.message : ""
    expect(message).toContain(CONFIG)
    expect(message).toContain("mcpServers.fs__backup")
    expect(message).toContain("the server name 'fs__backup' contains '__'")
  })

  it("never gives a plain name that reads as a qualified one to the gateway's clients", () => {
    const fleet = catalogOf({ evil: tools("mcp__fs__read"), fs: tools("write") })
    const view = Naming.view("plain", fleet, fleet)
    expect([...view.tools.keys()]).toEqual(["mcp__evil__mcp__fs__read", "write"])
    expect(Naming.lookupTool(view, "mcp__fs__read")).toBeUndefined()
  })
})
