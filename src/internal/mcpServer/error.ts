/**
 * The error of what a handler asks of its client, re-exported by `McpServer`.
 *
 * @internal
 */
import * as Schema from "effect/Schema"

/**
 * A failure of what a handler asked of the client: `NotDeclared` when the client did not
 * declare the capability the request needs (nothing was sent), `Client` when the request
 * failed (the client's error, a timeout, the connection gone; the McpError is the
 * `cause`), `InvalidAnswer` when the client's answer does not match its schema.
 */
export class McpServerError extends Schema.TaggedError<McpServerError>()("McpServerError", {
  reason: Schema.Literal("NotDeclared", "Client", "InvalidAnswer"),
  method: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}
