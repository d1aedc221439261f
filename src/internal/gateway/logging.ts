/**
 * Log messages of the fleet's servers as one session's client gets them: those of a server
 * it has a call in flight to (on that call's stream), and, once it set a level with
 * logging/setLevel, every one at or above that level. setLevel is not passed on: the
 * servers are shared by all clients.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpSchema from "../../McpSchema.js"
import type * as Peer from "../../Peer.js"
import type { RegistryEvent } from "../../RegistryEvent.js"
import { invalidParams } from "./errors.js"
import type { InFlight } from "./inFlight.js"
import type { Outbound } from "./session.js"

// Least severe first.
const LEVELS: ReadonlyArray<McpSchema.LoggingLevel> = McpSchema.LoggingLevel.literals

/** Whether a message at `messageLevel` goes to a client that asked for `level` (if any). */
export const admits = (
  level: McpSchema.LoggingLevel | undefined,
  messageLevel: McpSchema.LoggingLevel,
  inFlight: boolean
): boolean => level === undefined ? inFlight : LEVELS.indexOf(messageLevel) >= LEVELS.indexOf(level)

/** The logging of one session. */
export interface Logging {
  /** The handler of logging/setLevel. */
  readonly setLevel: Peer.Handler
  /** Sends a server's log message to the client, if it is to see it. */
  readonly forward: (event: Extract<RegistryEvent, { readonly _tag: "LogMessage" }>) => Effect.Effect<void>
}

/** The logging of a new session, which starts with no level set. */
export const make = (inFlight: InFlight, outbound: Outbound): Logging => {
  let level: McpSchema.LoggingLevel | undefined
  return {
    setLevel: (request) => {
      const requested = request.params?.level
      if (typeof requested !== "string" || !LEVELS.includes(requested as McpSchema.LoggingLevel)) {
        return Effect.fail(invalidParams(`logging/setLevel: unknown level ${JSON.stringify(requested)}`))
      }
      level = requested as McpSchema.LoggingLevel
      return Effect.succeed({})
    },
    forward: (event) =>
      Effect.suspend(() => {
        const related = inFlight.latest(event.server)
        if (!admits(level, event.level, related !== undefined)) return Effect.void
        return outbound.notify(McpSchema.Method.LoggingMessage, {
          level: event.level,
          logger: event.logger ?? event.server,
          data: event.data
        }, related)
      })
  }
}
