/**
 * The Schemas of `McpError` and its reasons, for what sends an error over a wire and reads
 * it back (the cluster's RPCs and its stored server states). They live apart from
 * `McpError`, which is on every path, so a client that only fails with McpErrors never
 * loads `effect/Schema` for them.
 *
 * Decoding gives the classes of `McpError` (an `McpError`, a `TransportReason`, ...), so a
 * decoded error answers `message`, `retryable` and `needsAuth` as the original did.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import * as Model from "./McpError.js"

/**
 * How a child process ended: its exit code or the signal that killed it, and the last
 * lines it wrote to stderr.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ProcessExit = Schema.Struct({
  exitCode: Schema.optional(Schema.NullOr(Schema.Number)),
  signal: Schema.optional(Schema.NullOr(Schema.String)),
  stderrTail: Schema.optional(Schema.String)
})

// A reason's fields as a tagged struct, decoded to (and encoded from) the reason's class.
const reason = <Tag extends string, Fields extends Schema.Struct.Fields, R extends { readonly _tag: Tag }>(
  tag: Tag,
  fields: Fields,
  Reason: new(fields: Omit<Schema.Struct.Type<Fields>, never>) => R
) =>
  Schema.transform(Schema.TaggedStruct(tag, fields), Schema.instanceOf(Reason), {
    strict: false,
    // The class sets its own `_tag`; the other fields are the reason's.
    decode: (value) => new Reason(value as Schema.Struct.Type<Fields>),
    encode: (value) => ({ ...value })
  })

/**
 * The Schema of a `TransportReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const TransportReason = reason("Transport", {
  message: Schema.String,
  code: Schema.optional(Schema.String),
  ...ProcessExit.fields
}, Model.TransportReason)

/**
 * The Schema of a `ClosedReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ClosedReason = reason("Closed", {
  message: Schema.String,
  method: Schema.optional(Schema.String),
  sessionExpired: Schema.optional(Schema.Boolean),
  unsent: Schema.optional(Schema.Boolean),
  ...ProcessExit.fields
}, Model.ClosedReason)

/**
 * The Schema of a `ProtocolReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ProtocolReason = reason("Protocol", {
  method: Schema.String,
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
}, Model.ProtocolReason)

/**
 * The Schema of a `TimeoutReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const TimeoutReason = reason("Timeout", {
  method: Schema.String,
  afterMs: Schema.Number,
  kind: Schema.Literal("idle", "total")
}, Model.TimeoutReason)

/**
 * The Schema of an `HttpReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const HttpReason = reason("Http", {
  status: Schema.Number,
  method: Schema.String,
  body: Schema.String,
  wwwAuthenticate: Schema.optional(Schema.String)
}, Model.HttpReason)

/**
 * The Schema of a `LimitReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const LimitReason = reason("Limit", {
  what: Schema.String,
  size: Schema.optional(Schema.Number),
  limit: Schema.Number
}, Model.LimitReason)

/**
 * The Schema of a `ValidationReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ValidationReason = reason("Validation", {
  message: Schema.String,
  method: Schema.optional(Schema.String)
}, Model.ValidationReason)

/**
 * The Schema of an `UnsupportedReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const UnsupportedReason = reason("Unsupported", { message: Schema.String }, Model.UnsupportedReason)

/**
 * The Schema of an `UnavailableReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const UnavailableReason = reason("Unavailable", {
  state: Schema.String,
  message: Schema.String
}, Model.UnavailableReason)

/**
 * The Schema of a `NotFoundReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const NotFoundReason = reason("NotFound", {
  what: Schema.Literal("server", "tool", "prompt", "resource", "drifted tool", "skill"),
  name: Schema.String,
  suggestions: Schema.Array(Schema.String)
}, Model.NotFoundReason)

/**
 * The Schema of a `ConfigReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ConfigReason = reason("Config", { message: Schema.String }, Model.ConfigReason)

/**
 * The Schema of a `DeniedReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const DeniedReason = reason("Denied", {
  tool: Schema.String,
  rule: Schema.optional(Schema.String),
  message: Schema.String
}, Model.DeniedReason)

/**
 * The Schema of an `InDoubtReason`.
 *
 * @since 0.4.0
 * @category schemas
 */
export const InDoubtReason = reason("InDoubt", {
  tool: Schema.String,
  message: Schema.String
}, Model.InDoubtReason)

/**
 * The Schema of every reason an McpError can have.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Reason = Schema.Union(
  TransportReason,
  ClosedReason,
  ProtocolReason,
  HttpReason,
  TimeoutReason,
  LimitReason,
  ValidationReason,
  UnsupportedReason,
  UnavailableReason,
  NotFoundReason,
  ConfigReason,
  DeniedReason,
  InDoubtReason
)

/**
 * The Schema of an `McpError`: `{ _tag: "McpError", server?, reason, cause? }` encoded, with
 * the cause as a defect (its message and stack, not the object).
 *
 * @since 0.4.0
 * @category schemas
 */
export const McpError = Schema.transform(
  Schema.TaggedStruct("McpError", {
    server: Schema.optional(Schema.NonEmptyString),
    reason: Reason,
    cause: Schema.optional(Schema.Defect)
  }),
  Schema.instanceOf(Model.McpError),
  {
    strict: true,
    decode: ({ _tag, ...fields }) => new Model.McpError(fields),
    encode: (error) => ({
      _tag: "McpError" as const,
      reason: error.reason,
      ...(error.server === undefined ? {} : { server: error.server }),
      ...(error.cause === undefined ? {} : { cause: error.cause })
    })
  }
)
