// Skills (the skills extension, SEP-2640) between McpClient and McpServer over a Memory pair,
// in both revision families: the server serves skills as data (entries, files as resources,
// the extension declared); the client lists and gets entries without reading a file, and
// loads a skill only after its SKILL.md passed the checks: a wrong size, digest or
// frontmatter, or a file the manifest does not list, fails and gives nothing.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as McpClient from "../src/McpClient.js"
import * as McpError from "../src/McpError.js"
import * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "../src/McpServer.js"
import { Transport } from "../src/Transport.js"

const SKILL_MD = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n" +
  "metadata:\n  author: mcp-fleet\n  tags: [pdf, forms]\n---\n\n# PDF\n\nRead references/FORMS.md first.\n"
const SKILL_BYTES = new TextEncoder().encode(SKILL_MD).byteLength
const FORMS = "# Forms\n\nFill every field.\n"

const pdf = McpServer.skill({ files: { "SKILL.md": SKILL_MD, "references/FORMS.md": FORMS } })
const refunds = McpServer.skill({
  path: "acme/billing",
  files: { "SKILL.md": "---\nname: refunds\ndescription: Issue a refund\n---\nCheck the order.\n" }
})

// A skill whose files count their reads, to see what the client fetched and when.
const counted = (item: McpServer.SkillItem, reads: Array<string>): McpServer.SkillItem => ({
  ...item,
  files: item.files.map((file) => ({
    ...file,
    read: (ctx) => Effect.zipRight(Effect.sync(() => reads.push(file.resource.uri)), file.read(ctx))
  }))
})

const connect = (skills: ReadonlyArray<McpServer.SkillItem>, protocolVersion?: McpSchema.Revision) =>
  Effect.gen(function*() {
    const server = yield* McpServer.fromItems({ serverInfo: { name: "skills", version: "1.0.0" }, skills })
    const { transport } = yield* McpServer.connectMemory(server, { name: "skills" })
    return yield* McpClient.make({ protocolVersion }).pipe(Effect.provideService(Transport, transport))
  })

const failure = <A>(exit: Exit.Exit<A, McpError.McpError>): McpError.McpError => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (!(error instanceof McpError.McpError)) throw new Error(`expected an McpError: ${String(exit.cause)}`)
  return error
}

const eras: ReadonlyArray<readonly [string, McpSchema.Revision]> = [["legacy", "2025-11-25"], ["modern", "2026-07-28"]]

describe.each(eras)("skills, %s", (_era, protocolVersion) => {
  it.scoped("the server declares the extension and lists entries with digests; listing and getting read no file", () =>
    Effect.gen(function*() {
      const reads: Array<string> = []
      const client = yield* connect([counted(pdf, reads), refunds], protocolVersion)
      expect(client.protocolVersion).toBe(protocolVersion)
      expect(client.capabilities.extensions).toMatchObject({ [McpSchema.SKILLS_EXTENSION]: {} })
      expect(client.capabilities.resources).toBeDefined()
      const skills = yield* client.listSkills()
      expect(skills.map((skill) => skill.uri)).toEqual([
        "skill://pdf-processing/SKILL.md",
        "skill://acme/billing/refunds/SKILL.md"
      ])
      const [entry] = skills
      expect(entry!.frontmatter).toEqual({
        name: "pdf-processing",
        description: "Extract, fill, and assemble PDF documents",
        metadata: { author: "mcp-fleet", tags: ["pdf", "forms"] }
      })
      expect(entry!.resources).toEqual([
        {
          uri: "skill://pdf-processing/SKILL.md",
          digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
          size: SKILL_BYTES
        },
        { uri: "skill://pdf-processing/references/FORMS.md", digest: expect.any(String), size: FORMS.length }
      ])
      expect(yield* client.getSkill(entry!.uri)).toEqual(entry)
      const unknown = failure(yield* Effect.exit(client.getSkill("skill://nothing/SKILL.md")))
      expect(unknown.reason).toMatchObject({ _tag: "Protocol", code: -32602 })
      // The SKILL.md is a resource named and described from its frontmatter.
      const listed = (yield* client.listResources()).find((resource) => resource.uri === entry!.uri)
      expect(listed).toMatchObject({
        name: "pdf-processing",
        description: "Extract, fill, and assemble PDF documents",
        mimeType: "text/markdown"
      })
      expect(reads).toEqual([])
    }))

  it.scoped("loads a skill: SKILL.md only, verified; its other files one at a time, verified", () =>
    Effect.gen(function*() {
      const reads: Array<string> = []
      const client = yield* connect([counted(pdf, reads)], protocolVersion)
      const loaded = yield* client.loadSkill("skill://pdf-processing/SKILL.md")
      expect(loaded.text).toBe(SKILL_MD)
      expect(loaded.files).toEqual([expect.objectContaining({ uri: "skill://pdf-processing/references/FORMS.md" })])
      expect(reads).toEqual(["skill://pdf-processing/SKILL.md"])
      const forms = yield* client.readSkillFile(loaded.skill, "skill://pdf-processing/references/FORMS.md")
      expect(forms.text).toBe(FORMS)
      expect(forms.bytes.byteLength).toBe(FORMS.length)
      const unlisted = failure(yield* Effect.exit(client.readSkillFile(loaded.skill, "skill://pdf-processing/x.md")))
      expect(unlisted.reason).toMatchObject({ _tag: "Validation" })
      expect(unlisted.message).toContain("does not list it")
      expect(reads).toEqual(["skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md"])
    }))
})

// The entry a server lists, changed so that the file it serves no longer matches it.
const tampered = (change: (skill: McpSchema.Skill) => McpSchema.Skill): McpServer.SkillItem => ({
  ...pdf,
  skill: change(pdf.skill)
})

const withMain = (skill: McpSchema.Skill, file: Partial<McpSchema.SkillFile>): McpSchema.Skill => ({
  ...skill,
  resources: (skill.resources as ReadonlyArray<McpSchema.SkillFile>).map((entry) =>
    entry.uri === skill.uri ? { ...entry, ...file } : entry
  )
})

describe("skills, verification", () => {
  const cases: ReadonlyArray<readonly [string, McpServer.SkillItem, string]> = [
    ["a wrong size", tampered((skill) => withMain(skill, { size: 10 })), `${SKILL_BYTES} bytes, the manifest says 10`],
    [
      "a wrong digest",
      tampered((skill) => withMain(skill, { digest: `sha256:${"0".repeat(64)}` })),
      "its digest is sha256:"
    ],
    [
      "a frontmatter field that differs",
      tampered((skill) => ({ ...skill, frontmatter: { ...skill.frontmatter, description: "Something else" } })),
      "its frontmatter differs from the entry's in \"description\""
    ],
    [
      "a frontmatter field the entry lacks",
      tampered((skill) => ({
        ...skill,
        frontmatter: { name: "pdf-processing", description: skill.frontmatter.description }
      })),
      "\"metadata\""
    ]
  ]

  it.scoped.each(cases)(
    "refuses a SKILL.md with %s, and reads nothing more",
    ([_name, item, message]) =>
      Effect.gen(function*() {
        const reads: Array<string> = []
        const client = yield* connect([counted(item, reads)])
        const [entry] = yield* client.listSkills()
        const refused = failure(yield* Effect.exit(client.loadSkill(entry!)))
        expect(refused.reason).toMatchObject({ _tag: "Validation", method: "resources/read" })
        expect(refused.message).toContain("skill://pdf-processing/SKILL.md failed verification")
        expect(refused.message).toContain(message)
        expect(reads).toEqual(["skill://pdf-processing/SKILL.md"])
      })
  )

  it.scoped("refuses a SKILL.md without frontmatter, even from a dynamic entry", () =>
    Effect.gen(function*() {
      const bare = McpServer.resource({
        uri: "skill://bare/SKILL.md",
        name: "bare",
        read: () => Effect.succeed({ contents: [{ uri: "skill://bare/SKILL.md", text: "no frontmatter" }] })
      })
      const server = yield* McpServer.fromItems({
        serverInfo: { name: "s", version: "1" },
        resources: [bare],
        skills: []
      })
      const { transport } = yield* McpServer.connectMemory(server)
      const client = yield* McpClient.make().pipe(Effect.provideService(Transport, transport))
      const entry: McpSchema.Skill = {
        uri: "skill://bare/SKILL.md",
        frontmatter: { name: "bare", description: "d" },
        resources: "dynamic"
      }
      const refused = failure(yield* Effect.exit(client.loadSkill(entry)))
      expect(refused.message).toContain("no leading --- delimited YAML frontmatter")
      expect(yield* client.listSkills()).toEqual([])
    }))

  it.scoped("a server without the extension: skills calls are Unsupported, nothing is sent", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.fromItems({ serverInfo: { name: "plain", version: "1" }, tools: [] })
      const { transport } = yield* McpServer.connectMemory(server)
      const client = yield* McpClient.make().pipe(Effect.provideService(Transport, transport))
      expect(failure(yield* Effect.exit(client.listSkills())).reason._tag).toBe("Unsupported")
    }))

  it("McpServer.skill refuses a SKILL.md without a name and description", () => {
    expect(() => McpServer.skill({ files: { "SKILL.md": "---\nname: x\n---\n" } })).toThrow(/name and description/)
    expect(() => McpServer.skill({ files: { "README.md": "" } })).toThrow(/SKILL.md/)
  })
})
