/**
 * `skills` and `skill`: the fleet's skills (the skills extension, SEP-2640). `skills` lists
 * them by their entries alone (no file of theirs is read); `skill <name|uri> [file]` loads
 * one, its `SKILL.md` verified against its entry (size, digest, frontmatter) before it is
 * printed, or reads one of its other files, verified the same way.
 *
 * @since 0.4.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../../Catalog.js"
import { fileUriOf } from "../../internal/skillFiles.js"
import type * as McpSchema from "../../McpSchema.js"
import * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as Settings from "../Settings.js"

// A manifest's files as counted for people: how many, and their bytes.
const sizeOf = (skill: McpSchema.Skill) =>
  skill.resources === "dynamic"
    ? "dynamic"
    : `${skill.resources.length} files, ${skill.resources.reduce((sum, file) => sum + file.size, 0)} bytes`

/**
 * `mcp-fleet skills [server]`: the skills of the fleet, or of one server.
 *
 * @since 0.4.0
 */
export const skills = Command.make("skills", {
  ...Settings.options,
  server: Fleet.serverArg("server").pipe(Args.optional)
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const started = yield* Fleet.start(settings, { only: Option.getOrUndefined(given.server) })
    const listed = (yield* SubscriptionRef.get(started.registry.catalog)).skills
    if (settings.json) return yield* Render.json(listed.map((entry) => ({ server: entry.server, ...entry.skill })))
    yield* Render.lines(Render.table([
      ["server", "skill", "uri", "files", "description"],
      ...listed.map((entry) => [
        entry.server,
        entry.skill.frontmatter.name,
        entry.skill.uri,
        sizeOf(entry.skill),
        Render.clip(entry.skill.frontmatter.description, 60)
      ])
    ]))
    yield* Render.note(`${listed.length} skills; mcp-fleet skill <name> loads one`)
  }).pipe(Fleet.oneShot)).pipe(
    Command.withDescription("List the skills of the fleet (SEP-2640), or of one server: mcp-fleet skills [server]")
  )

/**
 * `mcp-fleet skill <name|uri> [file]`: one skill loaded, or one of its files read, verified.
 *
 * @since 0.4.0
 */
export const skill = Command.make("skill", {
  ...Settings.options,
  skill: Args.text({ name: "skill" }).pipe(Args.withDescription("The skill: its name, or the URI of its SKILL.md")),
  file: Args.text({ name: "file" }).pipe(
    Args.withDescription("One of its other files to read instead: its path in the skill, or its URI"),
    Args.optional
  )
}, (given) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings(given)
    const started = yield* Fleet.start(settings)
    const catalog = yield* SubscriptionRef.get(started.registry.catalog)
    const { server, skill } = yield* Catalog.findSkill(catalog.skills, given.skill)
    if (Option.isSome(given.file)) {
      const uri = fileUriOf(skill.uri, given.file.value)
      const read = yield* started.registry.withClient(server, (client) => client.readSkillFile(skill, uri))
      if (settings.json) return yield* Render.json({ server, uri, mimeType: read.mimeType ?? null, text: read.text })
      return yield* Render.lines([read.text])
    }
    const loaded = yield* started.registry.withClient(server, (client) => client.loadSkill(skill))
    if (settings.json) return yield* Render.json({ server, ...loaded })
    yield* Render.lines([loaded.text])
    if (loaded.files !== "dynamic" && loaded.files.length > 0) {
      yield* Render.note(`other files: ${loaded.files.map((f) => f.uri).join(", ")}`)
    }
  }).pipe(Fleet.oneShot)).pipe(
    Command.withDescription(
      "Load a skill, its SKILL.md verified against its entry (size, digest, frontmatter): mcp-fleet skill <name> [file]"
    )
  )
