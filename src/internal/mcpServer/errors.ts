/**
 * The JSON-RPC errors a server answers with.
 *
 * @internal
 */
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import * as Peer from "../../Peer.js"

/** -32602 with `message`. */
export const invalidParams = (message: string): Peer.HandlerError =>
  new Peer.HandlerError({ code: JsonRpc.ErrorCode.InvalidParams, message })

/** -32602 for an unknown tool, in the words of 2025-11-25. */
export const unknownTool = (name: string): Peer.HandlerError => invalidParams(`Unknown tool: ${name}`)

/** -32602 for an unknown prompt. */
export const unknownPrompt = (name: string): Peer.HandlerError => invalidParams(`Unknown prompt: ${name}`)

/** -32002 for a resource nothing serves. */
export const resourceNotFound = (uri: string): Peer.HandlerError =>
  new Peer.HandlerError({
    code: JsonRpc.ErrorCode.ResourceNotFound,
    message: `Resource not found: ${uri}`,
    data: { uri }
  })

/** -32021 (2026-07-28) for capabilities the client did not declare. */
export const missingClientCapability = (required: McpSchema.ClientCapabilities): Peer.HandlerError =>
  new Peer.HandlerError({
    code: McpSchema.ModernErrorCode.MissingRequiredClientCapability,
    message: `The client did not declare ${Object.keys(required).join(", ")}`,
    data: { requiredCapabilities: required }
  })

/** -32601 for a method this session does not serve. */
export const methodNotFound = (method: string): Peer.HandlerError =>
  new Peer.HandlerError({ code: JsonRpc.ErrorCode.MethodNotFound, message: `Method not found: ${method}` })

/** -32601 for a tool call whose task augmentation the tool does not match (2025-11-25). */
export const taskMismatch = (message: string): Peer.HandlerError =>
  new Peer.HandlerError({ code: JsonRpc.ErrorCode.MethodNotFound, message })

/** -32600 for a request before initialize, or a second initialize. */
export const invalidRequest = (message: string): Peer.HandlerError =>
  new Peer.HandlerError({ code: JsonRpc.ErrorCode.InvalidRequest, message })

/** -32603 for a handler's defect: a generic message, never its stack or what it held. */
export const internalError: Peer.HandlerError = new Peer.HandlerError({
  code: JsonRpc.ErrorCode.InternalError,
  message: "Internal error"
})

/**
 * How deep a request's params may nest (objects and arrays within each other). Deeper input
 * is refused before any handler walks it: Schema decoding, JSON Schema checks and copies all
 * recurse, and 100,000 levels overflow the stack (a -32603 RangeError that says nothing).
 * Real arguments stay far below; the SDKs' own validators recurse on the same input.
 */
export const MAX_INPUT_DEPTH = 100

// Whether `value` nests deeper than `limit`: iterative, so the check itself cannot overflow.
const deeperThan = (value: unknown, limit: number): boolean => {
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!
    if (typeof item !== "object" || item === null) continue
    if (depth >= limit) return true
    for (const child of Object.values(item)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1])
    }
  }
  return false
}

/** -32602 for a request whose params nest deeper than {@link MAX_INPUT_DEPTH}, else undefined. */
export const tooDeep = (request: JsonRpc.Request): Peer.HandlerError | undefined =>
  request.params !== undefined && deeperThan(request.params, MAX_INPUT_DEPTH)
    ? invalidParams(
      `${request.method}: the params are nested deeper than ${MAX_INPUT_DEPTH} levels, the limit of this server`
    )
    : undefined
