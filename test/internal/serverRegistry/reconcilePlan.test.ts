import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { plan } from "../../../src/internal/serverRegistry/reconcilePlan.js"
import * as ServerSpec from "../../../src/ServerSpec.js"

const spec = (name: string, key = "v1"): ServerSpec.ServerSpec => ({
  name,
  transport: { type: "custom", key, connect: Effect.die("not connected") }
})

describe("reconcilePlan", () => {
  it("sorts the desired servers into added, changed, unchanged and removed", () => {
    const running = new Map([["keep", ServerSpec.hash(spec("keep"))], ["edit", ServerSpec.hash(spec("edit"))], [
      "drop",
      "x"
    ]])
    const result = plan(running, [spec("keep"), spec("edit", "v2"), spec("new")])
    expect(result.added.map((s) => s.name)).toEqual(["new"])
    expect(result.changed.map((s) => s.name)).toEqual(["edit"])
    expect(result.unchanged).toEqual(["keep"])
    expect(result.removed).toEqual(["drop"])
    expect(result.duplicates).toEqual([])
  })

  it("uses the last spec of a name configured twice, and says so", () => {
    const result = plan(new Map(), [spec("twice", "a"), spec("twice", "b")])
    expect(result.duplicates).toEqual(["twice"])
    expect(result.added).toHaveLength(1)
    expect(result.added[0].transport).toMatchObject({ key: "b" })
  })
})
