/**
 * How the CLI prints: tables and readable content for people, JSON for programs, and one
 * sentence (or one JSON object) on stderr for an error. Whatever it prints may hold a
 * server's text, so no control sequence reaches the terminal: text is neutralised (escape
 * and control characters shown as `^[`, `<U+009B>`), JSON escapes them.
 *
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Hidden from "../internal/sanitize.js"
import * as Secrets from "../internal/secrets.js"
import * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"
import type * as ServerRegistry from "../ServerRegistry.js"
import * as ServerSpec from "../ServerSpec.js"
import { describe } from "../ServerState.js"

/**
 * Rows as aligned columns; the first row is the header, underlined.
 *
 * @since 0.1.0
 */
export const table = (rows: ReadonlyArray<ReadonlyArray<string>>): ReadonlyArray<string> => {
  if (rows.length === 0) return []
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)))
  const line = (row: ReadonlyArray<string>) =>
    row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd()
  return [line(rows[0]!), widths.map((width) => "-".repeat(width)).join("  "), ...rows.slice(1).map(line)]
}

/**
 * The fleet's status as a table: one row per server, with what it is (when ready) or what
 * went wrong (when not).
 *
 * @since 0.1.0
 */
export const statusTable = (statuses: ReadonlyArray<ServerRegistry.ServerStatus>, now: number): ReadonlyArray<string> =>
  table([
    ["server", "state", "transport", "protocol", "tools", "res", "prompts", "pid", "detail"],
    ...statuses.map((status) => [
      status.name,
      status.state._tag,
      status.transport,
      status.protocolVersion ?? "",
      String(status.counts.tools),
      String(status.counts.resources),
      String(status.counts.prompts),
      String(status.connection?.pid ?? ""),
      status.state._tag === "Ready"
        ? `${status.serverInfo?.name ?? ""} ${status.serverInfo?.version ?? ""}`.trim()
        : status.state._tag === "Disabled"
        ? `switched off: mcp-fleet enable ${status.name}`
        : clip(describe(status.state, now), 60)
    ])
  ])

/**
 * The first line of a text, cut to `max` characters with an ellipsis.
 *
 * @since 0.1.0
 */
export const clip = (text: string | undefined, max = 60): string => {
  if (text === undefined) return ""
  const first = text.trim().split("\n")[0]!
  return first.length > max ? `${first.slice(0, max - 1)}…` : first
}

const size = (base64: string): string => {
  const bytes = Math.floor(base64.length * 3 / 4)
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} B`
}

/**
 * One content block as text; binary content as a short note.
 *
 * @since 0.1.0
 */
export const content = (item: McpSchema.CallToolResult["content"][number]): string => {
  const any = item as unknown as Record<string, unknown>
  switch (item.type) {
    case "text":
      return String(any.text)
    case "image":
    case "audio":
      return `[${item.type} ${String(any.mimeType)}, ${size(String(any.data ?? ""))}]`
    case "resource_link":
      return `[link ${String(any.uri)}${any.name !== undefined ? ` (${String(any.name)})` : ""}]`
    case "resource":
      return resourceContents(any.resource as McpSchema.ReadResourceResult["contents"][number])
    default:
      return `[${String(item.type)}]`
  }
}

/**
 * One resource's contents: its text, or a note for binary content.
 *
 * @since 0.1.0
 */
export const resourceContents = (contents: McpSchema.ReadResourceResult["contents"][number]): string => {
  const any = contents as unknown as Record<string, unknown>
  return typeof any.text === "string"
    ? any.text
    : `[${String(any.mimeType ?? "binary")} ${String(any.uri)}, ${size(String(any.blob ?? ""))}]`
}

/**
 * A tool result as text: each content block on its own, binary ones as a short note, and
 * the structured content as JSON when there is no text.
 *
 * @since 0.1.0
 */
export const callResult = (result: McpSchema.CallToolResult): string => {
  const parts = result.content.map(content)
  if (parts.length === 0 && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent, null, 2))
  }
  return parts.join("\n")
}

/**
 * Prints a value as JSON on stdout.
 *
 * @since 0.1.0
 */
export const json = (value: unknown): Effect.Effect<void> =>
  Console.log(Hidden.jsonForTerminal(JSON.stringify(value, null, 2)))

/**
 * Prints lines on stdout.
 *
 * @since 0.1.0
 */
export const lines = (text: ReadonlyArray<string>): Effect.Effect<void> =>
  text.length === 0 ? Effect.void : Console.log(Hidden.forTerminal(text.join("\n")))

/**
 * Prints a note for the person on stderr (never on stdout, which may be piped). Not through
 * Console.error: the CLI silences that while @effect/cli parses (see main).
 *
 * @since 0.1.0
 */
export const note = (text: string): Effect.Effect<void> =>
  Effect.sync(() => void process.stderr.write(`${Hidden.forTerminal(text)}\n`))

/**
 * What an error is called in `--json` output and what it says.
 *
 * @since 0.1.0
 */
export const errorObject = (error: unknown): Record<string, unknown> => {
  if (error instanceof McpError.McpError) {
    return { error: "McpError", reason: error.reason._tag, server: error.server || undefined, message: error.message }
  }
  const tagged = error as { readonly _tag?: unknown; readonly message?: unknown }
  return {
    error: typeof tagged._tag === "string" ? tagged._tag : "Error",
    message: typeof tagged.message === "string" ? tagged.message : String(error)
  }
}

/**
 * Whether the command line asks for JSON (errors are printed as JSON then).
 *
 * @since 0.1.0
 */
export const jsonRequested = (): boolean => process.argv.includes("--json")

/**
 * A command's error printed already, by `reportNow`: only the exit code it implies is left
 * to do.
 *
 * @since 0.1.0
 */
export class Reported {
  readonly _tag = "Reported"
  constructor(readonly error: unknown) {}
}

/**
 * Prints an error: one sentence on stderr, or with `--json` one JSON object on stderr.
 *
 * @since 0.1.0
 */
export const error = (error: unknown, asJson: boolean): Effect.Effect<void> => {
  const object = errorObject(error)
  // `reportNow` has printed its own.
  if (error instanceof Reported) return Effect.void
  return asJson
    ? Effect.sync(() => void process.stderr.write(`${Hidden.jsonForTerminal(JSON.stringify(object))}\n`))
    : note(`mcp-fleet: ${String(object.message)}`)
}

/**
 * Where a server runs, for people: its command line with its secrets masked, or its URL
 * without credentials or query (which may hold a token).
 *
 * @since 0.1.0
 */
export const where = (spec: ServerSpec.ServerSpec): string => {
  const transport = spec.transport
  switch (transport.type) {
    case "stdio":
      return Secrets.make(ServerSpec.secrets(spec)).text(
        `stdio: ${[transport.command, ...(transport.args ?? [])].join(" ")}`
      )
    case "custom":
      return "custom transport"
    default:
      // Credentials and the query (tokens) stay out.
      return `${transport.type}: ${Secrets.safeUrl(transport.url)}`
  }
}

/**
 * Prints a command's error the moment it happens, before the command's Scope closes and
 * its servers are shut down (which may take seconds): a timeout is told at its deadline.
 * Put it inside `Effect.scoped`.
 *
 * @since 0.1.0
 */
export const reportNow = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Reported, R> =>
  effect.pipe(
    Effect.tapError((failure) => error(failure, jsonRequested())),
    Effect.mapError((failure) => new Reported(failure))
  )

// A JSON Schema's type as a person reads it: `string`, `array of string`, `one of "a", "b"`.
const typeOf = (schema: Record<string, unknown> | undefined): string => {
  if (schema === undefined) return ""
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((value) => JSON.stringify(value)).join(", ")}`
  const type = Array.isArray(schema.type) ? schema.type.join(" | ") : typeof schema.type === "string" ? schema.type : ""
  const items = schema.items as Record<string, unknown> | undefined
  return type === "array" && items !== undefined && typeOf(items) !== "" ? `array of ${typeOf(items)}` : type
}

/**
 * A tool's or prompt's arguments as a table: name, type, whether required, description.
 *
 * @since 0.3.0
 */
export const argumentsTable = (
  args: ReadonlyArray<
    { readonly name: string; readonly type: string; readonly required: boolean; readonly description?: string }
  >
): ReadonlyArray<string> =>
  args.length === 0
    ? ["  (none)"]
    : table([
      ["name", "type", "required", "description"],
      ...args.map((arg) => [arg.name, arg.type, arg.required ? "yes" : "no", clip(arg.description, 70)])
    ]).map((line) => `  ${line}`)

/**
 * The arguments an inputSchema describes, each with its type and description.
 *
 * @since 0.3.0
 */
export const schemaArguments = (schema: Record<string, unknown>) => {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>
  const required = Array.isArray(schema.required) ? schema.required : []
  return Object.entries(properties).map(([name, property]) => ({
    name,
    type: typeOf(property),
    required: required.includes(name),
    ...(typeof property.description === "string" ? { description: property.description } : {})
  }))
}

/**
 * One thing of the catalog in detail: a heading, `field: value` lines for the fields given,
 * the description in full, then named sections.
 *
 * @since 0.3.0
 */
export const detail = (
  heading: string,
  fields: ReadonlyArray<readonly [string, string | undefined]>,
  description: string | undefined,
  sections: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = []
): ReadonlyArray<string> => [
  heading,
  ...fields.filter(([, value]) => value !== undefined && value !== "").map(([field, value]) => `  ${field}: ${value}`),
  ...(description === undefined || description.trim() === ""
    ? []
    : ["", ...description.trim().split("\n").map((line) => `  ${line}`)]),
  ...sections.flatMap(([title, lines]) => ["", `${title}:`, ...lines])
]
