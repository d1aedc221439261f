/**
 * Log messages of the fleet's servers as one session's client gets them: those of a server
 * it has a call in flight to (on that call's stream), and, once it set a level with
 * logging/setLevel (kept by McpServer), every one at or above that level. setLevel is not
 * passed on: the servers are shared by all clients. A 2026-07-28 server's messages belong to
 * the request they came for: a routed call's reach its caller through the call (`callLog`),
 * told as they come, all before its result; the events of them (and of the fleet's own requests) are not
 * forwarded.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpSchema from "../../McpSchema.js"
import type * as McpServer from "../../McpServer.js"
import type { RegistryEvent } from "../../RegistryEvent.js"
import type { InFlight } from "./inFlight.js"

// Least severe first.
const LEVELS: ReadonlyArray<McpSchema.LoggingLevel> = McpSchema.LoggingLevel.literals

/** Whether a message at `messageLevel` goes to a client that asked for `level` (if any). */
export const admits = (
  level: McpSchema.LoggingLevel | undefined,
  messageLevel: McpSchema.LoggingLevel,
  inFlight: boolean
): boolean => level === undefined ? inFlight : LEVELS.indexOf(messageLevel) >= LEVELS.indexOf(level)

/** Sends a server's log message to the session's client, if it is to see it. */
export const forwarder = (
  inFlight: InFlight,
  session: Pick<McpServer.Session, "level" | "notify">
) =>
(event: Extract<RegistryEvent, { readonly _tag: "LogMessage" }>): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (event.perRequest) return Effect.void
    const related = inFlight.latest(event.server)?.request.id
    if (!admits(session.level(), event.level, related !== undefined)) return Effect.void
    return session.notify(McpSchema.Method.LoggingMessage, {
      level: event.level,
      logger: event.logger ?? event.server,
      data: event.data
    }, related)
  })

/**
 * A routed call's log messages (2026-07-28: those its server sent for it), as the call's own,
 * by the caller's level (McpServer's check), named after the server when they name no logger.
 */
export const callLog =
  (server: string, ctx: McpServer.RequestContext) =>
  (message: McpSchema.LoggingMessageNotificationParams): Effect.Effect<void> =>
    ctx.log(message.level, message.data, message.logger ?? server)
