import { describe, expect, it } from "@effect/vitest"
import * as Catalog from "../../../src/Catalog.js"
import { changedLists, fingerprints } from "../../../src/internal/gateway/fleetHub.js"
import * as Naming from "../../../src/internal/gateway/naming.js"

const fleetOf = (servers: Record<string, ReadonlyArray<string>>) =>
  Catalog.make(
    new Map(
      Object.entries(servers).map(([server, names]) => [server, {
        ...Catalog.emptyLists,
        tools: names.map((name) => ({ name, inputSchema: { type: "object" as const } })),
        prompts: names.map((name) => ({ name }))
      }])
    )
  )

const toolNames = (view: Naming.View) => [...view.tools.keys()].sort()

describe("gateway naming", () => {
  it("qualified: every tool and prompt under its qualified name", () => {
    const fleet = fleetOf({ a: ["echo"] })
    const view = Naming.view("qualified", fleet, fleet)
    expect(toolNames(view)).toEqual(["mcp__a__echo"])
    expect([...view.prompts.keys()]).toEqual(["mcp__a__echo"])
  })

  it("plain: a server's own names when they are unique, qualified names for all that share one", () => {
    const fleet = fleetOf({ a: ["echo", "add"], b: ["echo", "sum"] })
    const view = Naming.view("plain", fleet, fleet)
    expect(toolNames(view)).toEqual(["add", "mcp__a__echo", "mcp__b__echo", "sum"])
    expect([...view.prompts.keys()].sort()).toEqual(["add", "mcp__a__echo", "mcp__b__echo", "sum"])
    expect(view.tools.get("add")?.name).toBe("mcp__a__add")
    // The qualified name of a plainly named tool still finds it.
    expect(Naming.lookup(view.tools, view.catalog.toolsByName, "mcp__b__sum")?.server).toBe("b")
    expect(Naming.lookup(view.tools, view.catalog.toolsByName, "echo")).toBeUndefined()
  })

  it("plain: a server's name that is another tool's qualified name stays qualified", () => {
    const fleet = fleetOf({ a: ["echo"], b: ["echo"], c: ["mcp__a__echo"] })
    const view = Naming.view("plain", fleet, fleet)
    expect(toolNames(view)).toEqual(["mcp__a__echo", "mcp__b__echo", "mcp__c__mcp__a__echo"])
    expect(view.tools.get("mcp__a__echo")?.server).toBe("a")
  })

  it("plain: collisions are decided on the whole fleet, and a change of names is a change of the list", () => {
    const alone = fleetOf({ a: ["echo"] })
    const joined = fleetOf({ a: ["echo"], b: ["echo"] })
    // The client may not see b's tool (the policy hides it); a's still becomes qualified.
    const onlyA = (fleet: Catalog.Catalog) =>
      Catalog.make(
        new Map([["a", {
          ...Catalog.emptyLists,
          tools: fleet.tools.filter((e) => e.server === "a").map((e) => e.tool)
        }]])
      )
    const before = Naming.view("plain", alone, onlyA(alone))
    const after = Naming.view("plain", joined, onlyA(joined))
    expect(toolNames(before)).toEqual(["echo"])
    expect(toolNames(after)).toEqual(["mcp__a__echo"])
    expect(changedLists(fingerprints(before), fingerprints(after))).toContain("tools")
  })

  it("plain: a name the gateway serves itself stays qualified", () => {
    const fleet = fleetOf({ a: ["ListMcpResources", "echo"] })
    const view = Naming.view("plain", fleet, fleet, (name) => name === "ListMcpResources")
    expect(toolNames(view)).toEqual(["echo", "mcp__a__ListMcpResources"])
    // Only tools: prompts have no names of the gateway's own.
    expect([...view.prompts.keys()].sort()).toEqual(["ListMcpResources", "echo"])
  })
})
