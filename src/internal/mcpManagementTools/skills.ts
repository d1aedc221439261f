/**
 * `load_skill {skill, file?}`: the progressive disclosure of the fleet's skills (the skills
 * extension, SEP-2640) for a model. The catalog lists every server's skills by name and
 * description only; this tool loads one when the model needs it, its `SKILL.md` verified
 * against its entry (size, digest, frontmatter) by the server's connection, and names the
 * skill's other files, which the model reads one at a time (`file`), each verified too.
 * Nothing of a skill is read before.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import type * as McpError from "../../McpError.js"
import type { Reach } from "../../McpManagementTools.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import { fileUriOf, SKILL_MD, skillDirOf } from "../skillFiles.js"
import { define } from "./definitions.js"

/** The tool's name. */
export const LOAD_SKILL = "load_skill"

/** `load_skill`: a skill's SKILL.md, or one of its files. */
export const LoadSkill = Schema.Struct({
  skill: Schema.String.annotations({ description: "The skill: its name, or the URI of its SKILL.md" }),
  file: Schema.optional(
    Schema.String.annotations({
      description: "One of the skill's other files to read instead, by its path in the skill (references/x.md) or URI"
    })
  )
})

/** Its definition, as `tools/list` gives it. */
export const definition: McpSchema.Tool = define(
  LOAD_SKILL,
  "Loads a skill of the fleet's MCP servers when a task needs it: returns its SKILL.md (instructions) and the " +
    "names of its other files; call again with `file` to read one of them.",
  LoadSkill,
  true
)

// The other files of a skill, as paths within it, for the model to name.
const pathOf = (skill: McpSchema.Skill, uri: string) => {
  const dir = `${skillDirOf(skill.uri)}/`
  return uri.startsWith(dir) ? uri.slice(dir.length) : uri
}

const text = (value: string): McpSchema.CallToolResult => ({ content: [{ type: "text", text: value }] })

/** `load_skill` over the registry: what it does with its decoded arguments. */
export const make = (registry: ServerRegistry.ServerRegistry) =>
(
  params: typeof LoadSkill.Type,
  reach: Reach
): Effect.Effect<McpSchema.CallToolResult, McpError.McpError> =>
  Effect.gen(function*() {
    const catalog = yield* SubscriptionRef.get(registry.catalog)
    const reachable = catalog.skills.filter((entry) => reach.server(entry.server))
    const { server, skill } = yield* Catalog.findSkill(reachable, params.skill)
    const whom = { principal: reach.principal }
    if (params.file !== undefined) {
      const uri = fileUriOf(skill.uri, params.file)
      const file = yield* registry.withClient(server, (client) => client.readSkillFile(skill, uri), whom)
      return text(file.text)
    }
    const loaded = yield* registry.withClient(server, (client) => client.loadSkill(skill), whom)
    const files = loaded.files === "dynamic"
      ? "\n\nThis skill's server lists no files: name one by its path to read it."
      : loaded.files.length === 0
      ? ""
      : `\n\nOther files of this skill (read one with ${LOAD_SKILL} and \`file\`):\n${
        loaded.files.map((file) => `- ${pathOf(skill, file.uri)} (${file.size} bytes)`).join("\n")
      }`
    return {
      ...text(`[skill ${skill.frontmatter.name} of server ${server}: ${skill.uri}]\n${loaded.text}${files}`),
      structuredContent: {
        server,
        uri: skill.uri,
        name: skill.frontmatter.name,
        [SKILL_MD]: loaded.text,
        files: loaded.files === "dynamic" ? "dynamic" : loaded.files.map((file) => pathOf(skill, file.uri))
      }
    }
  })
