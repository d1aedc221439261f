/**
 * Which server owns a resource URI: one that lists it, else one whose URI template matches
 * it, else one with a skill the URI is a file of, else the only server that offers resources.
 *
 * @internal
 */
import type * as Catalog from "../../Catalog.js"
import type * as McpSchema from "../../McpSchema.js"
import { skillDirOf } from "../skillFiles.js"

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * A RegExp for the URIs an RFC 6570 template matches, as far as resource URIs use them:
 * `{x}` is one path segment, `{+x}` and `{#x}` anything, `{?x,y}` / `{&x}` a query part.
 */
export const templateRegex = (template: string): RegExp => {
  let source = "^"
  let last = 0
  for (const match of template.matchAll(/\{([+#./;?&]?)[^}]*\}/g)) {
    source += escape(template.slice(last, match.index))
    const operator = match[1]
    source += operator === "+" || operator === "#"
      ? ".*"
      : operator === "?" || operator === "&"
      ? "(?:[?&].*)?"
      : "[^/?#]*"
    last = match.index + match[0].length
  }
  return new RegExp(source + escape(template.slice(last)) + "$")
}

// Whether `uri` is one of `skill`'s files: its manifest lists it, or it is under its directory.
const isSkillFile = (skill: McpSchema.Skill, uri: string): boolean =>
  skill.resources === "dynamic"
    ? uri === skill.uri || uri.startsWith(`${skillDirOf(skill.uri)}/`)
    : skill.resources.some((file) => file.uri === uri)

/** The server that owns a resource URI, if one does. */
export const ownerOf = (catalog: Catalog.Catalog, uri: string): string | undefined => {
  const listed = catalog.resources.find((entry) => entry.resource.uri === uri)
  if (listed !== undefined) return listed.server
  const templated = catalog.templates.find((entry) => {
    try {
      return templateRegex(entry.template.uriTemplate).test(uri)
    } catch {
      return false
    }
  })
  if (templated !== undefined) return templated.server
  // A skill's file, whether or not its server lists it as a resource.
  const skill = catalog.skills.find((entry) => isSkillFile(entry.skill, uri))
  if (skill !== undefined) return skill.server
  // A server that offers resources without listing this one may still serve it.
  const servers = new Set([...catalog.resources, ...catalog.templates].map((entry) => entry.server))
  return servers.size === 1 ? [...servers][0] : undefined
}
