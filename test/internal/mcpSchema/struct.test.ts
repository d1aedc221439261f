/**
 * `struct` builds in one step what `Schema.Struct(fields, ...records).annotations(a)` builds in
 * two: the same AST and a struct class that behaves as Effect's own (fields, records, make,
 * pick, omit, annotations). Every struct McpSchema exports is checked against Effect's build.
 */
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { describe, expect, it } from "vitest"
import { struct } from "../../../src/internal/mcpSchema/struct.js"
import * as McpSchema from "../../../src/McpSchema.js"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** What Effect builds of the same struct: fields, records and annotations taken from `schema`. */
const effects = (schema: { fields: Schema.Struct.Fields; records: Schema.IndexSignature.Records; ast: AST.AST }) =>
  Schema.Struct(schema.fields, ...schema.records as Schema.IndexSignature.NonEmptyRecords).annotations(
    schema.ast.annotations as never
  )

describe("struct", () => {
  it("builds Effect's AST for every struct McpSchema exports", () => {
    const structs = Object.entries(McpSchema).filter(([, value]) =>
      Schema.isSchema(value) && AST.isTypeLiteral(value.ast) && "fields" in value
    ) as Array<[string, Parameters<typeof effects>[0]]>
    expect(structs.length).toBeGreaterThan(60)
    for (const [name, schema] of structs) {
      expect({ name, ast: schema.ast }).toEqual({ name, ast: effects(schema).ast })
    }
  })

  it("is a struct class: fields, records, make, pick, omit and annotations work as Effect's", () => {
    const fields = { name: Schema.String, size: Schema.optional(Schema.Number) }
    const built = struct(fields, { identifier: "Sized" }, JsonObject)
    expect(built.ast).toEqual(Schema.Struct(fields, JsonObject).annotations({ identifier: "Sized" }).ast)
    expect(built.fields).toEqual(fields)
    expect(built.records).toEqual([JsonObject])
    expect(built.make({ name: "a", extra: 1 })).toEqual({ name: "a", extra: 1 })
    expect(() => built.make({ size: 1 } as never)).toThrow(/name/)
    const closed = struct(fields, { identifier: "Sized" })
    expect(closed.ast).toEqual(Schema.Struct(fields).annotations({ identifier: "Sized" }).ast)
    expect(Object.keys(closed.pick("size").fields)).toEqual(["size"])
    expect(Object.keys(closed.omit("size").fields)).toEqual(["name"])
    const titled = built.annotations({ title: "sized" })
    expect(titled.fields).toEqual(fields)
    expect(titled.ast).toEqual(
      Schema.Struct(fields, JsonObject).annotations({ identifier: "Sized" }).annotations({ title: "sized" }).ast
    )
    expect(Schema.decodeUnknownSync(built)({ name: "a", size: 2, more: true })).toEqual({
      name: "a",
      size: 2,
      more: true
    })
  })

  it("leaves a struct whose field transforms, or whose record key is a literal, to Schema.Struct", () => {
    const defaulted = { n: Schema.optionalWith(Schema.Number, { default: () => 1 }) }
    const withDefault = struct(defaulted)
    expect(withDefault.ast).toEqual(Schema.Struct(defaulted).ast)
    expect(Schema.decodeUnknownSync(withDefault)({})).toEqual({ n: 1 })
    const keyed = Schema.Record({ key: Schema.Literal("a"), value: Schema.Number })
    const literalKey = struct({ b: Schema.String }, undefined, keyed)
    expect(literalKey.ast).toEqual(Schema.Struct({ b: Schema.String }, keyed).ast)
    expect(Schema.decodeUnknownSync(literalKey)({ a: 1, b: "x" })).toEqual({ a: 1, b: "x" })
  })
})
