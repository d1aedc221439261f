/**
 * The server entity: the messages a gateway or runner sends to the runner that hosts a
 * server. One entity per configured server, keyed by its name; its handler runs the server's
 * actor (a local `ServerRegistry` holding the servers this runner hosts).
 *
 * Every message is volatile (not persisted): a call that a dead runner had accepted is
 * answered by the claim rule (`claims.ts`), never by a replay from storage. Results travel as
 * plain JSON values (they were decoded by the runner's client already); failures as McpError,
 * whose Schema carries its reason across.
 *
 * @since 0.3.0
 */
import * as Entity from "@effect/cluster/Entity"
import * as Rpc from "@effect/rpc/Rpc"
import * as Schema from "effect/Schema"
import * as McpError from "../../McpError.js"

const Json = Schema.Unknown

/** Wakes the entity (its server starts) and answers once it is hosted. */
export const Ensure = Rpc.make("Ensure", { error: McpError.McpError })

/** A tool call; `callId` is claimed in PostgreSQL before the tool runs. */
export const Call = Rpc.make("Call", {
  payload: {
    callId: Schema.String,
    tool: Schema.String,
    args: Schema.optional(Schema.Record({ key: Schema.String, value: Json })),
    /** The call's limits in milliseconds, as `ServerRegistry.CallToolOptions` names them. */
    readyTimeout: Schema.optional(Schema.Number),
    timeout: Schema.optional(Schema.Number),
    maxTotalTimeout: Schema.optional(Schema.Number)
  },
  success: Json,
  error: McpError.McpError
})

/** Reads a resource of the server. */
export const Read = Rpc.make("Read", {
  payload: { uri: Schema.String },
  success: Json,
  error: McpError.McpError
})

/** Gets a prompt of the server. */
export const GetPrompt = Rpc.make("GetPrompt", {
  payload: { name: Schema.String, args: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })) },
  success: Json,
  error: McpError.McpError
})

/** Asks the server for completions of an argument. */
export const Complete = Rpc.make("Complete", {
  payload: {
    ref: Json,
    argument: Schema.Struct({ name: Schema.String, value: Schema.String }),
    context: Schema.optional(Json)
  },
  success: Json,
  error: McpError.McpError
})

/** A lifecycle command: restart, enable, disable, or approve a drifted tool (`tool`). */
export const Control = Rpc.make("Control", {
  payload: {
    command: Schema.Literal("restart", "enable", "disable", "approve"),
    tool: Schema.optional(Schema.String)
  },
  error: McpError.McpError
})

/**
 * The server entity type.
 *
 * @since 0.3.0
 */
export const ServerEntity = Entity.make("McpFleetServer", [Ensure, Call, Read, GetPrompt, Complete, Control])
