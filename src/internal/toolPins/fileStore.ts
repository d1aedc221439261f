/**
 * Pins in files: one JSON file per server identity in a directory, written whole by a rename, and a
 * watch on the directory so a running fleet sees pins another process wrote.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as ToolPins from "../../ToolPins.js"
import { randomHex } from "../crypto.js"
import { isGone } from "./identity.js"
import { PinFile } from "./schema.js"

type PinFile = typeof PinFile.Type

const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(PinFile))

/**
 * A file name for an identity key (or, in the older layout, a server name):
 * `[A-Za-z0-9_-]` kept, every other UTF-8 byte as `%XX`, so any key is one safe file name
 * and maps back.
 */
export const fileName = (server: string): string =>
  `${
    [...new TextEncoder().encode(server)].map((byte) => {
      const char = String.fromCharCode(byte)
      return /[A-Za-z0-9_-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
    }).join("")
  }.json`

/** The key a file name stands for; undefined for any other file. */
export const serverOf = (name: string): string | undefined => {
  if (!name.endsWith(".json")) return undefined
  try {
    return decodeURIComponent(name.slice(0, -".json".length))
  } catch {
    return undefined
  }
}

// Whether the file at a path exists; a failure to tell counts as existing (nothing is lost).
const exists = (fs: FileSystem.FileSystem, path: string) => Effect.orElseSucceed(fs.exists(path), () => true)

/** See `ToolPins.makeFile`. */
export const make = (
  directory: string
): Effect.Effect<ToolPins.PinStore, never, FileSystem.FileSystem | Path.Path | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const paths = yield* Path.Path
    const saved = yield* PubSub.unbounded<string>()
    yield* Effect.addFinalizer(() => PubSub.shutdown(saved))
    const pathOf = (key: string) => paths.join(directory, fileName(key))

    // Why a file cannot be used, or its content (none for a file not written yet).
    const read = (path: string): Effect.Effect<Either.Either<PinFile | undefined, string>> =>
      fs.readFileString(path).pipe(
        Effect.map((text) => Either.mapLeft(decodeFile(text), () => `${path} is not a pins file`)),
        Effect.catchAll((error) =>
          Effect.succeed(
            error._tag === "SystemError" && error.reason === "NotFound"
              ? Either.right(undefined)
              : Either.left(`cannot read ${path}: ${error.message}`)
          )
        )
      )

    const save = (identity: ToolPins.Identity, pins: ReadonlyMap<string, ToolPins.Pin>) => {
      const path = pathOf(identity.key)
      const temporary = `${path}.${randomHex(6)}.tmp`
      const file = {
        server: identity.server,
        key: identity.key,
        origin: identity.origin,
        tools: Object.fromEntries(pins)
      }
      return fs.makeDirectory(directory, { recursive: true }).pipe(
        Effect.zipRight(fs.writeFileString(temporary, `${JSON.stringify(file, null, 2)}\n`)),
        Effect.zipRight(fs.rename(temporary, path)),
        Effect.zipRight(PubSub.publish(saved, identity.key)),
        Effect.catchAll((error) =>
          Effect.logWarning(`the pins of server '${identity.server}' cannot be written to ${path}: ${error.message}`)
        ),
        Effect.asVoid
      )
    }

    // A file of the older layout (one per server name, no key) is taken over by the first
    // identity of that name to load: written under its key, and removed.
    const migrate = (identity: ToolPins.Identity) =>
      Effect.flatMap(read(pathOf(identity.server)), (legacy) => {
        if (Either.isLeft(legacy) || legacy.right === undefined || legacy.right.key !== undefined) {
          return Effect.succeed(new Map<string, ToolPins.Pin>())
        }
        const pins = new Map(legacy.right.tools.map(([name, pin]) => [name, { ...pin, older: true }]))
        return save(identity, pins).pipe(
          Effect.zipRight(Effect.ignore(fs.remove(pathOf(identity.server)))),
          Effect.as(pins)
        )
      })

    const load = (identity: ToolPins.Identity) =>
      Effect.flatMap(read(pathOf(identity.key)), (result) =>
        Either.isLeft(result)
          ? Effect.as(
            Effect.logWarning(
              `the pins of server '${identity.server}' are lost (${result.left}); its tools are pinned anew`
            ),
            new Map<string, ToolPins.Pin>()
          )
          : result.right === undefined
          ? migrate(identity)
          : Effect.succeed(new Map(result.right.tools)))

    // Every pins file of the directory whose server is gone, removed.
    const retain: ToolPins.PinStore["retain"] = (origins, keep) =>
      Effect.gen(function*() {
        const names = yield* Effect.orElseSucceed(fs.readDirectory(directory), () => [])
        for (const name of names) {
          const file = Either.getOrUndefined(yield* read(paths.join(directory, name)))
          if (file?.key === undefined || file.origin === undefined || file.key !== serverOf(name)) continue
          const identity = { key: file.key, server: file.server, origin: file.origin }
          if (isGone(identity, origins, keep) || !(yield* exists(fs, file.origin))) {
            yield* Effect.ignore(fs.remove(paths.join(directory, name)))
          }
        }
      })

    // Another process's writes, seen through the directory (which may not exist yet: tried
    // again later), merged with this store's own.
    const written = Stream.fromEffect(fs.makeDirectory(directory, { recursive: true })).pipe(
      Stream.flatMap(() => fs.watch(directory)),
      Stream.filterMap((event) => Option.fromNullable(serverOf(paths.basename(event.path)))),
      Stream.retry(Schedule.spaced("1 second")),
      Stream.catchAll(() => Stream.empty)
    )

    return {
      load,
      save,
      retain,
      changes: Stream.merge(Stream.fromPubSub(saved), written)
    }
  })
