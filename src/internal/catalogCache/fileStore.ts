/**
 * Catalog cache entries in files: one JSON file per server identity in a directory, named by a
 * digest of the identity's key, written whole by a rename. A file is decoded with the MCP
 * schemas, so what a file holds reaches the catalog only as lists a server could have sent.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as CatalogCache from "../../CatalogCache.js"
import * as McpSchema from "../../McpSchema.js"
import type * as ToolPins from "../../ToolPins.js"
import { randomHex, sha256Hex } from "../crypto.js"

const CacheFile = Schema.Struct({
  server: Schema.String,
  key: Schema.String,
  digest: Schema.String,
  savedAt: Schema.Number,
  lists: Schema.Struct({
    tools: Schema.Array(McpSchema.Tool),
    resources: Schema.Array(McpSchema.Resource),
    templates: Schema.Array(McpSchema.ResourceTemplate),
    prompts: Schema.Array(McpSchema.Prompt)
  })
})

const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(CacheFile))

/** See `CatalogCache.makeFile`. */
export const make = (
  directory: string
): Effect.Effect<CatalogCache.CatalogCache, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const paths = yield* Path.Path
    // A key holds the server's name: its digest makes one safe file name of any of them.
    const pathOf = (identity: ToolPins.Identity) =>
      paths.join(directory, `${sha256Hex(identity.key).slice(0, 32)}.json`)

    const load = (identity: ToolPins.Identity): Effect.Effect<CatalogCache.Entry | undefined> => {
      const path = pathOf(identity)
      return fs.readFileString(path).pipe(
        Effect.flatMap((text) =>
          Either.match(decodeFile(text), {
            // Another identity whose key digests alike would be a collision: no entry either.
            onRight: (file) =>
              Effect.succeed(
                file.key === identity.key
                  ? { digest: file.digest, savedAt: file.savedAt, lists: file.lists }
                  : undefined
              ),
            onLeft: () =>
              Effect.as(
                Effect.logWarning(`the catalog cache of server '${identity.server}' (${path}) is no cache file`),
                undefined
              )
          })
        ),
        Effect.catchAll((error) =>
          error._tag === "SystemError" && error.reason === "NotFound"
            ? Effect.succeed(undefined)
            : Effect.as(
              Effect.logWarning(`the catalog cache of server '${identity.server}' cannot be read: ${error.message}`),
              undefined
            )
        )
      )
    }

    const save = (identity: ToolPins.Identity, entry: CatalogCache.Entry) => {
      const path = pathOf(identity)
      const temporary = `${path}.${randomHex(6)}.tmp`
      const file = { server: identity.server, key: identity.key, ...entry }
      return fs.makeDirectory(directory, { recursive: true }).pipe(
        Effect.zipRight(fs.writeFileString(temporary, `${JSON.stringify(file)}\n`)),
        Effect.zipRight(fs.rename(temporary, path)),
        Effect.catchAll((error) =>
          Effect.logWarning(
            `the catalog cache of server '${identity.server}' cannot be written to ${path}: ${error.message}`
          )
        )
      )
    }

    return { load, save }
  })
