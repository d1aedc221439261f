/**
 * The server entity: the messages a gateway or runner sends to the runner that hosts a
 * server. One entity per configured server, keyed by its name; its handler runs the server's
 * actor (a local `ServerRegistry` holding the servers this runner hosts).
 *
 * Every message is volatile (not persisted): a call that a dead runner had accepted is
 * answered by the claim rule (`claims.ts`), never by a replay from storage. Results travel as
 * plain JSON values (they were decoded by the runner's client already); failures as McpError,
 * whose Schema carries its reason across. A call (a task followed, a read, a prompt) is a
 * stream: what the server tells or asks during it goes back to the caller as it comes
 * (`CallEvent`), and the caller's answers to its input requests come back as `Answer` messages.
 *
 * @since 0.3.0
 */
import * as Entity from "@effect/cluster/Entity"
import * as Rpc from "@effect/rpc/Rpc"
import * as Schema from "effect/Schema"
import * as McpError from "../../McpErrorSchema.js"

const Json = Schema.Unknown

/** Wakes the entity (its server starts) and answers once it is hosted. */
export const Ensure = Rpc.make("Ensure", { error: McpError.McpError })

/**
 * What a call's runner tells its caller, in order: the server's progress, log messages and
 * task statuses, its input requests (sampling, elicitation, roots: `tied` when the server
 * named the call, as `McpClient.CallToolOptions.onInput` takes them), then the result.
 */
export const CallEvent = Schema.Union(
  Schema.TaggedStruct("Progress", {
    progress: Schema.Number,
    total: Schema.optional(Schema.Number),
    message: Schema.optional(Schema.String)
  }),
  Schema.TaggedStruct("Log", { message: Json }),
  Schema.TaggedStruct("Task", { task: Json }),
  Schema.TaggedStruct("Input", {
    requestId: Schema.String,
    method: Schema.String,
    params: Schema.Record({ key: Schema.String, value: Json }),
    key: Schema.optional(Schema.String),
    tied: Schema.Boolean
  }),
  Schema.TaggedStruct("Result", { result: Json })
)

/** A `CallEvent`. */
export type CallEvent = typeof CallEvent.Type

// What the caller takes: progress and log messages are asked of the server only for it.
const Tells = Schema.Struct({ progress: Schema.Boolean, log: Schema.Boolean })

/** A tool call; `callId` is claimed in PostgreSQL before the tool runs. */
export const Call = Rpc.make("Call", {
  payload: {
    callId: Schema.String,
    tool: Schema.String,
    args: Schema.optional(Schema.Record({ key: Schema.String, value: Json })),
    /** The call's limits in milliseconds, as `ServerRegistry.CallToolOptions` names them. */
    readyTimeout: Schema.optional(Schema.Number),
    timeout: Schema.optional(Schema.Number),
    maxTotalTimeout: Schema.optional(Schema.Number),
    resetTimeoutOnProgress: Schema.optional(Schema.Boolean),
    /** `ServerRegistry.CallToolOptions`' own, carried as they are. */
    task: Schema.optional(Schema.Boolean),
    progressToken: Schema.optional(Schema.String),
    meta: Schema.optional(Schema.Record({ key: Schema.String, value: Json })),
    stateful: Schema.optional(Schema.Boolean),
    tells: Tells
  },
  success: CallEvent,
  error: McpError.McpError,
  stream: true
})

/** Takes up a task of the server by its id (`ServerRegistry.followTask`); `callId` names its input requests. */
export const Follow = Rpc.make("Follow", {
  payload: {
    callId: Schema.String,
    taskId: Schema.String,
    readyTimeout: Schema.optional(Schema.Number),
    progressToken: Schema.optional(Schema.String),
    tells: Tells
  },
  success: CallEvent,
  error: McpError.McpError,
  stream: true
})

/** The caller's answer to an input request of its call: a result, or the error it refused with. */
export const Answer = Rpc.make("Answer", {
  payload: {
    callId: Schema.String,
    requestId: Schema.String,
    result: Schema.optional(Schema.Record({ key: Schema.String, value: Json })),
    error: Schema.optional(Schema.Struct({ code: Schema.Int, message: Schema.String, data: Schema.optional(Json) }))
  }
})

/**
 * Reads a resource of the server: a stream as a call's, since the server may ask the caller
 * (a 2026-07-28 input round), its input requests named by `callId`; the result last.
 */
export const Read = Rpc.make("Read", {
  payload: { callId: Schema.String, uri: Schema.String },
  success: CallEvent,
  error: McpError.McpError,
  stream: true
})

/** Gets a prompt of the server: a stream as `Read`'s. */
export const GetPrompt = Rpc.make("GetPrompt", {
  payload: {
    callId: Schema.String,
    name: Schema.String,
    args: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
  },
  success: CallEvent,
  error: McpError.McpError,
  stream: true
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
export const ServerEntity = Entity.make("McpFleetServer", [
  Ensure,
  Call,
  Follow,
  Answer,
  Read,
  GetPrompt,
  Complete,
  Control
])
