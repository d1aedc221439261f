/**
 * Watching config files: each file's directory watched (editors replace files by rename),
 * and a fingerprint that tells whether a new read changes anything.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as FleetConfig from "../../FleetConfig.js"
import * as ServerSpec from "../../ServerSpec.js"
import type { PathOps } from "../platform.js"

// The specs' content and the policy: two loads with the same fingerprint need nothing done.
export const fingerprint = (loaded: FleetConfig.Loaded): string =>
  JSON.stringify([loaded.servers.map((spec) => [spec.name, ServerSpec.hash(spec)]).sort(), loaded.policy])

// Editors save by writing a new file and renaming it over the old one, which ends a watch
// on the file itself; so the directory is watched and its events filtered by name.
export const watchDirectory = (
  fs: FileSystem.FileSystem,
  path: PathOps,
  dir: string,
  names: ReadonlySet<string>
) =>
  Stream.fromEffect(fs.stat(dir)).pipe(
    Stream.flatMap(() =>
      Stream.concat(
        // Anything that changed before the watch began is caught by one more read.
        Stream.succeed(undefined),
        fs.watch(dir).pipe(
          Stream.filter((event) => names.has(path.basename(event.path))),
          Stream.as(undefined)
        )
      )
    ),
    // A directory that does not exist yet, or a watch that ended, is tried again later.
    Stream.concat(Stream.fail(`the watch on ${dir} ended`)),
    Stream.tapError((error) =>
      Effect.logDebug(`cannot watch ${dir}: ${typeof error === "string" ? error : error.message}`)
    ),
    Stream.retry(Schedule.spaced("1 second")),
    Stream.catchAll(() => Stream.empty)
  )

// One element for each change of any of `paths`, once they have been quiet for `debounce`.
export const edits = (
  fs: FileSystem.FileSystem,
  path: PathOps,
  files: ReadonlyArray<string>,
  debounce: Duration.DurationInput
) => {
  const directories = new Map<string, Set<string>>()
  for (const file of files) {
    const absolute = path.resolve(file)
    const names = directories.get(path.dirname(absolute)) ?? new Set<string>()
    names.add(path.basename(absolute))
    directories.set(path.dirname(absolute), names)
  }
  return Stream.mergeAll(
    [...directories].map(([dir, names]) => watchDirectory(fs, path, dir, names)),
    { concurrency: "unbounded" }
  ).pipe(Stream.debounce(debounce))
}
