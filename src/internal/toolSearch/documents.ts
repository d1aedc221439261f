/**
 * What of a tool is searched: its fields as words (names split at `_`, `-`, `.` and camelCase
 * humps), and the one text its embedding is made of.
 *
 * @internal
 */
import type * as McpSchema from "../../McpSchema.js"

/**
 * One tool as the index holds it.
 */
export interface ToolDocument {
  /** The qualified name: the document's id. */
  readonly id: string
  readonly server: string
  /** The original name, split into words. */
  readonly name: string
  readonly title: string
  readonly description: string
  /** Parameter names (split into words) and their descriptions. */
  readonly parameters: string
  /** The server's name, split into words, and its instructions. */
  readonly serverText: string
}

/** The searched fields, for the lexical index. */
export const fields = ["name", "title", "description", "parameters", "serverText"] as const

/** `createIssue`, `create_issue`, `create-issue`, `HTTPServer2` → words. */
export const splitWords = (text: string): string =>
  text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/[_\-./:]+/g, " ")

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// Parameter names and descriptions, one level of nesting deep (objects and array items too).
const parameterText = (schema: unknown, depth = 0): Array<string> => {
  if (!isRecord(schema) || depth > 2) return []
  const out: Array<string> = []
  const properties = isRecord(schema.properties) ? schema.properties : {}
  for (const [key, value] of Object.entries(properties)) {
    out.push(splitWords(key))
    if (isRecord(value)) {
      if (typeof value.description === "string") out.push(value.description)
      if (typeof value.title === "string") out.push(value.title)
      if (Array.isArray(value.enum)) out.push(value.enum.filter((v) => typeof v === "string").join(" "))
      for (const nested of [value, value.items]) {
        for (const text of parameterText(nested, depth + 1)) out.push(text)
      }
    }
  }
  return out
}

/**
 * The document of a tool of a server.
 */
export const toolDocument = (
  id: string,
  server: string,
  tool: McpSchema.Tool,
  instructions: string | undefined
): ToolDocument => ({
  id,
  server,
  name: splitWords(tool.name),
  title: tool.title ?? tool.annotations?.title ?? "",
  description: tool.description ?? "",
  parameters: parameterText(tool.inputSchema).join(" \n"),
  serverText: instructions === undefined ? splitWords(server) : `${splitWords(server)} \n${instructions}`
})

const firstSentence = (text: string): string => {
  const end = text.search(/[.!?](\s|$)/)
  return (end === -1 ? text : text.slice(0, end + 1)).slice(0, 300)
}

/**
 * The text a tool's embedding is made of: its name in words, its server's, and the first
 * sentence of its description. A short text suits a sentence encoder best: parameters and
 * the rest of a long description blur what the tool is for.
 */
export const embeddingText = (document: ToolDocument): string =>
  `${document.name} (${splitWords(document.server)}). ${firstSentence(document.description)}`.trim()
