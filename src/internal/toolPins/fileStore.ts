/**
 * Pins in files: one JSON file per server in a directory, written whole by a rename, and a
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
import { PinFile } from "./schema.js"

const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(PinFile))

/**
 * A server's file name: `[A-Za-z0-9_-]` kept, every other UTF-8 byte as `%XX`, so any
 * server name is one safe file name and maps back.
 */
export const fileName = (server: string): string =>
  `${
    [...new TextEncoder().encode(server)].map((byte) => {
      const char = String.fromCharCode(byte)
      return /[A-Za-z0-9_-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
    }).join("")
  }.json`

/** The server a file name stands for; undefined for any other file. */
export const serverOf = (name: string): string | undefined => {
  if (!name.endsWith(".json")) return undefined
  try {
    return decodeURIComponent(name.slice(0, -".json".length))
  } catch {
    return undefined
  }
}

/** See `ToolPins.makeFile`. */
export const make = (
  directory: string
): Effect.Effect<ToolPins.PinStore, never, FileSystem.FileSystem | Path.Path | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const paths = yield* Path.Path
    const saved = yield* PubSub.unbounded<string>()
    yield* Effect.addFinalizer(() => PubSub.shutdown(saved))
    const pathOf = (server: string) => paths.join(directory, fileName(server))

    // Why a file cannot be used, or its pins (none for a file not written yet).
    const read = (server: string): Effect.Effect<Either.Either<Map<string, ToolPins.Pin>, string>> =>
      fs.readFileString(pathOf(server)).pipe(
        Effect.map((text) =>
          Either.mapBoth(decodeFile(text), {
            onLeft: () => `${pathOf(server)} is not a pins file`,
            onRight: (file) => new Map(file.tools)
          })
        ),
        Effect.catchAll((error) =>
          Effect.succeed(
            error._tag === "SystemError" && error.reason === "NotFound"
              ? Either.right(new Map())
              : Either.left(`cannot read ${pathOf(server)}: ${error.message}`)
          )
        )
      )

    const load = (server: string) =>
      Effect.flatMap(read(server), (result) =>
        Either.isRight(result) ? Effect.succeed(result.right) : Effect.as(
          Effect.logWarning(`the pins of server '${server}' are lost (${result.left}); its tools are pinned anew`),
          new Map<string, ToolPins.Pin>()
        ))

    const save = (server: string, pins: ReadonlyMap<string, ToolPins.Pin>) => {
      const path = pathOf(server)
      const temporary = `${path}.${randomHex(6)}.tmp`
      const text = `${JSON.stringify({ server, tools: Object.fromEntries(pins) }, null, 2)}\n`
      return fs.makeDirectory(directory, { recursive: true }).pipe(
        Effect.zipRight(fs.writeFileString(temporary, text)),
        Effect.zipRight(fs.rename(temporary, path)),
        Effect.zipRight(PubSub.publish(saved, server)),
        Effect.catchAll((error) =>
          Effect.logWarning(`the pins of server '${server}' cannot be written to ${path}: ${error.message}`)
        ),
        Effect.asVoid
      )
    }

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
      changes: Stream.merge(Stream.fromPubSub(saved), written)
    }
  })
