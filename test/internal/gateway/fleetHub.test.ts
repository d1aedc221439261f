import { describe, expect, it } from "@effect/vitest"
import * as Catalog from "../../../src/Catalog.js"
import { changedLists, fingerprints as fingerprintsOf } from "../../../src/internal/gateway/fleetHub.js"
import * as Naming from "../../../src/internal/gateway/naming.js"

const fingerprints = (catalog: Catalog.Catalog) => fingerprintsOf(Naming.view("qualified", catalog, catalog))

const withTools = (...names: Array<string>) =>
  Catalog.make(
    new Map([["alpha", {
      ...Catalog.emptyLists,
      tools: names.map((name) => ({ name, inputSchema: { type: "object" as const } }))
    }]])
  )

describe("gateway fleet", () => {
  it("only lists whose visible content changed are announced", () => {
    const before = fingerprints(withTools("a", "b"))
    expect(changedLists(before, fingerprints(withTools("a", "b")))).toEqual([])
    expect(changedLists(before, fingerprints(withTools("a")))).toEqual(["tools"])
    expect(changedLists(before, fingerprints(Catalog.empty))).toEqual(["tools"])
    expect(changedLists(
      fingerprints(Catalog.empty),
      fingerprints(Catalog.make(
        new Map([["alpha", {
          ...Catalog.emptyLists,
          prompts: [{ name: "p" }],
          resources: [{ uri: "a://b", name: "b" }]
        }]])
      ))
    )).toEqual(["resources", "prompts"])
  })
})
