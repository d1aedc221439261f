/**
 * McpSchema's structs, each built in one step into the class and AST that
 * `Schema.Struct(fields, ...records).annotations(annotations)` builds in two.
 *
 * The two-step way does work it then drops: `Schema.Struct` derives a type side by walking
 * each field's whole schema (kept only when a field transforms, which none of McpSchema's do),
 * so structs nested in structs were walked again at every level (~2,700 AST nodes at import,
 * enough for V8 to optimize the walk before the first connection), and the annotated copy
 * makes two classes more per struct.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/**
 * The AST `Schema.Struct` makes of `fields` and `records`; undefined when a field transforms or
 * a record's key is not an index (string, symbol, template): `Schema.Struct` builds those.
 */
const typeLiteral = (
  fields: Schema.Struct.Fields,
  records: Schema.IndexSignature.Records
): AST.TypeLiteral | undefined => {
  const properties: Array<AST.PropertySignature> = []
  for (const key of Reflect.ownKeys(fields)) {
    const field = fields[key]!
    if (!Schema.isPropertySignature(field)) {
      properties.push(new AST.PropertySignature(key, field.ast, false, true))
    } else if (field.ast._tag === "PropertySignatureDeclaration") {
      const { annotations, isOptional, type } = field.ast
      properties.push(new AST.PropertySignature(key, type, isOptional, true, annotations))
    } else {
      return undefined
    }
  }
  const indexes: Array<AST.IndexSignature> = []
  for (const { key, value } of records) {
    if (!AST.isParameter(key.ast)) return undefined
    indexes.push(new AST.IndexSignature(key.ast, value.ast, true))
  }
  return new AST.TypeLiteral(properties, indexes)
}

// A struct's `annotations` makes its class from `this.fields`, `this.records` and `this.ast`
// (test/internal/mcpSchema/struct.test.ts holds it to `Schema.Struct`'s own result).
const emptyStruct = Schema.Struct({})

/** `Schema.Struct(fields).annotations(annotations)`, in one step. */
export function struct<Fields extends Schema.Struct.Fields>(
  fields: Fields,
  annotations?: Schema.Annotations.Schema<Schema.Struct.Type<Fields>>
): Schema.Struct<Fields>
/** `Schema.Struct(fields, ...records).annotations(annotations)`, in one step. */
export function struct<
  Fields extends Schema.Struct.Fields,
  const Records extends Schema.IndexSignature.NonEmptyRecords
>(
  fields: Fields,
  annotations: Schema.Annotations.Schema<Schema.TypeLiteral.Type<Fields, Records>> | undefined,
  ...records: Records
): Schema.TypeLiteral<Fields, Records>
export function struct(
  fields: Schema.Struct.Fields,
  annotations: Schema.Annotations.Schema<any> = {},
  ...records: Schema.IndexSignature.Records
): unknown {
  const ast = typeLiteral(fields, records)
  return ast === undefined
    ? Schema.Struct(fields, ...records as Schema.IndexSignature.NonEmptyRecords).annotations(annotations)
    : emptyStruct.annotations.call({ fields, records, ast }, annotations)
}
