/**
 * `McpSchema.decodeUnknown` compiles its decoder on first use, once: modules define their
 * decoders up front, and a process that never decodes a message kind pays nothing for it.
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import * as McpSchema from "../src/McpSchema.js"

/** A schema that counts how often a decoder is compiled from it. */
const counted = () => {
  let compiled = 0
  const schema = Schema.declare([], {
    decode: () => {
      compiled++
      return (input) => ParseResult.succeed(input)
    },
    encode: () => (input) => ParseResult.succeed(input)
  })
  return { schema: Schema.Struct({ value: schema }), compiled: () => compiled }
}

describe("McpSchema.decodeUnknown", () => {
  it("compiles nothing until the first decode, then compiles once", () => {
    const { compiled, schema } = counted()
    const decode = McpSchema.decodeUnknown(schema)
    expect(compiled()).toBe(0)
    const first = decode({ value: 1, extra: true })
    expect(first._tag === "Right" && first.right).toEqual({ value: 1, extra: true })
    expect(decode({ value: 2 })._tag).toBe("Right")
    expect(compiled()).toBe(1)
  })

  it("keeps parseOptions: unknown fields survive, a missing key fails", () => {
    const decode = McpSchema.decodeUnknown(McpSchema.Implementation)
    const right = decode({ name: "s", version: "1", vendor: { x: 1 } })
    expect(right._tag === "Right" && right.right).toEqual({ name: "s", version: "1", vendor: { x: 1 } })
    expect(decode({ name: "s" })._tag).toBe("Left")
  })
})
