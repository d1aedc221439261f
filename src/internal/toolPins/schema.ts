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
export const Definition = McpSchema.Tool.pick("name", "description", "inputSchema", "annotations").annotations({
  identifier: "Definition"
})

/** See `ToolPins.Pin`. */
export const Pin = Schema.Struct({
  digest: Schema.String,
  at: Schema.String,
  definition: Definition
}).annotations({ identifier: "Pin" })

// Pins by tool name, read as entries: a decoded record would drop a tool named `__proto__`
// (assigning that key sets a prototype), and its pin with it.
const PinsByName = Schema.transform(
  Schema.Object,
  Schema.Array(Schema.Tuple(Schema.String, Pin)),
  { strict: false, decode: (tools) => Object.entries(tools), encode: (entries) => Object.fromEntries(entries) }
)

/** One server's file: its name (file names are encoded) and its pins by tool name, as entries. */
export const PinFile = Schema.Struct({
  server: Schema.String,
  tools: PinsByName
}).annotations({ identifier: "PinFile" })
