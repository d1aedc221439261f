// Reading outcomes in tests: the McpError an Exit failed with, an error's reason, a
// tool result's text.
import { expect } from "@effect/vitest"
import * as Exit from "effect/Exit"
import type * as McpError from "../../src/McpError.js"
import type * as McpSchema from "../../src/McpSchema.js"

/** The McpError an Exit failed with; throws when it succeeded or died. */
export const failure = <A>(exit: Exit.Exit<A, McpError.McpError>): McpError.McpError => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`expected a failure, got ${String(exit)}`)
  return exit.cause.error
}

/** The reason of an McpError, checked to have the expected tag. */
export const reasonOf = <T extends McpError.Reason["_tag"]>(
  error: McpError.McpError,
  tag: T
): Extract<McpError.Reason, { readonly _tag: T }> => {
  expect(error._tag).toBe("McpError")
  expect(error.reason._tag).toBe(tag)
  return error.reason as Extract<McpError.Reason, { readonly _tag: T }>
}

/** The text of a result's first content block. */
export const firstText = (result: McpSchema.CallToolResult): string => {
  const block = result.content[0]
  if (block === undefined || block.type !== "text") {
    throw new Error(`expected a text block, got ${JSON.stringify(block)}`)
  }
  return (block as McpSchema.TextContent).text
}
