/**
 * The JSON-RPC errors a server answers with.
 *
 * @internal
 */
import * as JsonRpc from "../../JsonRpc.js"
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
