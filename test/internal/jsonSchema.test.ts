// Tool schemas with `$ref` (JSON Schema 2020-12, SEP-2106): local references resolve, a
// network one is never fetched — a canary HTTP server on 127.0.0.1 sees no request.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { ValidatorCache } from "../../src/internal/jsonSchema.js"
import { json, serve } from "../support/httpServer.js"

describe("jsonSchema", () => {
  it.scopedLive("resolves #/$defs references, and never fetches a network $ref", () =>
    Effect.gen(function*() {
      const canary = yield* serve(() => Effect.succeed(json({ type: "object" })))
      const cache = new ValidatorCache()
      const local = yield* cache.get({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        $defs: { userId: { type: "string", pattern: "^[a-z0-9-]+$" } },
        properties: { id: { $ref: "#/$defs/userId" } }
      })
      expect(Either.isRight(local) && local.right({ id: "ok-1" })).toBeUndefined()
      expect(Either.isRight(local) && local.right({ id: "NOT OK" })).toContain("/id")
      const remote = yield* cache.get({
        type: "object",
        properties: { profile: { $ref: canary.url.replace("/mcp", "/profile-schema.json") } }
      })
      // Compiling is synchronous and has no loader: nothing was, or will be, asked for.
      expect(Either.isLeft(remote)).toBe(true)
      expect(canary.seen).toEqual([])
    }))
})
