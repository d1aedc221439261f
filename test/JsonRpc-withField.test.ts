// `JsonRpc.withField` makes what `{ ...object, [key]: value }` makes, on the per-message paths
// (a request's progress token, a modern request's `_meta`).
import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as JsonRpc from "../src/JsonRpc.js"

describe("JsonRpc.withField", () => {
  it("equals the spread with the field, and leaves the object as it was", () =>
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.string(), fc.jsonValue(), (object, key, value) => {
        const before = JSON.stringify(object)
        const copy = JsonRpc.withField(object, key, value)
        expect(copy).toStrictEqual({ ...object, [key]: value })
        expect(JSON.stringify(copy)).toBe(JSON.stringify({ ...object, [key]: value }))
        expect(JSON.stringify(object)).toBe(before)
        expect(copy).not.toBe(object)
      })
    ))

  it("keeps an own __proto__ from JSON.parse as a field, not as the copy's prototype", () => {
    const parsed = JSON.parse(`{"__proto__":{"polluted":true},"name":"echo"}`) as Record<string, unknown>
    const copy = JsonRpc.withField(parsed, "_meta", { progressToken: 1 })
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined()
    expect(JSON.parse(JSON.stringify(copy))).toStrictEqual(
      JSON.parse(`{"__proto__":{"polluted":true},"name":"echo","_meta":{"progressToken":1}}`)
    )
  })

  it("copies nothing from what is not an object", () => {
    expect(JsonRpc.withField(undefined, "progressToken", 3)).toStrictEqual({ progressToken: 3 })
    expect(JsonRpc.withField(null, "progressToken", 3)).toStrictEqual({ progressToken: 3 })
    expect(JsonRpc.withField("text", "progressToken", 3)).toStrictEqual({ progressToken: 3 })
  })
})

describe("JsonRpc.withField's key", () => {
  it("sets __proto__ as a field, as the spread does, whatever its value", () => {
    for (const value of [0, null, "text", { polluted: true }]) {
      const copy = JsonRpc.withField({ name: "echo" }, "__proto__", value)
      expect(copy).toStrictEqual({ name: "echo", ["__proto__"]: value })
      expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    }
  })
})
