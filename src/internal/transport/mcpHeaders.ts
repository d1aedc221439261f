/**
 * The request metadata headers of Streamable HTTP in revision 2026-07-28: what a request's
 * body says mirrored into headers, so intermediaries can route without parsing it —
 * `MCP-Protocol-Version` (from `_meta`), `Mcp-Method`, `Mcp-Name` (tools/call,
 * resources/read, prompts/get) and `Mcp-Param-*` (tool arguments whose schema property
 * carries `x-mcp-header`). Values that are not plain header-safe ASCII go as the Base64
 * sentinel `=?base64?…?=`. A request of an earlier revision (no revision in its `_meta`)
 * gets none of them. Also here: the check of a tool's `x-mcp-header` annotations, which
 * decides which tools a client must refuse.
 *
 * @internal
 */
import { isRecord } from "effect/Predicate"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { encodeValue, NAME_PARAMS } from "../headerValues.js"

/** One tool argument mirrored into a header: where it is in the arguments, and the header. */
export interface Mirror {
  readonly path: ReadonlyArray<string>
  readonly header: string
}

/** A tool's mirrored arguments, or why its annotations are invalid. */
export type Annotations =
  | { readonly _tag: "Valid"; readonly mirrors: ReadonlyArray<Mirror> }
  | { readonly _tag: "Invalid"; readonly reason: string }

// RFC 9110 `tchar`: the characters of a header name.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const PRIMITIVES: ReadonlySet<unknown> = new Set(["string", "integer", "boolean"])
// Keywords whose values are data, not schemas: an `x-mcp-header` key inside them is no annotation.
const DATA_KEYWORDS: ReadonlySet<string> = new Set(["const", "default", "enum", "examples"])

// An argument's header value: strings, safe integers and booleans; nothing for the rest.
const paramValue = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "string":
      return encodeValue(value)
    case "boolean":
      return value ? "true" : "false"
    case "number":
      return Number.isSafeInteger(value) ? String(value) : undefined
    default:
      return undefined
  }
}

// Every `x-mcp-header` key in a schema, wherever it is (property names are not keys).
const countAnnotations = (schema: unknown): number => {
  if (Array.isArray(schema)) return schema.reduce((n: number, item) => n + countAnnotations(item), 0)
  if (!isRecord(schema)) return 0
  let count = 0
  for (const [key, value] of Object.entries(schema)) {
    if (key === "x-mcp-header") count++
    else if (key === "properties" && isRecord(value)) {
      for (const property of Object.values(value)) count += countAnnotations(property)
    } else if (!DATA_KEYWORDS.has(key)) count += countAnnotations(value)
  }
  return count
}

// The annotations reachable through `properties` alone, checked one by one.
const collect = (
  schema: Record<string, unknown>,
  path: ReadonlyArray<string>,
  mirrors: Array<Mirror>,
  seen: Set<string>
): string | undefined => {
  const properties = schema.properties
  if (!isRecord(properties)) return undefined
  for (const [name, property] of Object.entries(properties)) {
    if (!isRecord(property)) continue
    const at = [...path, name]
    const header = property["x-mcp-header"]
    if (header !== undefined) {
      const where = `property '${at.join(".")}'`
      if (typeof header !== "string" || header === "") return `${where}: x-mcp-header is empty or not a string`
      if (!TOKEN.test(header)) return `${where}: x-mcp-header '${header}' is not a valid header name`
      if (seen.has(header.toLowerCase())) return `${where}: x-mcp-header '${header}' is used twice`
      if (!PRIMITIVES.has(property.type)) {
        return `${where}: x-mcp-header on a ${
          JSON.stringify(property.type ?? "untyped")
        } value (string, integer or boolean only)`
      }
      seen.add(header.toLowerCase())
      mirrors.push({ path: at, header: `mcp-param-${header}` })
    }
    const nested = collect(property, at, mirrors, seen)
    if (nested !== undefined) return nested
  }
  return undefined
}

/**
 * A tool's `x-mcp-header` annotations: the arguments to mirror, or why the tool must be
 * refused (an empty, malformed or repeated name, a non-primitive value, an annotation not
 * reachable through `properties` alone).
 */
export const annotations = (inputSchema: unknown): Annotations => {
  const total = countAnnotations(inputSchema)
  if (total === 0) return { _tag: "Valid", mirrors: [] }
  const mirrors: Array<Mirror> = []
  const invalid = isRecord(inputSchema) ? collect(inputSchema, [], mirrors, new Set()) : undefined
  if (invalid !== undefined) return { _tag: "Invalid", reason: invalid }
  if (mirrors.length < total) {
    return { _tag: "Invalid", reason: "an x-mcp-header not reachable through properties alone" }
  }
  return { _tag: "Valid", mirrors }
}

/** The revision a request's `_meta` names, when it is one of 2026-07-28 or later. */
export const modernVersion = (message: JsonRpc.Message): string | undefined => {
  const version = ("params" in message ? (message.params?._meta as Record<string, unknown> | undefined) : undefined)
    ?.[McpSchema.MetaKey.ProtocolVersion]
  return typeof version === "string" ? version : undefined
}

/** What a request names in `Mcp-Name` (its tool, prompt, URI or task), if its method names one. */
export const targetOf = (message: JsonRpc.Request): string | undefined => {
  const field = NAME_PARAMS.get(message.method)
  const name = field === undefined ? undefined : message.params?.[field]
  return typeof name === "string" ? name : undefined
}

/**
 * The headers of a request of revision `version`: `base` plus the mirrored ones; the tool
 * arguments to mirror come from `mirrorsOf` (the tools as last listed).
 */
export const requestHeaders = (
  base: Readonly<Record<string, string>>,
  message: JsonRpc.Request,
  version: string,
  mirrorsOf: (tool: string) => ReadonlyArray<Mirror> | undefined
): Record<string, string> => {
  const headers: Record<string, string> = { ...base, "mcp-protocol-version": version, "mcp-method": message.method }
  const params = message.params
  const name = targetOf(message)
  if (name !== undefined) headers["mcp-name"] = encodeValue(name)
  if (message.method !== "tools/call" || name === undefined) return headers
  const mirrors = mirrorsOf(name)
  if (mirrors === undefined) return headers
  for (const mirror of mirrors) {
    let value: unknown = params?.arguments
    for (const key of mirror.path) value = isRecord(value) ? value[key] : undefined
    const encoded = paramValue(value)
    if (encoded !== undefined) headers[mirror.header] = encoded
  }
  return headers
}
