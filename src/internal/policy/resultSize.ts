/**
 * The size limit on tool results: a result's size in bytes of JSON, and the cut of a
 * result that is too large down to the content blocks that fit and a marker.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type * as Catalog from "../../Catalog.js"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as Policy from "../../Policy.js"

/** The bytes of a value's JSON, in UTF-8. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8")

// The bytes one code point takes inside a JSON string.
const escapedBytes = (code: number): number =>
  code === 0x22 || code === 0x5c
    ? 2
    : code < 0x20
    ? (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6)
    : code < 0x80
    ? 1
    : code < 0x800
    ? 2
    : code >= 0xd800 && code <= 0xdfff
    ? 6 // a lone surrogate is escaped
    : code < 0x10000
    ? 3
    : 4

/**
 * The length of the longest prefix of `text` whose JSON takes at most `room` bytes,
 * never splitting a surrogate pair.
 */
export const fittingPrefix = (text: string, room: number): number => {
  let used = 0
  let i = 0
  while (i < text.length) {
    const code = text.codePointAt(i)!
    used += escapedBytes(code)
    if (used > room) break
    i += code > 0xffff ? 2 : 1
  }
  return i
}

/** See `Policy.truncationMarker`. */
export const truncationMarker = (limit: number, size: number): string =>
  `[truncated by mcp-fleet: ${limit} of ${size} bytes]`

/** See `Policy.truncate`. */
export const truncate = (result: McpSchema.CallToolResult, limit: number, size: number): McpSchema.CallToolResult => {
  const { content, structuredContent: _, ...rest } = result
  const marker: McpSchema.TextContent = { type: "text", text: truncationMarker(limit, size) }
  let used = jsonBytes({ ...rest, content: [marker] })
  const kept: Array<McpSchema.CallToolResult["content"][number]> = []
  for (const block of content) {
    const cost = jsonBytes(block) + 1
    if (used + cost <= limit) {
      kept.push(block)
      used += cost
      continue
    }
    if (block.type === "text") {
      const room = limit - used - jsonBytes({ ...block, text: "" }) - 1
      const cut = room > 0 ? fittingPrefix((block as McpSchema.TextContent).text, room) : 0
      if (cut > 0) kept.push({ ...block, text: (block as McpSchema.TextContent).text.slice(0, cut) } as typeof block)
    }
    break
  }
  return { ...rest, content: [...kept, marker] }
}

/** A result held to the size limit, with what the audit log says of it. */
export interface Sized {
  /** The result to return (cut if need be), or the Limit error of one too large to return. */
  readonly outcome: Either.Either<McpSchema.CallToolResult, McpError.McpError>
  /** The size of the result as the server sent it; undefined when it was not measured. */
  readonly bytes: number | undefined
  readonly truncated: boolean
}

/**
 * Holds a result to `limits.maxResultBytes`: cut, or a Limit error when `onOversize` is
 * `fail`. `measure` asks for the size even without a limit (for the audit log).
 */
export const enforce = (
  entry: Catalog.ToolEntry,
  result: McpSchema.CallToolResult,
  limits: Policy.Limits,
  measure: boolean
): Sized => {
  const max = limits.maxResultBytes
  if (max === undefined && !measure) return { outcome: Either.right(result), bytes: undefined, truncated: false }
  const size = jsonBytes(result)
  if (max === undefined || size <= max) return { outcome: Either.right(result), bytes: size, truncated: false }
  if (limits.onOversize === "fail") {
    const error = McpError.limit(
      entry.server,
      { what: `the result of tool '${entry.tool.name}' in bytes`, size, limit: max }
    )
    return { outcome: Either.left(error), bytes: size, truncated: false }
  }
  return { outcome: Either.right(truncate(result, max, size)), bytes: size, truncated: true }
}
