import { describe, expect, it } from "@effect/vitest"
import * as Catalog from "../../../src/Catalog.js"
import { ownerOf, templateRegex } from "../../../src/internal/gateway/resources.js"

const lists = (resources: Array<string>, templates: Array<string>): Catalog.ServerLists => ({
  ...Catalog.emptyLists,
  resources: resources.map((uri) => ({ uri, name: uri })),
  templates: templates.map((uriTemplate) => ({ uriTemplate, name: uriTemplate }))
})

describe("gateway resources", () => {
  it("templates match as RFC 6570 expands them", () => {
    expect(templateRegex("file:///{path}").test("file:///a")).toBe(true)
    expect(templateRegex("file:///{path}").test("file:///a/b")).toBe(false)
    expect(templateRegex("file:///{+path}").test("file:///a/b")).toBe(true)
    expect(templateRegex("db://rows{?limit,offset}").test("db://rows?limit=1")).toBe(true)
    expect(templateRegex("db://rows{?limit,offset}").test("db://rows")).toBe(true)
    expect(templateRegex("a.b://{x}").test("aXb://y")).toBe(false)
  })

  it("the owner lists the URI, else has a matching template, else is the only one with resources", () => {
    const two = Catalog.make(new Map([["alpha", lists(["alpha://doc"], [])], ["beta", lists([], ["beta://{id}"])]]))
    expect(ownerOf(two, "alpha://doc")).toBe("alpha")
    expect(ownerOf(two, "beta://7")).toBe("beta")
    expect(ownerOf(two, "gamma://x")).toBeUndefined()
    const one = Catalog.make(new Map([["alpha", lists(["alpha://doc"], [])]]))
    expect(ownerOf(one, "alpha://other")).toBe("alpha")
    expect(ownerOf(Catalog.empty, "alpha://doc")).toBeUndefined()
  })
})
