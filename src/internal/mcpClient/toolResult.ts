/**
 * Tool results: telling one the CallToolResult schema would accept unchanged, so a tool
 * call can skip decoding it, and checking structured content against the outputSchema the
 * tool declared in the latest listing.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"
import { ValidatorCache } from "../jsonSchema.js"
import { decode } from "./decode.js"

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

/**
 * The outputSchemas of one connection's tools and the checks of results against them.
 */
export interface OutputChecks {
  /** Whether the tools were listed since the last list_changed, so their outputSchemas are known. */
  readonly listed: () => boolean
  /** Keeps the outputSchemas of a fresh listing. */
  readonly remember: (tools: ReadonlyArray<McpSchema.Tool>) => void
  /** Whether a listed tool must run as a task (2025-11-25: `execution.taskSupport: "required"`). */
  readonly requiresTask: (name: string) => boolean
  /** Forgets them, on list_changed. */
  readonly forget: () => void
  /** Lists the tools, once however many calls are waiting for it. */
  readonly ensureListed: Effect.Effect<void, McpError.McpError>
  /** The result of calling tool `name`: decoded and checked only when it has to be. */
  readonly check: (
    name: string,
    result: Record<string, unknown>
  ) => Effect.Effect<McpSchema.CallToolResult, McpError.McpError>
}

/**
 * Makes the checks of `server`'s tool results; `listTools` lists (and so remembers) the
 * tools, in a fiber of `scope` that no single caller's interruption stops.
 */
export const makeOutputChecks = (
  server: string,
  scope: Scope.Scope,
  listTools: () => Effect.Effect<unknown, McpError.McpError>
): OutputChecks => {
  const validators = new ValidatorCache()
  // None until the tools are listed: structured content can only be checked against a known schema.
  let outputSchemas: Map<string, Record<string, unknown>> | undefined
  let taskTools = new Set<string>()

  const checkStructured = (name: string, result: McpSchema.CallToolResult) => {
    const schema = outputSchemas?.get(name)
    if (schema === undefined || result.isError === true) return Effect.succeed(result)
    const invalid = (message: string) =>
      Effect.fail(
        McpError.validation(server, { method: McpSchema.Method.ToolsCall, message: `tool '${name}' ${message}` })
      )
    if (result.structuredContent === undefined) return invalid("has an outputSchema but returned no structuredContent")
    const content = result.structuredContent
    return Effect.flatMap(validators.get(schema), (validator) => {
      if (Either.isLeft(validator)) return invalid(`has an outputSchema that cannot be used: ${validator.left}`)
      const problem = validator.right(content)
      return problem === undefined
        ? Effect.succeed(result)
        : invalid(`returned structuredContent that does not match its outputSchema: ${problem}`)
    })
  }

  let listing: Deferred.Deferred<void, McpError.McpError> | undefined
  const ensureListed = Effect.suspend(() => {
    if (outputSchemas !== undefined) return Effect.void
    if (listing !== undefined) return Deferred.await(listing)
    const done = Deferred.unsafeMake<void, McpError.McpError>(FiberId.none)
    listing = done
    const list = Effect.asVoid(listTools()).pipe(
      Effect.intoDeferred(done),
      Effect.ensuring(Effect.sync(() => listing = undefined))
    )
    return Effect.zipRight(Effect.forkIn(list, scope), Deferred.await(done))
  })

  return {
    listed: () => outputSchemas !== undefined,
    requiresTask: (name) => taskTools.has(name),
    remember: (tools) => {
      const schemas = new Map<string, Record<string, unknown>>()
      for (const tool of tools) if (tool.outputSchema) schemas.set(tool.name, tool.outputSchema)
      outputSchemas = schemas
      taskTools = new Set(tools.filter((tool) => tool.execution?.taskSupport === "required").map((tool) => tool.name))
    },
    forget: () => {
      outputSchemas = undefined
    },
    ensureListed,
    check: (name, result) =>
      outputSchemas?.has(name) !== true && isPlainCallToolResult(result)
        ? Effect.succeed(result as McpSchema.CallToolResult)
        : Effect.flatMap(
          decode(server, McpSchema.Method.ToolsCall, McpSchema.CallToolResult, result),
          (decoded) => checkStructured(name, decoded)
        )
  }
}
