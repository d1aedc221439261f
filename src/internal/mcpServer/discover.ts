/**
 * `server/discover` (2026-07-28): the revisions the server speaks (the stateful ones too),
 * its capabilities as a modern client sees them, and its instructions; the server's name
 * and the caching hint are added to every modern result (`stateless.ts`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as McpSchema from "../../McpSchema.js"
import { capabilities, type Method } from "./methods.js"
import { SUPPORTED_VERSIONS } from "./stateless.js"

/** The handler of `server/discover`. */
export const discover: Method = (_request, ctx) =>
  Effect.sync(() => {
    const { options } = ctx.session
    return {
      supportedVersions: SUPPORTED_VERSIONS,
      capabilities: capabilities(ctx.session, ctx.session.handlers ?? {}, McpSchema.MODERN_PROTOCOL_VERSION),
      ...(options.instructions === undefined ? {} : { instructions: options.instructions })
    }
  })
