/**
 * The error of a command that cannot do what it was asked: a bad argument, a missing
 * config file, an unknown server. Failures of the fleet itself stay McpErrors.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A command's own failure; `reason` is the sentence shown to the user.
 *
 * @since 0.1.0
 */
export class CliError extends Schema.TaggedError<CliError>()("CliError", {
  reason: Schema.String,
  /** The exit code: 2 for a usage mistake, 1 otherwise. */
  exitCode: Schema.optionalWith(Schema.Int, { default: () => 1 })
}) {
  override get message(): string {
    return this.reason
  }
}

/**
 * A usage mistake (exit code 2).
 *
 * @since 0.1.0
 */
export const usage = (reason: string): CliError => new CliError({ reason, exitCode: 2 })

/**
 * A failure that is not the user's typing (exit code 1).
 *
 * @since 0.1.0
 */
export const failure = (reason: string): CliError => new CliError({ reason })
