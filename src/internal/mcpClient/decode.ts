/**
 * Checking an answer against the schema of its result, with one decoder per schema, and
 * turning a mismatch into a Validation error that names the server and the method.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"

// Decoders are built once per schema, not per message.
const decoders = new WeakMap<Schema.Schema<any, any>, (value: unknown) => Either.Either<any, ParseResult.ParseError>>()
const decoderOf = <A, I>(schema: Schema.Schema<A, I>): (value: unknown) => Either.Either<A, ParseResult.ParseError> => {
  let decoder = decoders.get(schema)
  if (decoder === undefined) {
    decoder = McpSchema.decodeUnknown(schema)
    decoders.set(schema, decoder)
  }
  return decoder
}

/**
 * Decodes `value`, the answer of `server` to `method`, with `schema`.
 */
export const decode = <A, I>(
  server: string,
  method: string,
  schema: Schema.Schema<A, I>,
  value: unknown
): Effect.Effect<A, McpError.McpError> => {
  const result = decoderOf(schema)(value)
  return Either.isRight(result)
    ? Effect.succeed(result.right)
    : Effect.fail(McpError.validation(server, {
      method,
      message: `the answer does not match the protocol: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`
    }))
}
