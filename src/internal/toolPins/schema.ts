/**
 * The shapes of pins, shared by the public module and the file store.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import * as McpSchema from "../../McpSchema.js"

/** See `ToolPins.Mode`. */
export const Mode = Schema.Literal("off", "warn", "quarantine")

/** See `ToolPins.Definition`. */
export const Definition = McpSchema.Tool.pick(
  "name",
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations"
).annotations({ identifier: "Definition" })

/** See `ToolPins.Pin`. */
export const Pin = Schema.Struct({
  digest: Schema.String,
  at: Schema.String,
  definition: Definition,
  // Taken over from a file of the older layout, made when pins did not cover title and
  // outputSchema: its digest is of the name, description, inputSchema and annotations.
  older: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "Pin" })

// Pins by tool name, read as entries: a decoded record would drop a tool named `__proto__`
// (assigning that key sets a prototype), and its pin with it.
const PinsByName = Schema.transform(
  Schema.Object,
  Schema.Array(Schema.Tuple(Schema.String, Pin)),
  { strict: false, decode: (tools) => Object.entries(tools), encode: (entries) => Object.fromEntries(entries) }
)

/**
 * One server's file: its name, the config file it came from (`origin`, when it came from
 * one) and its identity `key` (see `ToolPins.identity`), and its pins by tool name, as
 * entries. Files written before pins were keyed by identity have no `key`.
 */
export const PinFile = Schema.Struct({
  server: Schema.String,
  key: Schema.optional(Schema.String),
  origin: Schema.optional(Schema.String),
  tools: PinsByName
}).annotations({ identifier: "PinFile" })
