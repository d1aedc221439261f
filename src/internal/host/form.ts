/**
 * Form elicitation: the requested schema's defaults (SEP-1034) and the check of an accepted
 * form against the schema (Ajv, through the shared validator cache), with the string
 * `format`s the spec names for forms (email, uri, date, date-time), which the shared Ajv
 * leaves unchecked (`validateFormats: false`: tool schemas use formats Ajv does not know).
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

// RFC 3339 full-date: the day must exist in its month (2023-02-29 does not).
const isDate = (text: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

// RFC 3339 date-time: full-date "T" time, seconds up to 60 (a leap second), an offset or Z.
const isDateTime = (text: string): boolean => {
  const match = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/.exec(text)
  if (match === null || !isDate(match[1]!)) return false
  const [hour, minute, second] = [Number(match[2]), Number(match[3]), Number(match[4])]
  const offsetOk = match[7] === undefined || (Number(match[7]) <= 23 && Number(match[8]) <= 59)
  return hour <= 23 && minute <= 59 && second <= 60 && offsetOk
}

const formats: Record<string, { readonly check: (text: string) => boolean; readonly what: string }> = {
  // One `@`, something before it, a dotless-or-dotted host after it, no spaces.
  email: { check: (text) => /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)*$/.test(text), what: "an email address" },
  // RFC 3986 absolute URI: a scheme, a colon, no spaces.
  uri: { check: (text) => /^[A-Za-z][A-Za-z0-9+.-]*:\S*$/.test(text), what: "a URI (such as https://example.com)" },
  date: { check: isDate, what: "a date (YYYY-MM-DD)" },
  "date-time": { check: isDateTime, what: "a date and time (such as 2024-01-01T12:00:00Z)" }
}

// The first string field whose value is not of its `format`, worded as Ajv words a problem.
const checkFormats = (schema: FormSchema, content: Content): string | undefined => {
  for (const [name, property] of Object.entries(schema.properties)) {
    const format = "format" in property && typeof property.format === "string" ? formats[property.format] : undefined
    const value = content[name]
    if (format !== undefined && typeof value === "string" && !format.check(value)) {
      return `/${name} must be ${format.what}, not ${JSON.stringify(value)}`
    }
  }
  return undefined
}

/** Why the content does not fit the schema (its types, and the formats forms may name), or undefined. */
export const checkForm = (schema: FormSchema, content: Content): Effect.Effect<string | undefined> =>
  Effect.map(
    validators.get(schema as Record<string, unknown>),
    Either.match({
      onLeft: (problem) => `the requested schema cannot be used: ${problem}`,
      onRight: (validate) => validate(content) ?? checkFormats(schema, content)
    })
  )
