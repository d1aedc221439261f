/**
 * undici, loaded on first use: a command that reaches no HTTP server never loads it (a quarter
 * of the CLI's code). Shared by the HTTP client's Agent and the OAuth network guard.
 *
 * @internal
 */
import type * as Undici from "undici"

/**
 * undici's namespace. In a bundle split in chunks, CommonJS undici is a chunk whose namespace
 * holds only `default` (its `module.exports`); unbundled, both forms are there.
 */
export const loadUndici = (): Promise<typeof Undici> =>
  import("undici").then((loaded) => (loaded as unknown as { readonly default?: typeof Undici }).default ?? loaded)
