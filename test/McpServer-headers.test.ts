import { describe, expect, it } from "vitest"
import { decodeValue, encodeValue } from "../src/internal/headerValues.js"
import * as Headers from "../src/internal/mcpServer/headers.js"
import type * as JsonRpc from "../src/JsonRpc.js"

const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {}
}
const request = (method: string, params: Record<string, unknown> = {}): JsonRpc.Request => ({
  jsonrpc: "2.0",
  id: 7,
  method,
  params: { ...params, _meta: meta }
})
const base = { "mcp-protocol-version": "2026-07-28" }
const base64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`

const inputSchema = {
  type: "object",
  properties: {
    region: { type: "string", "x-mcp-header": "Region" },
    limit: { type: "integer", "x-mcp-header": "Limit" },
    options: { type: "object", properties: { dry: { type: "boolean", "x-mcp-header": "Dry" } } },
    rows: { type: "array", items: { type: "object", properties: { id: { type: "string", "x-mcp-header": "Id" } } } }
  }
}
const call = (args: Record<string, unknown>) => request("tools/call", { name: "execute_sql", arguments: args })

const code = (answer: Headers.HeaderMismatch | undefined) => answer?.body.error.code

describe("McpServer headers (2026-07-28)", () => {
  it("accepts headers that agree with the body, names in any case, values trimmed", () => {
    expect(Headers.check({ ...base, "Mcp-Method": "tools/list" }, request("tools/list"))).toBeUndefined()
    expect(Headers.check({ "MCP-PROTOCOL-VERSION": "2026-07-28", "MCP-METHOD": " tools/list " }, request("tools/list")))
      .toBeUndefined()
    const read = request("resources/read", { uri: "file:///a b.txt" })
    expect(Headers.check({ ...base, "mcp-method": "resources/read", "mcp-name": base64("file:///a b.txt") }, read))
      .toBeUndefined()
  })

  it("refuses a missing or different revision, method or name with 400 and -32020, echoing the id", () => {
    const answer = Headers.check({ "mcp-method": "tools/list" }, request("tools/list"))
    expect(answer).toMatchObject({ status: 400, body: { jsonrpc: "2.0", id: 7, error: { code: -32020 } } })
    expect(code(Headers.check({ ...base, "mcp-protocol-version": "2025-11-25" }, request("tools/list")))).toBe(-32020)
    expect(code(Headers.check(base, request("tools/list")))).toBe(-32020)
    expect(code(Headers.check({ ...base, "mcp-method": "prompts/list" }, request("tools/list")))).toBe(-32020)
    expect(code(Headers.check({ ...base, "mcp-method": "TOOLS/LIST" }, request("tools/list")))).toBe(-32020)
    const get = request("prompts/get", { name: "greet" })
    expect(code(Headers.check({ ...base, "mcp-method": "prompts/get" }, get))).toBe(-32020)
    expect(code(Headers.check({ ...base, "mcp-method": "prompts/get", "mcp-name": "other" }, get))).toBe(-32020)
    expect(Headers.check({ ...base, "mcp-method": "prompts/get", "mcp-name": "  greet " }, get)).toBeUndefined()
  })

  it("leaves requests of the stateful revisions, and bodies without a revision, to the protocol", () => {
    const legacy: JsonRpc.Request = { jsonrpc: "2.0", id: 1, method: "tools/list" }
    expect(Headers.check({ "mcp-protocol-version": "2025-11-25" }, legacy)).toBeUndefined()
    expect(Headers.check(base, { ...legacy, params: { _meta: {} } })).toBeUndefined()
  })

  it("checks Mcp-Param-* headers against the annotated arguments", () => {
    const headers = { ...base, "mcp-method": "tools/call", "mcp-name": "execute_sql" }
    const args = { region: "us-west1", limit: 42, options: { dry: true } }
    const full = { ...headers, "Mcp-Param-Region": "us-west1", "mcp-param-limit": "42.0", "mcp-param-dry": "true" }
    expect(Headers.check(full, call(args), inputSchema)).toBeUndefined()
    // An absent or null argument: no header expected; a header without its argument is refused.
    expect(Headers.check(headers, call({ region: null }), inputSchema)).toBeUndefined()
    expect(code(Headers.check({ ...headers, "mcp-param-region": "x" }, call({}), inputSchema))).toBe(-32020)
    // A header left out while the argument is there, or a different value.
    expect(code(Headers.check({ ...full, "Mcp-Param-Region": undefined }, call(args), inputSchema))).toBe(-32020)
    expect(code(Headers.check({ ...full, "mcp-param-limit": "43" }, call(args), inputSchema))).toBe(-32020)
    expect(code(Headers.check({ ...full, "mcp-param-dry": "false" }, call(args), inputSchema))).toBe(-32020)
    // Only statically reachable properties are annotations: `rows[].id` is not.
    expect([...Headers.annotatedParams(inputSchema).keys()]).toEqual(["region", "limit", "dry"])
  })

  it("decodes the Base64 sentinel, refuses malformed values, and takes other values literally", () => {
    const headers = { ...base, "mcp-method": "tools/call", "mcp-name": "execute_sql" }
    const greet = (region: string) =>
      Headers.check({ ...headers, "mcp-param-region": region }, call({ region: "Hello, 世界" }), inputSchema)
    expect(greet(base64("Hello, 世界"))).toBeUndefined()
    expect(code(greet("=?base64?SGVsbG8!?="))).toBe(-32020)
    expect(code(greet("=?base64?SGVsbG8?="))).toBe(-32020)
    expect(decodeValue("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=")).toBe("=?base64?literal?=")
    expect(decodeValue("base64?plain")).toBe("base64?plain")
    expect(decodeValue("bad\nvalue")).toBeUndefined()
    // What the client encodes, the server decodes.
    for (const value of ["us-west1", "Hello, 世界", " padded ", "=?base64?literal?="]) {
      expect(decodeValue(encodeValue(value))).toBe(value)
    }
  })
})
