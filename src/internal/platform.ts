/**
 * What config files need from the platform, neutrally: paths through @effect/platform's
 * `Path` (the one in context where there is one, as `NodeContext` gives Node's, else the
 * package's own POSIX implementation in plain JavaScript), and the defaults of `env`, the
 * working directory and the home directory read from `globalThis.process` where the runtime
 * has one (Node, Bun, Deno), empty elsewhere (a Worker, a browser), where callers pass them.
 *
 * @internal
 */
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * The path operations config files use: a part of @effect/platform's `Path` that Node's own
 * `node:path` has too, so a Node caller of the pure functions can pass either.
 */
export type PathOps = Pick<Path.Path, "basename" | "dirname" | "isAbsolute" | "join" | "resolve" | "sep">

/** @effect/platform's POSIX Path, for the pure functions, which take no context. */
export const posixPath: Path.Path = Effect.runSync(Effect.provide(Path.Path, Path.layer))

/** The Path service in context, else {@link posixPath}. */
export const currentPath: Effect.Effect<Path.Path> = Effect.map(
  Effect.serviceOption(Path.Path),
  Option.getOrElse(() => posixPath)
)

// Typed by hand: @types/node declares `process` everywhere, but a Web runtime has none.
const runtime = (globalThis as { readonly process?: Partial<Pick<NodeJS.Process, "env" | "cwd">> }).process

/** The runtime's environment variables, or none. */
export const processEnv = (): Readonly<Record<string, string | undefined>> => runtime?.env ?? {}

/** The runtime's working directory, or `/`. */
export const processCwd = (): string => runtime?.cwd?.() ?? "/"

/** The home directory `env` names (`HOME`, else Windows' `USERPROFILE`), else the runtime's, or `""`. */
export const homeOf = (env: Readonly<Record<string, string | undefined>>): string =>
  env.HOME ?? env.USERPROFILE ?? processEnv().HOME ?? processEnv().USERPROFILE ?? ""
