/**
 * Edits of a config file's text that touch only the server concerned: its comments,
 * formatting, other keys and other servers stay exactly as they were.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import type jsonc from "jsonc-parser"
import * as Jsonc from "../internal/jsonc.js"

type Node = jsonc.Node

interface Edit {
  readonly offset: number
  readonly length: number
  readonly text: string
}

// Applied from the end, so offsets stay valid; of two edits at one offset the first listed
// ends up first in the text.
const apply = (text: string, edits: ReadonlyArray<Edit>): string =>
  edits.map((edit, index) => ({ edit, index })).sort((a, b) => b.edit.offset - a.edit.offset || b.index - a.index).map((
    { edit }
  ) => edit).reduce(
    (result, edit) => result.slice(0, edit.offset) + edit.text + result.slice(edit.offset + edit.length),
    text
  )

const parseTree = (text: string, path: string): Either.Either<Node, string> =>
  Either.match(Jsonc.parseTree(text), {
    onLeft: (problem) => Either.left(`${path} is not a JSON object that can be edited (${Jsonc.describe(problem)})`),
    onRight: (root) =>
      root.type === "object" ? Either.right(root) : Either.left(`${path} is not a JSON object that can be edited`)
  })

const propertyOf = (object: Node, key: string): Node | undefined =>
  object.children?.find((property) => property.children?.[0]?.value === key)

const lineStart = (text: string, offset: number) => text.lastIndexOf("\n", offset - 1) + 1

// The whitespace before `offset` on its line, or undefined when something else precedes it.
const indentAt = (text: string, offset: number): string | undefined => {
  const before = text.slice(lineStart(text, offset), offset)
  return /^[ \t]*$/.test(before) ? before : undefined
}

// The file's indentation unit: the first indented line's whitespace, else two spaces.
const unitOf = (text: string): string => /\n([ \t]+)\S/.exec(text)?.[1] ?? "  "

// Past spaces and a `//` or `/* */` comment on the same line.
const skipInline = (text: string, offset: number): number => {
  let at = offset
  while (text[at] === " " || text[at] === "\t") at++
  if (text.startsWith("//", at)) {
    const end = text.indexOf("\n", at)
    return end === -1 ? text.length : end
  }
  if (text.startsWith("/*", at)) {
    const end = text.indexOf("*/", at + 2)
    return skipInline(text, end === -1 ? text.length : end + 2)
  }
  return at
}

// Past whitespace and comments of any length.
const skipTrivia = (text: string, offset: number): number => {
  let at = offset
  for (;;) {
    const next = skipInline(text, at)
    if (text[next] === "\n" || text[next] === "\r") at = next + 1
    else return next
  }
}

const pretty = (value: unknown, indent: string, unit: string): string =>
  JSON.stringify(value, null, unit).split("\n").join(`\n${indent}`)

// Adds `"key": value` as the last member of `object`, in the style of its members: one per
// line at their indentation, or inline for a one-line object.
const insertProperty = (text: string, object: Node, key: string, value: unknown): ReadonlyArray<Edit> => {
  const unit = unitOf(text)
  const members = object.children ?? []
  const objectLineIndent = /^[ \t]*/.exec(text.slice(lineStart(text, object.offset)))![0]
  if (members.length === 0) {
    const indent = objectLineIndent + unit
    return [{
      offset: object.offset,
      length: object.length,
      text: `{\n${indent}${JSON.stringify(key)}: ${pretty(value, indent, unit)}\n${objectLineIndent}}`
    }]
  }
  const last = members[members.length - 1]!
  const end = last.offset + last.length
  const indent = indentAt(text, last.offset)
  const member = (at: string) => `${JSON.stringify(key)}: ${pretty(value, at, unit)}`
  if (indent === undefined) {
    return [{ offset: end, length: 0, text: `, ${JSON.stringify(key)}: ${JSON.stringify(value)}` }]
  }
  // A trailing comma already there is kept, and one is written after the new member too.
  const afterLast = skipTrivia(text, end)
  if (text[afterLast] === ",") {
    const lineEnd = skipInline(text, afterLast + 1)
    return [{ offset: lineEnd, length: 0, text: `\n${indent}${member(indent)},` }]
  }
  // The new member goes after a comment that ends the last member's line.
  const lineEnd = skipInline(text, end)
  return [
    { offset: end, length: 0, text: "," },
    { offset: lineEnd, length: 0, text: `\n${indent}${member(indent)}` }
  ]
}

// The start of the comment lines right above the line at `start` (no blank line between):
// they are about that line's member, and go with it.
const ownComments = (text: string, start: number): number => {
  let at = start
  while (at > 0) {
    const above = lineStart(text, at - 1)
    const line = text.slice(above, at).trim()
    if (line.startsWith("//") || (line.startsWith("/*") && line.endsWith("*/"))) {
      at = above
      continue
    }
    // The last line of a comment over several lines: it goes if the comment has lines of its own.
    const open = line.endsWith("*/") ? text.lastIndexOf("/*", at) : -1
    if (open === -1 || indentAt(text, open) === undefined) return at
    at = lineStart(text, open)
  }
  return at
}

// Removes one member, its comma and its own line (with the comments right above it), or the
// comma before it when it is last.
const removeProperty = (text: string, object: Node, property: Node): ReadonlyArray<Edit> => {
  const members = object.children ?? []
  const index = members.indexOf(property)
  const ownLine = indentAt(text, property.offset) !== undefined
  const start = ownLine ? ownComments(text, lineStart(text, property.offset)) : property.offset
  let end = property.offset + property.length
  const afterValue = skipTrivia(text, end)
  const hasComma = text[afterValue] === ","
  if (hasComma) end = afterValue + 1
  if (ownLine) {
    end = skipInline(text, end)
    if (text[end] === "\r") end++
    if (text[end] === "\n") end++
  } else if (hasComma) {
    while (text[end] === " ") end++
  }
  if (!ownLine && !hasComma && index > 0) {
    // The last member of a one-line object goes with the comma and space before it.
    const previous = members[index - 1]!
    const from = previous.offset + previous.length
    return [{ offset: from, length: end - from, text: "" }]
  }
  const edits: Array<Edit> = [{ offset: start, length: end - start, text: "" }]
  if (!hasComma && index > 0) {
    const previous = members[index - 1]!
    const comma = skipTrivia(text, previous.offset + previous.length)
    if (text[comma] === ",") edits.push({ offset: comma, length: 1, text: "" })
  }
  return edits
}

// Where a file keeps its servers: `mcpServers`, else `servers` (VS Code), else none yet.
const serversOf = (root: Node): Node | undefined =>
  (propertyOf(root, "mcpServers") ?? propertyOf(root, "servers"))?.children?.[1]

/**
 * The text of a new config file holding one server.
 *
 * @since 0.1.0
 */
export const newFile = (name: string, entry: Record<string, unknown>): string =>
  `${JSON.stringify({ mcpServers: { [name]: entry } }, null, 2)}\n`

/**
 * Adds a server, or with `replace` replaces an existing one of that name.
 *
 * @since 0.1.0
 */
export const addServer = (
  text: string,
  path: string,
  name: string,
  entry: Record<string, unknown>,
  replace = false
): Either.Either<string, string> =>
  Either.flatMap(parseTree(text, path), (root) => {
    const servers = serversOf(root)
    if (servers === undefined) {
      return Either.right(apply(text, insertProperty(text, root, "mcpServers", { [name]: entry })))
    }
    if (servers.type !== "object") return Either.left(`the servers of ${path} are not an object`)
    const existing = propertyOf(servers, name)
    if (existing === undefined) return Either.right(apply(text, insertProperty(text, servers, name, entry)))
    if (!replace) return Either.left(`server '${name}' already exists in ${path}; pass --force to replace it`)
    const value = existing.children![1]!
    const indent = /^[ \t]*/.exec(text.slice(lineStart(text, existing.offset)))![0]
    return Either.right(
      apply(text, [{ offset: value.offset, length: value.length, text: pretty(entry, indent, unitOf(text)) }])
    )
  })

const serverNode = (text: string, path: string, name: string) =>
  Either.flatMap(parseTree(text, path), (root) => {
    const servers = serversOf(root)
    const property = servers?.type === "object" ? propertyOf(servers, name) : undefined
    return property === undefined || servers === undefined
      ? Either.left(`there is no server '${name}' in ${path}`)
      : Either.right({ servers, property })
  })

/**
 * Removes a server.
 *
 * @since 0.1.0
 */
export const removeServer = (text: string, path: string, name: string): Either.Either<string, string> =>
  Either.map(
    serverNode(text, path, name),
    ({ property, servers }) => apply(text, removeProperty(text, servers, property))
  )

/**
 * Enables or disables a server: `"disabled": true` is written or removed, and an
 * `"enabled": false` is made true.
 *
 * @since 0.1.0
 */
export const setEnabled = (text: string, path: string, name: string, enabled: boolean): Either.Either<string, string> =>
  Either.flatMap(serverNode(text, path, name), ({ property }) => {
    const entry = property.children![1]!
    if (entry.type !== "object") return Either.left(`server '${name}' in ${path} is not an object`)
    const disabled = propertyOf(entry, "disabled")
    const enabledFlag = propertyOf(entry, "enabled")
    const edits: Array<Edit> = []
    const setValue = (member: Node, value: boolean) => {
      const node = member.children![1]!
      edits.push({ offset: node.offset, length: node.length, text: String(value) })
    }
    if (enabled) {
      if (disabled !== undefined) { for (const edit of removeProperty(text, entry, disabled)) edits.push(edit) }
      if (enabledFlag !== undefined && enabledFlag.children?.[1]?.value !== true) setValue(enabledFlag, true)
    } else if (disabled !== undefined) {
      setValue(disabled, true)
    } else {
      for (const edit of insertProperty(text, entry, "disabled", true)) edits.push(edit)
    }
    return Either.right(apply(text, edits))
  })
