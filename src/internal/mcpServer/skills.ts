/**
 * Skills as data (the skills extension, SEP-2640): a skill given as its files becomes an
 * entry (`skills/list`, `skills/get`) and a resource per file (`resources/read`), each file's
 * digest and size taken once from its bytes, the entry's frontmatter parsed from its
 * `SKILL.md` once. The `SKILL.md` resource carries the frontmatter's name and description
 * and `text/markdown`, as the extension asks.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as McpSchema from "../../McpSchema.js"
import type { ResourceItem, SkillDefinition, SkillItem } from "../../McpServer.js"
import { base64, utf8Bytes } from "../crypto.js"
import { digestOf, frontmatterOf, SKILL_MD } from "../skillFiles.js"

// The MIME type of a file, by its extension: the few a skill holds, else plain bytes.
const MIME: Readonly<Record<string, string>> = {
  md: "text/markdown",
  txt: "text/plain",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  py: "text/x-python",
  sh: "text/x-shellscript",
  js: "text/javascript",
  ts: "text/typescript",
  html: "text/html",
  csv: "text/csv"
}

const mimeOf = (path: string): string => MIME[path.split(".").at(-1)?.toLowerCase() ?? ""] ?? "application/octet-stream"

// One file as a resource, its content fixed.
const fileItem = (uri: string, path: string, content: string | Uint8Array, meta: Partial<McpSchema.Resource>) => {
  const mimeType = mimeOf(path)
  const contents = typeof content === "string"
    ? { uri, mimeType, text: content }
    : { uri, mimeType, blob: base64(content) }
  const read = Effect.succeed<McpSchema.ReadResourceResult>({ contents: [contents] })
  const item: ResourceItem = { resource: { uri, name: path, mimeType, ...meta }, read: () => read }
  return item
}

/**
 * A skill from its files (see `McpServer.skill`). Throws when its `SKILL.md` is missing or
 * its frontmatter lacks a string `name` and `description`: a skill is the app's own content.
 */
export const skill = (definition: SkillDefinition): SkillItem => {
  const main = definition.files[SKILL_MD]
  if (main === undefined) throw new Error(`a skill needs a ${SKILL_MD}`)
  const text = typeof main === "string" ? main : new TextDecoder().decode(main)
  const parsed = frontmatterOf(text)
  if ("problem" in parsed) throw new Error(`the skill's ${SKILL_MD} is unusable: ${parsed.problem}`)
  const { description, name } = parsed.frontmatter
  if (typeof name !== "string" || typeof description !== "string") {
    throw new Error(`the skill's ${SKILL_MD} frontmatter needs a string name and description`)
  }
  const prefix = definition.path === undefined ? "" : `${definition.path.replace(/^\/+|\/+$/g, "")}/`
  const root = `skill://${prefix}${name}`
  const uri = `${root}/${SKILL_MD}`
  const manifest: Array<McpSchema.SkillFile> = []
  const files: Array<ResourceItem> = []
  for (const [path, content] of Object.entries(definition.files)) {
    const fileUri = `${root}/${path}`
    const bytes = typeof content === "string" ? utf8Bytes(content) : content
    manifest.push({ uri: fileUri, digest: digestOf(bytes), size: bytes.byteLength })
    files.push(fileItem(fileUri, path, content, path === SKILL_MD ? { name, description } : {}))
  }
  return {
    skill: { uri, frontmatter: parsed.frontmatter as McpSchema.Skill["frontmatter"], resources: manifest },
    files
  }
}
