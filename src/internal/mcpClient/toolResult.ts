/**
 * Telling a tool result the CallToolResult schema would accept unchanged, so a tool call
 * can skip decoding it.
 *
 * @internal
 */

// The fields a content block of each type must have as strings. Blocks that carry
// `annotations` or `_meta`, or of other types, have more to check: they go through the schema.
const stringFields: ReadonlyMap<string, ReadonlyArray<string>> = new Map([
  ["text", ["text"]],
  ["image", ["data", "mimeType"]],
  ["audio", ["data", "mimeType"]]
])

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isPlainBlock = (block: unknown): boolean => {
  if (!isObject(block) || typeof block.type !== "string" || "annotations" in block || "_meta" in block) return false
  const fields = stringFields.get(block.type)
  if (fields === undefined) return false
  for (const field of fields) if (typeof block[field] !== "string") return false
  return true
}

/**
 * Whether decoding `result` with `McpSchema.CallToolResult` would succeed and give an equal
 * value (the decode keeps unknown fields and key order): its content is text, image and
 * audio blocks with their string fields and no `annotations` or `_meta`, `isError` is a
 * boolean if present, and there is no `structuredContent` or `_meta`. False means "decode
 * it", not "invalid".
 */
export const isPlainCallToolResult = (result: Record<string, unknown>): boolean => {
  const content = result.content
  if (!Array.isArray(content) || "structuredContent" in result || "_meta" in result) return false
  if ("isError" in result && typeof result.isError !== "boolean") return false
  for (const block of content) if (!isPlainBlock(block)) return false
  return true
}
