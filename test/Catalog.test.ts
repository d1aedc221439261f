import { describe, expect, it } from "vitest"
import * as Catalog from "../src/Catalog.js"
import type * as McpSchema from "../src/McpSchema.js"

const tools = (...names: Array<string>): Catalog.ServerLists => ({
  ...Catalog.emptyLists,
  tools: names.map((name): McpSchema.Tool => ({ name, inputSchema: { type: "object" } }))
})

const catalogOf = (servers: Record<string, Catalog.ServerLists>, naming?: Catalog.Naming) =>
  Catalog.make(new Map(Object.entries(servers)), naming)

describe("Catalog", () => {
  it("qualifies names as mcp__server__tool and replaces unsafe characters", () => {
    expect(Catalog.qualify("github", "create_issue")).toBe("mcp__github__create_issue")
    expect(Catalog.qualify("my.server", "read file/v2")).toBe("mcp__my_server__read_file_v2")
    expect(Catalog.qualify("srv", "héllo")).toBe("mcp__srv__h_llo")
    expect(Catalog.qualify("a", "b", { prefix: "", separator: ".", maxLength: 64 })).toBe("a.b")
    expect(Catalog.qualify("a", "b", { prefix: "tools", separator: "-", maxLength: 64 })).toBe("tools-a-b")
  })

  it("shortens long names to 64 characters with a stable hash suffix", () => {
    const long = "x".repeat(100)
    const name = Catalog.qualify("server", long)
    expect(name.length).toBe(64)
    expect(name).toMatch(/^mcp__server__x+_[0-9a-f]{8}$/)
    expect(Catalog.qualify("server", long)).toBe(name)
    expect(Catalog.qualify("server", `${long}y`)).not.toBe(name)
  })

  it("resolves collisions the same way whatever the order, and reports them", () => {
    const one = catalogOf({ "a.b": tools("t"), "a_b": tools("t"), c: tools("t") })
    const two = catalogOf({ c: tools("t"), "a_b": tools("t"), "a.b": tools("t") })
    const names = (catalog: Catalog.Catalog) =>
      catalog.tools.map((entry) => `${entry.server}/${entry.tool.name}=${entry.name}`).sort()
    expect(names(one)).toEqual(names(two))
    // The name's server part is "a_b": that server keeps it, whatever sorts first.
    expect(one.toolsByName.get("mcp__a_b__t")!.server).toBe("a_b")
    const other = one.tools.find((entry) => entry.server === "a.b")!
    expect(other.name).toMatch(/^mcp__a_b__t_[0-9a-f]{6}$/)
    expect(one.collisions).toEqual([{
      kind: "tool",
      name: "mcp__a_b__t",
      entries: [
        { server: "a_b", original: "t", name: "mcp__a_b__t" },
        { server: "a.b", original: "t", name: other.name }
      ]
    }])
  })

  it("maps every qualified name back to its exact server and tool", () => {
    const catalog = catalogOf({
      "x": tools("a.b", "a_b", "a b", "y".repeat(80), "y".repeat(81)),
      "x.": tools("a.b")
    })
    expect(catalog.tools.length).toBe(6)
    expect(new Set(catalog.tools.map((entry) => entry.name)).size).toBe(6)
    for (const entry of catalog.tools) {
      expect(entry.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
      expect(catalog.toolsByName.get(entry.name)).toBe(entry)
    }
    const pairs = catalog.tools.map((entry) => `${entry.server}\u0000${entry.tool.name}`).sort()
    expect(pairs).toEqual(
      ["x\u0000a b", "x\u0000a.b", "x\u0000a_b", `x\u0000${"y".repeat(80)}`, `x\u0000${"y".repeat(81)}`, "x.\u0000a.b"]
        .sort()
    )
  })

  it("names prompts the same way and keeps resources by URI", () => {
    const catalog = catalogOf({
      s: {
        tools: [],
        prompts: [{ name: "review code" }],
        resources: [{ uri: "file:///a", name: "a" }],
        templates: [{ uriTemplate: "file:///{path}", name: "files" }]
      }
    })
    expect(catalog.prompts.map((entry) => entry.name)).toEqual(["mcp__s__review_code"])
    expect(catalog.resources).toEqual([{ server: "s", resource: { uri: "file:///a", name: "a" } }])
    expect(catalog.templates[0]!.server).toBe("s")
  })

  it("diffs lists by key", () => {
    const before = [{ name: "a", v: 1 }, { name: "b", v: 1 }, { name: "c", v: 1 }]
    const after = [{ name: "a", v: 1 }, { name: "c", v: 2 }, { name: "d", v: 1 }]
    expect(Catalog.diff(before, after, (item) => item.name)).toEqual({
      added: [{ name: "d", v: 1 }],
      removed: [{ name: "b", v: 1 }],
      changed: [{ name: "c", v: 2 }]
    })
    expect(Catalog.isEmptyDiff(Catalog.diff(before, before, (item) => item.name))).toBe(true)
  })

  it("suggests close names", () => {
    const names = ["mcp__github__create_issue", "mcp__github__list_issues", "mcp__memory__read_graph"]
    expect(Catalog.suggest("mcp__github__create_isue", names)).toEqual(["mcp__github__create_issue"])
    expect(Catalog.suggest("read_graph", names)).toEqual(["mcp__memory__read_graph"])
    expect(Catalog.suggest("zzz", names)).toEqual([])
  })
})
