/**
 * The request headers of Streamable HTTP at 2026-07-28 (SEP-2243), checked against the body
 * they travel with: `MCP-Protocol-Version` against `_meta`, `Mcp-Method` against the method,
 * `Mcp-Name` against `params.name`/`params.uri`/`params.taskId`, and each `Mcp-Param-{Name}` against the
 * tool argument its `x-mcp-header` annotation names. Intermediaries route on the headers and
 * the server acts on the body, so any disagreement is refused: 400 with a HeaderMismatch
 * (-32020) error. A pure function, for the HTTP serving path to call before the body is
 * handed to the session. Requests of the stateful revisions (no `_meta` revision) need none
 * of these headers, but those they do send must agree too (`checkSent`): a proxy that routes
 * or filters on `Mcp-Method`/`Mcp-Name` must never see one tool named and another called.
 * A body without a revision is otherwise left to the protocol's own -32602.
 *
 * @internal
 */
import { isRecord } from "effect/Predicate"
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { decodeValue, NAME_PARAMS } from "../headerValues.js"

/** The answer to a request whose headers disagree with its body. */
export interface HeaderMismatch {
  readonly status: 400
  readonly body: JsonRpc.Failure
}

/** Request headers by name, as node:http gives them (names in any case). */
export type Headers = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

// A header's value with the whitespace around it dropped (RFC 9110 §5.5); repeats joined.
// node:http gives names in lower case, as `name` is: looked up directly, else searched for.
const lookup = (headers: Headers, name: string): string | undefined => {
  const direct = headers[name]
  if (typeof direct === "string") return direct.trim()
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue
    return (typeof value === "string" ? value : value.join(", ")).trim()
  }
  return undefined
}

// The annotations of each inputSchema seen, walked once: a tool's schema is the same object
// from call to call (a server changes a tool by listing a new one).
const annotations = new WeakMap<object, ReadonlyMap<string, ReadonlyArray<string>>>()
const NONE: ReadonlyMap<string, ReadonlyArray<string>> = new Map()

/** The `x-mcp-header` annotations of an inputSchema: header name (lower case) → property path. */
export const annotatedParams = (inputSchema: unknown): ReadonlyMap<string, ReadonlyArray<string>> => {
  if (!isRecord(inputSchema)) return NONE
  let found = annotations.get(inputSchema)
  if (found === undefined) {
    found = walkAnnotations(inputSchema)
    annotations.set(inputSchema, found)
  }
  return found
}

const walkAnnotations = (inputSchema: object): ReadonlyMap<string, ReadonlyArray<string>> => {
  const found = new Map<string, ReadonlyArray<string>>()
  // Only paths made of `properties` keys count (statically reachable).
  const walk = (schema: unknown, path: ReadonlyArray<string>) => {
    if (!isRecord(schema) || !isRecord(schema.properties)) return
    for (const [key, property] of Object.entries(schema.properties)) {
      if (!isRecord(property)) continue
      const header = property["x-mcp-header"]
      if (typeof header === "string") found.set(header.toLowerCase(), [...path, key])
      walk(property, [...path, key])
    }
  }
  walk(inputSchema, [])
  return found
}

const valueAt = (args: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((value, key) => isRecord(value) ? value[key] : undefined, args)

// Whether a header's (decoded) text stands for the body's primitive value.
const sameValue = (text: string, value: unknown): boolean => {
  if (typeof value === "string") return text === value
  if (typeof value === "boolean") return text === String(value)
  // Integers compare as numbers ("42.0" is 42).
  if (typeof value === "number") return text.trim() !== "" && Number(text) === value
  return false
}

const mismatch = (id: JsonRpc.RequestId, message: string): HeaderMismatch => ({
  status: 400,
  body: {
    jsonrpc: "2.0",
    id,
    error: { code: McpSchema.ModernErrorCode.HeaderMismatch, message: `Header mismatch: ${message}` }
  }
})

// The Mcp-Param-* headers of a tools/call against the arguments they mirror.
const checkParams = (headers: Headers, request: JsonRpc.Request, inputSchema: unknown): string | undefined => {
  for (const [name, path] of annotatedParams(inputSchema)) {
    const header = `mcp-param-${name}`
    const raw = lookup(headers, header)
    const value = valueAt(request.params?.arguments, path)
    if (value === undefined || value === null) {
      if (raw !== undefined) return `${header} is sent but '${path.join(".")}' is not in the arguments`
      continue
    }
    if (raw === undefined) return `${header} is missing; the arguments have '${path.join(".")}'`
    const decoded = decodeValue(raw)
    if (decoded === undefined) return `${header} is malformed`
    if (!sameValue(decoded, value)) return `${header} does not match the argument '${path.join(".")}'`
  }
  return undefined
}

/**
 * The 400 answer to a modern tools/call whose `Mcp-Param-*` headers disagree with the
 * arguments the called tool's `x-mcp-header` annotations name (in `inputSchema`), or
 * undefined: the part of `check` that needs the tool, for the call path where the tool is known.
 */
export const checkToolParams = (
  headers: Headers,
  request: JsonRpc.Request,
  inputSchema: unknown
): HeaderMismatch | undefined => {
  const problem = checkParams(headers, request, inputSchema)
  return problem === undefined ? undefined : mismatch(request.id, problem)
}

/**
 * The 400 answer to a modern request whose headers disagree with its body, or undefined.
 * `inputSchema` is the called tool's, for a tools/call (its `x-mcp-header` annotations).
 */
export const check = (
  headers: Headers,
  request: JsonRpc.Request,
  inputSchema?: unknown
): HeaderMismatch | undefined => {
  const meta = request.params?._meta
  const version = isRecord(meta) ? meta[McpSchema.MetaKey.ProtocolVersion] : undefined
  if (typeof version !== "string") return undefined
  const problem = problemOf(headers, request, version, inputSchema)
  return problem === undefined ? undefined : mismatch(request.id, problem)
}

// Mcp-Method and Mcp-Name against the method and its target; `required`: missing is wrong too.
const methodAndName = (headers: Headers, request: JsonRpc.Request, required: boolean): string | undefined => {
  const method = lookup(headers, "mcp-method")
  if (method === undefined && required) return "Mcp-Method is missing"
  if (method !== undefined && method !== request.method) {
    return `Mcp-Method '${method}' does not match the method '${request.method}'`
  }
  const key = NAME_PARAMS.get(request.method)
  if (key === undefined) return undefined
  const raw = lookup(headers, "mcp-name")
  if (raw === undefined) return required ? "Mcp-Name is missing" : undefined
  const name = decodeValue(raw)
  if (name === undefined) return "Mcp-Name is malformed"
  return name !== request.params?.[key] ? `Mcp-Name '${name}' does not match params.${key}` : undefined
}

const problemOf = (headers: Headers, request: JsonRpc.Request, version: string, inputSchema: unknown) => {
  const headerVersion = lookup(headers, "mcp-protocol-version")
  if (headerVersion === undefined) return "MCP-Protocol-Version is missing"
  if (headerVersion !== version) {
    return `MCP-Protocol-Version '${headerVersion}' does not match _meta's '${version}'`
  }
  const problem = methodAndName(headers, request, true)
  if (problem !== undefined) return problem
  return request.method === McpSchema.Method.ToolsCall ? checkParams(headers, request, inputSchema) : undefined
}

/**
 * The 400 answer to a request of any revision whose `Mcp-Method` or `Mcp-Name` header,
 * when sent, disagrees with its body (a modern request: `check`, which wants them all).
 */
export const checkSent = (headers: Headers, request: JsonRpc.Request): HeaderMismatch | undefined => {
  const problem = methodAndName(headers, request, false)
  return problem === undefined ? undefined : mismatch(request.id, problem)
}
