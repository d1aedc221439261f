/**
 * The fleet's catalog: every tool, resource, template and prompt of every server, each
 * tagged with its server. Tools and prompts get qualified names (`mcp__<server>__<tool>`)
 * that are safe for model APIs (`[A-Za-z0-9_-]`, at most 64 characters), unique across the
 * fleet, and map back exactly to (server, original name).
 *
 * **Naming rule.** A qualified name's server is the text between the prefix's separator and
 * the next separator (`serverOf`); every caller (`call`, `tools`, the gateway, the bridges)
 * resolves a name through `findTool`, so all agree. A server name must therefore never hold
 * the separator, nor end with its first character (`serverNameError`: the config refuses
 * such names), and it is never cut: so the server part of a name is injective and no tool
 * name, whatever it holds (`backup__restore` included, left as it is), can make a name read
 * as another server's. A name too long keeps its server part whole and cuts the tool part,
 * ending with a hash of (server, tool). Names alike within one server (`a.b` and `a_b`)
 * are told apart by a hash. A server whose name breaks the rule anyway (a spec made in code)
 * gets a valid server part (separators squeezed, a hash of its name added), and whenever two
 * servers' names come out alike, the one the name's server part names exactly keeps it.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { sha256Hex } from "./internal/crypto.js"
import * as Hidden from "./internal/sanitize.js"
import * as McpError from "./McpError.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * How qualified names are built.
 *
 * @since 0.1.0
 */
export interface Naming {
  /** The first part of every name. Default: "mcp". An empty prefix leaves it out. */
  readonly prefix: string
  /** Between prefix, server and name. Default: "__". */
  readonly separator: string
  /** The longest name. Default: 64 (the limit of model tool-name fields). */
  readonly maxLength: number
}

/**
 * The default naming: `mcp__<server>__<name>`, at most 64 characters.
 *
 * @since 0.1.0
 */
export const defaultNaming: Naming = { prefix: "mcp", separator: "__", maxLength: 64 }

/**
 * A tool with its qualified name and server.
 *
 * @since 0.1.0
 */
export interface ToolEntry {
  readonly name: string
  readonly server: string
  readonly tool: McpSchema.Tool
  /** The hidden text its server's definition held, if any (see `SanitizeMode`). */
  readonly hidden?: HiddenText
}

/**
 * What sanitizing found in one item: where (`description`, `inputSchema.properties.x.title`...),
 * what kinds of hidden text, and what the catalog shows of it (`stripped`, or `flagged`:
 * made visible).
 *
 * @since 0.3.0
 * @category models
 */
export interface HiddenText {
  readonly fields: ReadonlyArray<string>
  readonly found: ReadonlyArray<Hidden.Hidden>
  readonly action: "stripped" | "flagged"
}

/**
 * A prompt with its qualified name and server.
 *
 * @since 0.1.0
 */
export interface PromptEntry {
  readonly name: string
  readonly server: string
  readonly prompt: McpSchema.Prompt
}

/**
 * A resource and its server. Resources keep their URIs.
 *
 * @since 0.1.0
 */
export interface ResourceEntry {
  readonly server: string
  readonly resource: McpSchema.Resource
}

/**
 * A resource template and its server.
 *
 * @since 0.1.0
 */
export interface TemplateEntry {
  readonly server: string
  readonly template: McpSchema.ResourceTemplate
}

/**
 * A skill (the skills extension, SEP-2640) and its server. Skills keep their URIs, as
 * resources do: a skill's files are its server's resources.
 *
 * @since 0.4.0
 */
export interface SkillEntry {
  readonly server: string
  readonly skill: McpSchema.Skill
}

/**
 * Names that came out the same for different (server, name) pairs, and what each became.
 * The server the name's server part names keeps it, else the first in (server, name) order;
 * the others get a hash suffix.
 *
 * @since 0.1.0
 */
export interface Collision {
  readonly kind: "tool" | "prompt"
  readonly name: string
  readonly entries: ReadonlyArray<{ readonly server: string; readonly original: string; readonly name: string }>
}

/**
 * What one server offers.
 *
 * @since 0.1.0
 */
export interface ServerLists {
  readonly tools: ReadonlyArray<McpSchema.Tool>
  readonly resources: ReadonlyArray<McpSchema.Resource>
  readonly templates: ReadonlyArray<McpSchema.ResourceTemplate>
  readonly prompts: ReadonlyArray<McpSchema.Prompt>
  /** Its skills' entries, when it declares the skills extension (no file of theirs is read). */
  readonly skills?: ReadonlyArray<McpSchema.Skill> | undefined
  /** What `sanitizeLists` found in them, for the catalog to show people. */
  readonly hidden?: { readonly action: HiddenText["action"]; readonly items: ReadonlyArray<Flagged> }
}

/**
 * Nothing at all.
 *
 * @since 0.1.0
 */
export const emptyLists: ServerLists = { tools: [], resources: [], templates: [], prompts: [] }

/**
 * The whole catalog at one moment.
 *
 * @since 0.1.0
 */
export interface Catalog {
  readonly tools: ReadonlyArray<ToolEntry>
  readonly resources: ReadonlyArray<ResourceEntry>
  readonly templates: ReadonlyArray<TemplateEntry>
  readonly prompts: ReadonlyArray<PromptEntry>
  /** Every server's skills, in server order. */
  readonly skills: ReadonlyArray<SkillEntry>
  readonly collisions: ReadonlyArray<Collision>
  /** Tools by qualified name. */
  readonly toolsByName: ReadonlyMap<string, ToolEntry>
  /** Prompts by qualified name. */
  readonly promptsByName: ReadonlyMap<string, PromptEntry>
}

/**
 * The empty catalog.
 *
 * @since 0.1.0
 */
export const empty: Catalog = {
  tools: [],
  resources: [],
  templates: [],
  prompts: [],
  skills: [],
  collisions: [],
  toolsByName: new Map(),
  promptsByName: new Map()
}

const unsafe = /[^A-Za-z0-9_-]/g

// Every character outside `[A-Za-z0-9_-]` becomes `_`.
const sanitize = (part: string): string => part.replace(unsafe, "_")

const digest = (server: string, original: string, length: number) =>
  sha256Hex(`${server}\u0000${original}`).slice(0, length)

const fit = (name: string, suffix: string, maxLength: number) =>
  suffix === "" && name.length <= maxLength ? name : `${name.slice(0, maxLength - suffix.length - 1)}_${suffix}`

const head = (naming: Naming) => naming.prefix === "" ? "" : `${naming.prefix}${naming.separator}`

// Room a cut name keeps for its tool part: one character, `_` and an 8-digit hash.
const HASH_ROOM = 10

/**
 * The server a qualified name names: the text between the prefix (with its separator) and
 * the next separator, or undefined when the name has no such part. The one reading of a
 * name, for everything that resolves one (see `findTool`).
 *
 * @since 0.2.0
 */
export const serverOf = (name: string, naming: Naming = defaultNaming): string | undefined => {
  const start = head(naming)
  if (!name.startsWith(start)) return undefined
  const end = name.indexOf(naming.separator, start.length)
  return end <= start.length ? undefined : name.slice(start.length, end)
}

/**
 * Why a server's name cannot stand in qualified names, or undefined when it can: its
 * sanitized form must read back as itself from `mcp__<server>__<tool>` whatever the tool is
 * (no separator in it, not ending with the separator's first character), and fit whole.
 *
 * @since 0.2.0
 */
export const serverNameError = (server: string, naming: Naming = defaultNaming): string | undefined => {
  const part = sanitize(server)
  if (part === "") return "is empty"
  if (`${part}${naming.separator}`.indexOf(naming.separator) !== part.length) {
    const what = part.includes(naming.separator) ? "contains" : "ends with"
    const text = what === "contains" ? naming.separator : naming.separator[0]
    return `${what} '${text}', so its tools' names (${head(naming)}${part}${naming.separator}<tool>) ` +
      `would read as another server's: rename it`
  }
  const room = naming.maxLength - head(naming).length - naming.separator.length - HASH_ROOM
  if (part.length > room) return `is ${part.length} characters long; at most ${room} fit in a qualified name`
  return undefined
}

// The server part of a server's names: its sanitized name when valid, else a valid stand-in
// (separators squeezed, a hash of the name added) that no valid name's tools reach by accident.
const serverPart = (server: string, naming: Naming): string => {
  const part = sanitize(server)
  if (serverNameError(server, naming) === undefined) return part
  const squeezed = part.replace(/_+/g, "_").replace(/^_|_$/g, "").slice(0, 20)
  return `${squeezed === "" ? "server" : squeezed}-${digest(server, "", 8)}`
}

/**
 * The qualified name of a server's tool or prompt before collisions are resolved. A name
 * longer than `maxLength` keeps its server part whole, is cut in its tool part and ends with
 * a short hash of (server, name), so it stays stable and distinct.
 *
 * @since 0.1.0
 */
export const qualify = (server: string, original: string, naming: Naming = defaultNaming): string => {
  const name = `${head(naming)}${serverPart(server, naming)}${naming.separator}${sanitize(original)}`
  return name.length <= naming.maxLength ? name : fit(name, digest(server, original, 8), naming.maxLength)
}

/**
 * A warning about a server's name that still works: a character outside `[A-Za-z0-9_-]`
 * (it becomes `_`), or undefined. Names that cannot work are `serverNameError`'s.
 *
 * @since 0.1.0
 */
export const serverNameProblem = (server: string, naming: Naming = defaultNaming): string | undefined =>
  /[^A-Za-z0-9_-]/.test(server)
    ? `has characters other than letters, digits, _ and -, so its tools are named ${qualify(server, "", naming)}<tool>`
    : undefined

/**
 * The errors of a fleet's server names: each name `serverNameError` refuses, and each pair
 * whose names sanitize alike (`a.b`, `a_b`), by name.
 *
 * @since 0.2.0
 */
export const serverNameErrors = (
  servers: Iterable<string>,
  naming: Naming = defaultNaming
): ReadonlyMap<string, string> => {
  const errors = new Map<string, string>()
  const byPart = new Map<string, string>()
  for (const server of servers) {
    const error = serverNameError(server, naming)
    if (error !== undefined) {
      errors.set(server, error)
      continue
    }
    const other = byPart.get(sanitize(server))
    if (other !== undefined && other !== server) {
      errors.set(server, `names its tools ${qualify(server, "", naming)}<tool>, as server '${other}' does: rename one`)
    }
    byPart.set(sanitize(server), server)
  }
  return errors
}

/**
 * The tool a name means in `catalog`: the one function `call`, `tools`, the gateway and the
 * bridges resolve a qualified name with.
 *
 * @since 0.2.0
 */
export const findTool = (catalog: Pick<Catalog, "toolsByName">, name: string): ToolEntry | undefined =>
  catalog.toolsByName.get(name)

interface Candidate<A> {
  readonly server: string
  readonly original: string
  readonly item: A
  readonly hidden?: HiddenText
}

// What sanitizing found in a server's tool, by the tool's name.
const hiddenTools = (lists: ServerLists): ReadonlyMap<string, HiddenText> => {
  const found = new Map<string, HiddenText>()
  for (const item of lists.hidden?.items ?? []) {
    if (item.kind === "tool") {
      found.set(item.name, { fields: item.fields, found: item.found, action: lists.hidden!.action })
    }
  }
  return found
}

const compare = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0

// Groups candidates by base name; in each group of two or more the server the base's server
// part names exactly comes first, then (server, name) order: the first keeps the base and
// the others get a hash suffix, so the outcome depends only on the set, never on the order
// servers came up in, and a name never goes to a server its prefix does not name.
const assign = <A>(
  kind: Collision["kind"],
  candidates: ReadonlyArray<Candidate<A>>,
  naming: Naming,
  collisions: Array<Collision>
): Map<string, Candidate<A>> => {
  const groups = new Map<string, Array<Candidate<A>>>()
  for (const candidate of candidates) {
    const base = qualify(candidate.server, candidate.original, naming)
    const group = groups.get(base)
    if (group === undefined) groups.set(base, [candidate])
    else group.push(candidate)
  }
  const named = new Map<string, Candidate<A>>()
  const later: Array<[string, Array<Candidate<A>>]> = []
  for (const [base, group] of groups) {
    if (group.length === 1) named.set(base, group[0]!)
    else later.push([base, group])
  }
  for (const [base, group] of later) {
    const owner = serverOf(base, naming)
    const foreign = (candidate: Candidate<A>) => candidate.server === owner ? 0 : 1
    group.sort((a, b) => foreign(a) - foreign(b) || compare(a.server, b.server) || compare(a.original, b.original))
    const entries: Array<Collision["entries"][number]> = []
    group.forEach((candidate, index) => {
      let name = base
      if (index > 0) {
        // A suffixed name could itself be taken: lengthen the hash until it is free.
        for (let length = 6; named.has(name); length += 2) {
          name = fit(base, digest(candidate.server, candidate.original, length), naming.maxLength)
        }
      }
      named.set(name, candidate)
      entries.push({ server: candidate.server, original: candidate.original, name })
    })
    collisions.push({ kind, name: base, entries })
  }
  return named
}

/**
 * Builds the catalog from what each server offers.
 *
 * @since 0.1.0
 */
export const make = (servers: ReadonlyMap<string, ServerLists>, naming: Naming = defaultNaming): Catalog => {
  const toolCandidates: Array<Candidate<McpSchema.Tool>> = []
  const promptCandidates: Array<Candidate<McpSchema.Prompt>> = []
  const resources: Array<ResourceEntry> = []
  const templates: Array<TemplateEntry> = []
  const skills: Array<SkillEntry> = []
  for (const [server, lists] of servers) {
    const hidden = hiddenTools(lists)
    for (const tool of lists.tools) {
      const found = hidden.get(tool.name)
      toolCandidates.push({
        server,
        original: tool.name,
        item: tool,
        ...(found === undefined ? {} : { hidden: found })
      })
    }
    for (const prompt of lists.prompts) promptCandidates.push({ server, original: prompt.name, item: prompt })
    for (const resource of lists.resources) resources.push({ server, resource })
    for (const template of lists.templates) templates.push({ server, template })
    for (const skill of lists.skills ?? []) skills.push({ server, skill })
  }
  const collisions: Array<Collision> = []
  const toolsByName = new Map<string, ToolEntry>()
  for (const [name, { hidden, item, server }] of assign("tool", toolCandidates, naming, collisions)) {
    toolsByName.set(name, { name, server, tool: item, ...(hidden === undefined ? {} : { hidden }) })
  }
  const promptsByName = new Map<string, PromptEntry>()
  for (const [name, { item, server }] of assign("prompt", promptCandidates, naming, collisions)) {
    promptsByName.set(name, { name, server, prompt: item })
  }
  return {
    tools: [...toolsByName.values()],
    resources,
    templates,
    prompts: [...promptsByName.values()],
    skills,
    collisions,
    toolsByName,
    promptsByName
  }
}

/**
 * The skill `named` names among `skills`: the one whose `SKILL.md` URI it is, else the one
 * whose name it is. Fails with a NotFound reason (with the closest names), or a Validation
 * reason when servers share the name (naming the URIs to ask by).
 *
 * @since 0.4.0
 * @category utils
 */
export const findSkill = (
  skills: ReadonlyArray<SkillEntry>,
  named: string
): Effect.Effect<SkillEntry, McpError.McpError> => {
  const byUri = skills.find((entry) => entry.skill.uri === named)
  const found = byUri !== undefined ? [byUri] : skills.filter((entry) => entry.skill.frontmatter.name === named)
  if (found.length === 1) return Effect.succeed(found[0]!)
  return Effect.fail(
    found.length === 0
      ? McpError.notFound(undefined, {
        what: "skill",
        name: named,
        suggestions: suggest(named, skills.map((entry) => entry.skill.frontmatter.name))
      })
      : McpError.validation(undefined, {
        message: `more than one skill is named ${named}: name it by URI, one of ${
          found.map((entry) => entry.skill.uri).join(", ")
        }`
      })
  )
}

/**
 * What changed between two lists of one server, matched by `key`.
 *
 * @since 0.1.0
 */
export interface Diff<A> {
  readonly added: ReadonlyArray<A>
  readonly removed: ReadonlyArray<A>
  readonly changed: ReadonlyArray<A>
}

/**
 * Compares two lists by key; an item whose JSON differs is changed.
 *
 * @since 0.1.0
 */
export const diff = <A>(before: ReadonlyArray<A>, after: ReadonlyArray<A>, key: (item: A) => string): Diff<A> => {
  const old = new Map<string, A>()
  for (const item of before) old.set(key(item), item)
  const added: Array<A> = []
  const changed: Array<A> = []
  for (const item of after) {
    const k = key(item)
    const previous = old.get(k)
    if (previous === undefined) added.push(item)
    else if (JSON.stringify(previous) !== JSON.stringify(item)) changed.push(item)
    old.delete(k)
  }
  return { added, removed: [...old.values()], changed }
}

/**
 * Whether a diff has anything in it.
 *
 * @since 0.1.0
 */
export const isEmptyDiff = (diff: Diff<unknown>): boolean =>
  diff.added.length === 0 && diff.removed.length === 0 && diff.changed.length === 0

/**
 * The names closest to `name`, best first: those that contain it or are contained in it,
 * then those within a small edit distance.
 *
 * @since 0.1.0
 */
export const suggest = (name: string, candidates: Iterable<string>, limit = 3): ReadonlyArray<string> => {
  const lower = name.toLowerCase()
  const scored: Array<[number, string]> = []
  const budget = Math.max(2, Math.floor(name.length / 6))
  for (const candidate of candidates) {
    const other = candidate.toLowerCase()
    const distance = other.includes(lower) || lower.includes(other) ? 0 : editDistance(lower, other, budget)
    if (distance <= budget) scored.push([distance, candidate])
  }
  scored.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1))
  return scored.slice(0, limit).map(([, candidate]) => candidate)
}

// Levenshtein distance, giving up (returning budget + 1) once every cell of a row exceeds it.
const editDistance = (a: string, b: string, budget: number): number => {
  if (Math.abs(a.length - b.length) > budget) return budget + 1
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost)
      row.push(value)
      if (value < best) best = value
    }
    if (best > budget) return budget + 1
    previous = row
  }
  return previous[b.length]!
}

// --- hidden text ---------------------------------------------------------------------

/**
 * What the fleet does with hidden text (Unicode tag characters, zero-width characters, bidi
 * controls, HTML comments, ANSI escapes and other control characters) in the titles and
 * descriptions of a server's tools, prompts, resources and templates, at any depth (schema
 * properties and prompt arguments too), before the catalog shows them to a model: `strip`
 * removes it (the default: a model never reads what a person cannot see), `flag` makes it
 * visible (`⟦hidden: "…"⟧`, `⟦U+200B⟧`), `off` leaves it. Names are never changed (a call
 * must reach the server under its own name) but are reported; qualified names are plain
 * ASCII anyway. Either way the item is reported (`ToolFlagged`) and its catalog entry says
 * what was found (`ToolEntry.hidden`, shown by `mcp-fleet tools`).
 *
 * @since 0.3.0
 * @category models
 */
export type SanitizeMode = "strip" | "flag" | "off"

/**
 * The default SanitizeMode: `strip`.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultSanitize: SanitizeMode = "strip"

/**
 * One item of a server's lists that held hidden text.
 *
 * @since 0.3.0
 * @category models
 */
export interface Flagged {
  readonly kind: "tool" | "prompt" | "resource" | "template"
  /** Its name on its server. */
  readonly name: string
  /** Where the hidden text was: `description`, `inputSchema.properties.path.description`... */
  readonly fields: ReadonlyArray<string>
  readonly found: ReadonlyArray<Hidden.Hidden>
}

// Every title and description at any depth, cleaned as `mode` says; names only looked at.
const scrub = (
  value: unknown,
  path: string,
  mode: SanitizeMode,
  seen: { fields: Array<string>; found: Set<Hidden.Hidden> }
): unknown => {
  if (Array.isArray(value)) return value.map((item, i) => scrub(item, `${path}[${i}]`, mode, seen))
  if (value === null || typeof value !== "object") return value
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    const where = path === "" ? key : `${path}.${key}`
    if (typeof field === "string" && (key === "title" || key === "description" || key === "name")) {
      const found = Hidden.findHidden(field)
      if (found.length > 0) {
        seen.fields.push(where)
        for (const kind of found) seen.found.add(kind)
      }
      out[key] = found.length === 0 || key === "name"
        ? field
        : mode === "strip"
        ? Hidden.strip(field)
        : Hidden.flag(field)
    } else {
      out[key] = key === "_meta" ? field : scrub(field, where, mode, seen)
    }
  }
  return out
}

/**
 * A server's lists with hidden text handled as `mode` says, and the items that held some.
 * Items without hidden text are kept as they are (the same objects).
 *
 * @since 0.3.0
 * @category utils
 */
export const sanitizeLists = (
  lists: ServerLists,
  mode: SanitizeMode
): { readonly lists: ServerLists; readonly flagged: ReadonlyArray<Flagged> } => {
  // Lists kept from an earlier pass (a replaced server's) carry what it found: this pass says afresh.
  if (lists.hidden !== undefined) {
    return sanitizeLists({
      tools: lists.tools,
      resources: lists.resources,
      templates: lists.templates,
      prompts: lists.prompts,
      skills: lists.skills
    }, mode)
  }
  if (mode === "off") return { lists, flagged: [] }
  const flagged: Array<Flagged> = []
  const each = <A extends { readonly name: string }>(items: ReadonlyArray<A>, kind: Flagged["kind"]) =>
    items.map((item) => {
      const seen = { fields: [] as Array<string>, found: new Set<Hidden.Hidden>() }
      const cleaned = scrub(item, "", mode, seen) as A
      if (seen.fields.length === 0) return item
      flagged.push({ kind, name: item.name, fields: seen.fields, found: [...seen.found] })
      return cleaned
    })
  const next: ServerLists = {
    tools: each(lists.tools, "tool"),
    resources: each(lists.resources, "resource"),
    templates: each(lists.templates, "template"),
    prompts: each(lists.prompts, "prompt"),
    skills: lists.skills
  }
  const hidden = { action: mode === "strip" ? "stripped" as const : "flagged" as const, items: flagged }
  return { lists: flagged.length === 0 ? lists : { ...next, hidden }, flagged }
}
