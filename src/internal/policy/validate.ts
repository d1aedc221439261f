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
      return problem === undefined ? Effect.void : Effect.fail(McpError.validation(entry.server, {
        method: "tools/call",
        message: `invalid arguments for tool '${entry.tool.name}': ${problem}`
      }))
    })
}
