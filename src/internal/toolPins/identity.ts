/**
 * Whose pins (see `ToolPins.identity`), and when they belong to a server that is gone,
 * shared by the public module and the file store.
 *
 * @internal
 */

/** See `ToolPins.Identity`. */
export interface Identity {
  readonly key: string
  readonly server: string
  /** The config file it was read from, when it was. */
  readonly origin?: string | undefined
}

/** What an identity is made of: a ServerSpec's name, origin and transport (see `ToolPins.identity`). */
export interface Source {
  readonly name: string
  readonly origin?: string | undefined
  readonly transport:
    | {
      readonly type: "stdio"
      readonly command: string
      readonly args?: ReadonlyArray<string> | undefined
      readonly cwd?: string | undefined
    }
    | { readonly type: "custom"; readonly key: string }
    | { readonly type: "http" | "sse" | "ws"; readonly url: string }
}

/** See `ToolPins.isGone`. */
export const isGone = (
  identity: Identity,
  origins: ReadonlyArray<string>,
  keep: ReadonlyArray<Identity>
): boolean => {
  if (identity.origin === undefined || !origins.includes(identity.origin)) return false
  const named = keep.filter((kept) => kept.server === identity.server)
  // The entry is gone, or runs something else now; another file's entry overrides it.
  return named.length === 0 || named.some((kept) => kept.origin === identity.origin && kept.key !== identity.key)
}
