/**
 * The skills extension (SEP-2640), the client's side: skills listed and got by their entries
 * alone (no file is read ahead of need: not on connecting, listing or getting), and a skill
 * loaded only when asked, its `SKILL.md` read and verified before anything of it is given:
 * its byte length against the entry's `size`, its SHA-256 against `digest`, and its YAML
 * frontmatter, parsed, against the entry's field by field. A supporting file is read one at a
 * time, verified the same way; a file the manifest does not list is refused. Any mismatch is
 * a Validation failure and nothing of the content is given. A `"dynamic"` entry publishes no
 * manifest: its files are read unverified, as the extension allows, the frontmatter still
 * compared.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { LoadedSkill, McpClient, SkillFileContent } from "../../McpClient.js"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import { traced } from "../traced.js"
import type { Parts } from "./operations.js"

/** The skills operations of a connection. */
export type Skills = Pick<McpClient, "listSkills" | "getSkill" | "loadSkill" | "readSkillFile">

const decoder = new TextDecoder("utf-8", { fatal: false })

// Loaded on the first skill read: it brings the `yaml` parser (~1.3 MB resident), which a
// client that never loads a skill should not carry.
const skillFiles = Effect.promise(() => import("../skillFiles.js"))

// A verification failure: the content is not used.
const refused = (server: string, uri: string, why: string) =>
  Effect.fail(McpError.validation(server, {
    method: McpSchema.Method.ResourcesRead,
    message: `skill file ${uri} failed verification: ${why}`
  }))

/** The skills operations over a connection's parts. */
export const makeSkills = (server: string, { gate, list, request }: Parts): Skills => {
  const read = (uri: string) =>
    gate(
      "resources",
      "read skill files",
      request(McpSchema.Method.ResourcesRead, { uri }, McpSchema.ReadResourceResult)
    )

  // One file of `skill`, read and verified against its manifest entry.
  const readVerified = (skill: McpSchema.Skill, uri: string): Effect.Effect<SkillFileContent, McpError.McpError> =>
    Effect.gen(function*() {
      const listed = skill.resources === "dynamic"
        ? undefined
        : skill.resources.find((file) => file.uri === uri)
      if (skill.resources !== "dynamic" && listed === undefined) {
        return yield* refused(server, uri, `the manifest of ${skill.uri} does not list it`)
      }
      const result = yield* read(uri)
      const { bytesOf, digestOf } = yield* skillFiles
      const content = result.contents.find((item) => item.uri === uri) ?? result.contents[0]
      const bytes = content === undefined ? undefined : bytesOf(content)
      if (content === undefined || bytes === undefined) {
        return yield* refused(server, uri, "the read returned no content")
      }
      if (listed !== undefined) {
        // A size mismatch fails before the digest is even taken.
        if (bytes.byteLength !== listed.size) {
          return yield* refused(server, uri, `${bytes.byteLength} bytes, the manifest says ${listed.size}`)
        }
        const digest = digestOf(bytes)
        if (digest !== listed.digest) {
          return yield* refused(server, uri, `its digest is ${digest}, the manifest says ${listed.digest}`)
        }
      }
      return {
        uri,
        bytes,
        text: "text" in content ? content.text : decoder.decode(bytes),
        mimeType: content.mimeType
      }
    })

  const getSkill = traced("McpClient.getSkill")((uri: string) =>
    gate(
      "skills",
      "get a skill",
      Effect.map(request(McpSchema.Method.SkillsGet, { uri }, McpSchema.GetSkillResult), (result) => result.skill)
    )
  )

  return {
    listSkills: traced("McpClient.listSkills")(() =>
      list("skills", "list skills", McpSchema.Method.SkillsList, McpSchema.ListSkillsResult, (result) => result.skills)
    ),
    getSkill,
    loadSkill: traced("McpClient.loadSkill")((skill: McpSchema.Skill | string) =>
      Effect.gen(function*() {
        const entry = typeof skill === "string" ? yield* getSkill(skill) : skill
        const file = yield* readVerified(entry, entry.uri)
        const { frontmatterDifferences, frontmatterOf } = yield* skillFiles
        const parsed = frontmatterOf(file.text)
        if ("problem" in parsed) return yield* refused(server, entry.uri, parsed.problem)
        const differing = frontmatterDifferences(parsed.frontmatter, entry.frontmatter)
        if (differing.length > 0) {
          return yield* refused(
            server,
            entry.uri,
            `its frontmatter differs from the entry's in ${differing.map((key) => JSON.stringify(key)).join(", ")}`
          )
        }
        return {
          skill: entry,
          text: file.text,
          files: entry.resources === "dynamic" ? "dynamic" : entry.resources.filter((f) => f.uri !== entry.uri)
        } satisfies LoadedSkill
      })
    ),
    readSkillFile: traced("McpClient.readSkillFile")(readVerified)
  }
}
