/**
 * Modern (2026-07-28) requests on the Streamable HTTP endpoint. A POST without
 * Mcp-Session-Id whose one message is a modern request (`_meta` naming its revision, or a
 * method only that revision has) is answered statelessly: in an HTTP session of its own, never
 * in the table and never named to the client, ended when its response closes — so closing the
 * response cancels the request, as the revision says. Its headers are checked against its body
 * first (`headers.ts`; a tool call's `Mcp-Param-*` headers in the call's path, where the
 * tool is found: `stateless.ts`); an error
 * answered as JSON gets the status the revision gives it. Stateful clients on the endpoint are
 * unaffected: they name their session.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type * as http from "node:http"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import type * as McpServer from "../../../McpServer.js"
import * as Headers from "../headers.js"
import * as Stateless from "../stateless.js"
import type { Caller, RequestHeaders } from "./guard.js"
import type * as HttpSession from "./httpSession.js"
import type { Body } from "./post.js"
import * as Response from "./response.js"
import type { SessionTable } from "./sessionTable.js"

/** The modern request a POST carries alone and outside any session, if `server` answers one. */
export const modernRequest = (
  server: McpServer.McpServer,
  headers: RequestHeaders,
  body: Body
): JsonRpc.Request | undefined => {
  const message = body.messages[0]
  if (!server.modern || headers["mcp-session-id"] !== undefined || body.batch || body.messages.length !== 1) {
    return undefined
  }
  return message !== undefined && JsonRpc.isRequest(message) && Stateless.isModern(message) ? message : undefined
}

// The JSON-RPC errors whose HTTP status the modern revision fixes: -32601 is 404, so a client
// tells an unknown method from a legacy server's 404; bad params, header mismatches, a missing
// client capability and an unsupported revision are 400.
const STATUS: Readonly<Record<number, number>> = {
  [JsonRpc.ErrorCode.MethodNotFound]: 404,
  [JsonRpc.ErrorCode.InvalidParams]: 400,
  [McpSchema.ModernErrorCode.HeaderMismatch]: 400,
  [McpSchema.ModernErrorCode.MissingRequiredClientCapability]: 400,
  [McpSchema.ModernErrorCode.UnsupportedProtocolVersion]: 400
}

/** The HTTP status of a modern answer sent as JSON. */
export const statusOf = (message: JsonRpc.Message): number =>
  "error" in message ? STATUS[message.error.code] ?? 200 : 200

const mismatch = (refused: Headers.HeaderMismatch) => Response.json(refused.status, refused.body)

/**
 * Answers a modern request: its headers checked, then a session of its own that the response
 * outlives by nothing; `answer` writes the answer (JSON with `statusOf`, or SSE).
 */
export const handle = (
  response: http.ServerResponse,
  table: SessionTable,
  request: JsonRpc.Request,
  requestHeaders: RequestHeaders,
  headers: Record<string, string>,
  runner: Response.Runner,
  caller: Caller | undefined,
  answer: (session: HttpSession.HttpSession) => void
): void => {
  const refused = Headers.check(requestHeaders, request)
  if (refused !== undefined) return Response.send(response, mismatch(refused), headers)
  runner.fork(
    response,
    Effect.gen(function*() {
      // The tool call's Mcp-Param-* headers are checked where the call finds its tool.
      const session = yield* table.openAlone(requestHeaders, caller)
      const end = Scope.close(session.scope, Exit.void)
      if (Response.isGone(response)) return yield* end
      response.once("close", () => runner.fork(response, end))
      answer(session)
    })
  )
}
