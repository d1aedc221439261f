/**
 * Form elicitation: the requested schema's defaults (SEP-1034) and the check of an accepted
 * form against the schema (Ajv, through the shared validator cache).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as McpSchema from "../../McpSchema.js"
import { ValidatorCache } from "../jsonSchema.js"

type FormSchema = McpSchema.ElicitFormParams["requestedSchema"]
type Content = Readonly<Record<string, McpSchema.ElicitValue>>

const validators = new ValidatorCache(200)

const isValue = (value: unknown): value is McpSchema.ElicitValue =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean" ||
  (Array.isArray(value) && value.every((item) => typeof item === "string"))

/** The content, with each missing field that has a default set to it. */
export const applyDefaults = (schema: FormSchema, content: Content): Record<string, McpSchema.ElicitValue> => {
  const out: Record<string, McpSchema.ElicitValue> = { ...content }
  for (const [name, property] of Object.entries(schema.properties)) {
    if (!Object.hasOwn(out, name) && isValue(property.default)) out[name] = property.default
  }
  return out
}

/** Why the content does not fit the schema, or undefined. */
export const checkForm = (schema: FormSchema, content: Content): Effect.Effect<string | undefined> =>
  Effect.map(
    validators.get(schema as Record<string, unknown>),
    Either.match({
      onLeft: (problem) => `the requested schema cannot be used: ${problem}`,
      onRight: (validate) => validate(content)
    })
  )
