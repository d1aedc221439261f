/**
 * Argument validation: a tool's arguments checked against its inputSchema before the call,
 * with the validators compiled once per schema.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Catalog from "../../Catalog.js"
import * as McpError from "../../McpError.js"
import { ValidatorCache } from "../jsonSchema.js"

/** Checks a call's arguments; fails with a Validation reason naming the tool and the bad field. */
export type Check = (
  entry: Catalog.ToolEntry,
  args: Readonly<Record<string, unknown>> | undefined
) => Effect.Effect<void, McpError.McpError>

const article: Record<string, string> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  array: "an array",
  object: "an object",
  boolean: "a boolean"
}

// ajv's wording ("(root) must have required property 'path'", "/path must be string") as a
// person reads it: which argument, and what was expected.
const plainly = (problem: string): string =>
  problem.split("; ").map((part) => {
    const text = part.replace(/ must be (\w+)$/, (whole, type: string) =>
      article[type] ? ` must be ${article[type]}` : whole)
    const missing = /^(\S+) must have required property '(.*)'$/.exec(text)
    if (missing) {
      const within = missing[1] === "(root)" ? "" : `${missing[1]!.slice(1).replace(/\//g, ".")}.`
      return `the required argument '${within}${missing[2]}' is missing`
    }
    const at = /^\/(\S*) (.*)$/.exec(text)
    return at ? `argument '${at[1]!.replace(/\//g, ".")}' ${at[2]}` : text.replace(/^\(root\) /, "the arguments ")
  }).join("; ")

/** A check with a validator cache of its own. */
export const makeCheck = (): Check => {
  const validators = new ValidatorCache()
  // A catalog keeps its tools' schema objects, so most calls skip the cache's JSON key.
  const bySchema = new WeakMap<object, Effect.Effect.Success<ReturnType<ValidatorCache["get"]>>>()
  const validatorOf = (schema: Record<string, unknown>) => {
    const known = bySchema.get(schema)
    return known !== undefined
      ? Effect.succeed(known)
      : Effect.tap(validators.get(schema), (validator) => bySchema.set(schema, validator))
  }
  return (entry, args) =>
    Effect.flatMap(validatorOf(entry.tool.inputSchema), (validator) => {
      // A schema that cannot be compiled is the server's to enforce.
      if (validator._tag === "Left") {
        return Effect.logDebug(`the inputSchema of tool '${entry.name}' cannot be compiled: ${validator.left}`)
      }
      const problem = validator.right(args ?? {})
      // No method: nothing was sent, the tool was not called.
      return problem === undefined ? Effect.void : Effect.fail(McpError.validation(entry.server, {
        message: `invalid arguments for tool '${entry.tool.name}': ${plainly(problem)}`
      }))
    })
}
