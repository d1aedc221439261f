/**
 * Making and reading outcomes in tests: a tool result of one text block, the text a result
 * carries, the error an Exit failed with, and an McpError's reason checked by its tag. Each
 * throws a plain Error with what it got when the outcome is not the expected kind, so a test
 * reads the value it wants in one line and fails with a message saying why.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as McpError from "../McpError.js"
import type * as McpSchema from "../McpSchema.js"

/**
 * A tool result of one text block, as a tool handler answers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (value: string): McpSchema.CallToolResult => ({ content: [{ type: "text", text: value }] })

const isText = (block: unknown): block is McpSchema.TextContent =>
  typeof block === "object" && block !== null && (block as { readonly type?: unknown }).type === "text"

/**
 * The text of a result's first content block; throws when that block is not text.
 *
 * @since 0.1.0
 * @category getters
 */
export const firstText = (result: { readonly content?: ReadonlyArray<unknown> | undefined }): string => {
  const block = result.content?.[0]
  if (!isText(block)) throw new Error(`expected a text block, got ${JSON.stringify(block)}`)
  return block.text
}

/**
 * The texts of a result's text blocks, in order (other blocks are skipped).
 *
 * @since 0.1.0
 * @category getters
 */
export const texts = (result: { readonly content?: ReadonlyArray<unknown> | undefined }): Array<string> =>
  (result.content ?? []).flatMap((block) => isText(block) ? [block.text] : [])

/**
 * The error an Exit failed with; throws when it succeeded, died or was interrupted.
 *
 * @since 0.1.0
 * @category getters
 */
export const failure = <A, E>(exit: Exit.Exit<A, E>): E => {
  const error = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
  if (Option.isNone(error)) throw new Error(`expected a failure, got ${String(exit)}`)
  return error.value
}

/**
 * The reason of an McpError, checked to have the tag `tag`; throws when it has another.
 *
 * @since 0.1.0
 * @category getters
 */
export const reasonOf = <T extends McpError.Reason["_tag"]>(
  error: McpError.McpError,
  tag: T
): Extract<McpError.Reason, { readonly _tag: T }> => {
  if (error._tag !== "McpError" || error.reason._tag !== tag) {
    throw new Error(`expected an McpError of reason ${tag}, got ${String(error)}`)
  }
  return error.reason as Extract<McpError.Reason, { readonly _tag: T }>
}
