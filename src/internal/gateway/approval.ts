/**
 * `ask` rules answered by the calling client: the call's approval asked with
 * `elicitation/create`, a form of one yes/no field, on the call's own stream.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpSchema from "../../McpSchema.js"
import type * as McpServer from "../../McpServer.js"
import type * as Policy from "../../Policy.js"

// Enough of the arguments for the user to know what they approve.
const MAX_ARGUMENTS_CHARS = 500

const clip = (text: string) => text.length > MAX_ARGUMENTS_CHARS ? `${text.slice(0, MAX_ARGUMENTS_CHARS)}…` : text

const requestedSchema = {
  type: "object",
  properties: { approve: { type: "boolean", title: "Run this tool call", default: false } },
  required: ["approve"]
}

/**
 * The approver of the call of `ctx`, asked through that call: allowed only when the client
 * accepts with `approve: true`; a decline, a cancel, or no answer denies, with what happened.
 */
export const askClient = (ctx: McpServer.RequestContext): Policy.Approval["approve"] => (request) =>
  ctx.requestClient(McpSchema.Method.ElicitationCreate, {
    message: `Allow the tool '${request.tool}' of server '${request.server}' to run with ${
      clip(JSON.stringify(request.arguments))
    }?`,
    requestedSchema
  }).pipe(
    Effect.map((result): Policy.ApprovalAnswer => {
      const content = result.content as { approve?: unknown } | undefined
      if (result.action === "accept" && content?.approve === true) return { decision: "allow" }
      return {
        decision: "deny",
        reason: result.action === "accept"
          ? "the client did not approve"
          : `the client answered ${String(result.action)}`
      }
    }),
    Effect.catchAll((error) =>
      Effect.succeed<Policy.ApprovalAnswer>({
        decision: "deny",
        reason: `the client could not be asked: ${error.message}`
      })
    )
  )
