/**
 * The JSON-RPC errors the gateway answers with besides McpServer's: unknown names (with the
 * closest ones), and fleet errors as the client of a routed request sees them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Catalog from "../../Catalog.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
import * as Peer from "../../Peer.js"

/** An unknown tool or prompt name: -32602, with the closest names the client may use. */
export const unknownName = (what: "tool" | "prompt", name: string, names: Iterable<string>) =>
  McpServer.invalidParams(
    McpError.notFound(undefined, { what, name, suggestions: Catalog.suggest(name, names) })
      .message
  )

/** A fleet error as the JSON-RPC error of a routed request. */
export const handlerError = (error: McpError.McpError): Peer.HandlerError => {
  const reason = error.reason
  switch (reason._tag) {
    // The server's own error, passed through as it sent it.
    case "Protocol":
      return new Peer.HandlerError({
        code: reason.code,
        message: reason.message,
        ...(reason.data === undefined ? {} : { data: reason.data })
      })
    case "NotFound":
      return new Peer.HandlerError({
        code: reason.what === "resource" ? JsonRpc.ErrorCode.ResourceNotFound : JsonRpc.ErrorCode.InvalidParams,
        message: error.message
      })
    default:
      return new Peer.HandlerError({ code: JsonRpc.ErrorCode.InternalError, message: error.message })
  }
}

/**
 * A failed tool call as the client sees it. An unknown tool and the server's own JSON-RPC
 * error are protocol errors; a call the fleet could not carry out (server down, timeout,
 * refused by policy, arguments rejected) is a tool execution error, a result with
 * `isError: true`, so the model reads what went wrong and may try again.
 */
export const toolFailure = (error: McpError.McpError): Effect.Effect<McpSchema.CallToolResult, Peer.HandlerError> =>
  error.reason._tag === "NotFound" || error.reason._tag === "Protocol"
    ? Effect.fail(handlerError(error))
    : Effect.succeed(McpServer.toolError(error.message))
