/**
 * Name globs of tool policy: `*` matches any run of characters (none included), `?`
 * exactly one, and everything else itself. A glob matches the whole name, case-sensitively.
 *
 * Shared by tool policy and the tool filters of the model bridges.
 *
 * @internal
 */

/** Tests a name against one glob. */
export type Matcher = (name: string) => boolean

const special = /[\\^$.+()[\]{}|]/g

/** Compiles a glob once, to test many names with. */
export const compile = (glob: string): Matcher => {
  if (glob === "*") return () => true
  if (!/[*?]/.test(glob)) return (name) => name === glob
  const source = glob.replace(special, "\\$&").replace(/\*+/g, ".*").replace(/\?/g, ".")
  const pattern = new RegExp(`^${source}$`, "s")
  return (name) => pattern.test(name)
}
