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

/** One server's file: its name (file names are encoded) and its pins by tool name. */
export const PinFile = Schema.Struct({
  server: Schema.String,
  tools: Schema.Record({ key: Schema.String, value: Pin })
}).annotations({ identifier: "PinFile" })
