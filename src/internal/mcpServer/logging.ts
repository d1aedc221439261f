/**
 * Log levels: which messages a session's level admits.
 *
 * @internal
 */
import * as McpSchema from "../../McpSchema.js"

// Least severe first.
const LEVELS: ReadonlyArray<McpSchema.LoggingLevel> = McpSchema.LoggingLevel.literals

/** Whether `value` names a level. */
export const isLevel = (value: unknown): value is McpSchema.LoggingLevel =>
  typeof value === "string" && LEVELS.includes(value as McpSchema.LoggingLevel)

/**
 * Whether a message at `messageLevel` goes to a session that set `level`; before any
 * logging/setLevel every message does (the spec leaves it to the server).
 */
export const admits = (level: McpSchema.LoggingLevel | undefined, messageLevel: McpSchema.LoggingLevel): boolean =>
  level === undefined || LEVELS.indexOf(messageLevel) >= LEVELS.indexOf(level)
