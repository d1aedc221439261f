/**
 * What both sides of the skills extension (SEP-2640) compute from a skill's files: the
 * digest of raw bytes (`sha256:` and 64 lowercase hex digits), a file's bytes from a
 * `resources/read` content (text as UTF-8, a blob decoded), and a `SKILL.md`'s YAML
 * frontmatter (on `yaml`, a full YAML 1.2 parser: the frontmatter is compared field by field,
 * so a partial parser would let a difference through).
 *
 * @internal
 */
import { parse } from "yaml"
import { canonicalJson } from "./canonicalJson.js"
import { bytesSha256Hex, fromBase64, utf8Bytes } from "./crypto.js"

/** A skill's manifest file name, at the root of its directory. */
export const SKILL_MD = "SKILL.md"

/** The digest of `bytes` as a skill manifest carries it. */
export const digestOf = (bytes: Uint8Array): string => `sha256:${bytesSha256Hex(bytes)}`

/** The raw bytes of one `resources/read` content: text as UTF-8, a blob from base64. */
export const bytesOf = (content: { readonly text?: unknown; readonly blob?: unknown }): Uint8Array | undefined =>
  typeof content.text === "string"
    ? utf8Bytes(content.text)
    : typeof content.blob === "string"
    ? fromBase64(content.blob)
    : undefined

// A leading `---` block; a BOM before it is allowed.
const FRONTMATTER = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/

/**
 * The frontmatter of a `SKILL.md` as a JSON object, or why there is none: no leading `---`
 * block, YAML that does not parse, or a value that is not a mapping.
 */
export const frontmatterOf = (
  text: string
): { readonly frontmatter: Record<string, unknown> } | { readonly problem: string } => {
  const block = FRONTMATTER.exec(text)
  if (block === null) return { problem: "it has no leading --- delimited YAML frontmatter" }
  let value: unknown
  try {
    value = parse(block[1]!)
  } catch (error) {
    return { problem: `its frontmatter is not valid YAML (${error instanceof Error ? error.message : String(error)})` }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { frontmatter: value as Record<string, unknown> }
    : { problem: "its frontmatter is not a mapping" }
}

/** The fields whose values differ between two frontmatters (an absent field is null). */
export const frontmatterDifferences = (
  file: Readonly<Record<string, unknown>>,
  entry: Readonly<Record<string, unknown>>
): ReadonlyArray<string> =>
  [...new Set([...Object.keys(file), ...Object.keys(entry)])].filter((key) =>
    canonicalJson(Object.hasOwn(file, key) ? file[key] : null) !==
      canonicalJson(Object.hasOwn(entry, key) ? entry[key] : null)
  )

/**
 * The skill name a `SKILL.md` URI ends in (the last segment of its skill path), if it is one.
 */
export const skillNameOf = (uri: string): string | undefined => {
  const at = uri.indexOf("://")
  if (at < 0) return undefined
  const segments = uri.slice(at + 3).split("/").filter((segment) => segment.length > 0)
  return segments.length >= 2 && segments.at(-1) === SKILL_MD ? segments.at(-2) : undefined
}

/** The directory of a skill whose `SKILL.md` is at `uri` (its files are under it). */
export const skillDirOf = (uri: string): string =>
  uri.endsWith(`/${SKILL_MD}`) ? uri.slice(0, -SKILL_MD.length - 1) : uri

/** The URI of a skill's file named by its path in the skill, or by its URI. */
export const fileUriOf = (skillUri: string, file: string): string =>
  file.includes("://") ? file : `${skillDirOf(skillUri)}/${file.replace(/^\/+/, "")}`
