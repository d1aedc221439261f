/**
 * The one rule for a tool call that may have reached a server that then died (its process
 * exited or its connection closed after the call was sent; in a cluster, its runner was
 * lost): it is never sent again, since tools are not idempotent, unless the tool is annotated
 * `idempotentHint: true` or `readOnlyHint: true`, and then it is sent once more, on the next
 * connection (within the call's ready wait). Otherwise it fails `InDoubt`, naming the server
 * and the tool and saying it may have run. A call refused `unsent` never reached the server
 * and is not judged here: the call gate sends it on (`callGate.ts`).
 *
 * The single process applies it in `routing.ts`; the cluster applies `mayRetry` and
 * `inDoubt` to the calls of a runner it lost.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"

/**
 * Whether a call of `tool` that may have run may be sent again: its annotations say a second
 * run does nothing more (`idempotentHint`) or nothing at all (`readOnlyHint`). A tool the
 * server no longer lists is not retried.
 */
export const mayRetry = (tool: Pick<McpSchema.Tool, "annotations"> | undefined): boolean =>
  tool?.annotations?.idempotentHint === true || tool?.annotations?.readOnlyHint === true

/**
 * Whether a call failed because its connection ended after it was sent: the server may have
 * run it. A session an HTTP server had forgotten processed nothing, and an `unsent` refusal
 * reached nothing: neither is in doubt.
 */
export const diedMidCall = (error: McpError.McpError): boolean =>
  error.reason._tag === "Closed" && error.reason.unsent !== true && error.reason.sessionExpired !== true

/**
 * The failure of a call of `tool` on `server` that may have run and is not sent again;
 * `what` says what ended (the connection's error, or the lost runner).
 */
export const inDoubt = (server: string, tool: string, what: string, cause?: unknown): McpError.McpError =>
  McpError.inDoubt(server, { tool, message: what }, cause)

/**
 * Runs `call` (one tool call, which waits for a ready connection itself); when it dies mid-call
 * it runs again once if `annotated()` (the tool as the server lists it now) may be retried,
 * else fails `InDoubt`. A second death of the retry fails as it came.
 */
export const applied = <A>(
  server: string,
  tool: string,
  annotated: () => Pick<McpSchema.Tool, "annotations"> | undefined,
  call: Effect.Effect<A, McpError.McpError>
): Effect.Effect<A, McpError.McpError> =>
  Effect.catchIf(
    call,
    diedMidCall,
    (error) => mayRetry(annotated()) ? call : Effect.fail(inDoubt(server, tool, error.message, error))
  )
