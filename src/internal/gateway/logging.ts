/**
 * Log messages of the fleet's servers as one session's client gets them: those of a server
 * it has a call in flight to (on that call's stream), and, once it set a level with
 * logging/setLevel (kept by McpServer), every one at or above that level. setLevel is not
 * passed on: the servers are shared by all clients.
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
    const related = inFlight.latest(event.server)
    if (!admits(session.level(), event.level, related !== undefined)) return Effect.void
    return session.notify(McpSchema.Method.LoggingMessage, {
      level: event.level,
      logger: event.logger ?? event.server,
      data: event.data
    }, related)
  })
