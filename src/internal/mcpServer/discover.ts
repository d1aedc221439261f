/**
 * `server/discover` (2026-07-28): the revisions the server speaks (the legacy ones too), its
 * capabilities as a modern client sees them (the tasks extension's among them), and its
 * instructions; the server's name and the caching hint are added to every modern result
 * (`modern.ts`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpSchema from "../../McpSchema.js"
import { capabilities, type Method } from "./methods.js"
import { TASKS_EXTENSION } from "./tasksExtension.js"

/** Every revision a server speaks, the modern one first. */
export const SUPPORTED_VERSIONS: ReadonlyArray<string> = [
  McpSchema.MODERN_PROTOCOL_VERSION,
  ...McpSchema.SUPPORTED_PROTOCOL_VERSIONS
]

const EXTENSIONS: McpSchema.ServerCapabilities = { extensions: { [TASKS_EXTENSION]: {} } }

/** The handler of `server/discover`. */
export const discover: Method = (_request, ctx) =>
  Effect.sync(() => {
    const { options } = ctx.session
    const own = options.tasks === undefined ? {} : EXTENSIONS
    return {
      supportedVersions: SUPPORTED_VERSIONS,
      capabilities: capabilities(options, ctx.session.handlers ?? {}, McpSchema.MODERN_PROTOCOL_VERSION, own),
      ...(options.instructions === undefined ? {} : { instructions: options.instructions })
    }
  })
