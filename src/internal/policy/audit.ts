/**
 * The audit log: one entry per call, to the AuditSink in context and appended as a JSON
 * line to the config's `audit` file. Arguments are kept as a digest, never as they are.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as fs from "node:fs/promises"
import type * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as Policy from "../../Policy.js"
import { canonicalDigest } from "../canonicalJson.js"

/** See `Policy.digestArguments`. */
export const digestArguments = (args: Readonly<Record<string, unknown>> | undefined): string =>
  canonicalDigest(args ?? {})

/** The `outcome` of an audit entry, from how the call ended. */
export const outcomeOf = (exit: Exit.Exit<McpSchema.CallToolResult, McpError.McpError>): string => {
  if (Exit.isSuccess(exit)) return exit.value.isError === true ? "isError" : "ok"
  if (Exit.isInterrupted(exit)) return "cancelled"
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) return "error:defect"
  const tag = failure.reason._tag
  return tag === "Denied" ? "denied" : tag === "Timeout" ? "timeout" : `error:${tag}`
}

/** Writes audit entries. */
export interface Auditor {
  /** Whether a call under `config` is audited at all. */
  readonly enabled: (config: Policy.Config) => boolean
  /** Writes one entry to the sink and to the config's file; never fails. */
  readonly write: (entry: Policy.AuditEntry, config: Policy.Config) => Effect.Effect<void>
}

/**
 * An auditor writing to `sink`, if any, and to each config's file. Lines to the file are
 * appended one at a time, so concurrent calls never interleave; a line that cannot be
 * written is logged as a warning.
 */
export const makeAuditor = (sink: Option.Option<Policy.AuditSink>): Effect.Effect<Auditor> =>
  Effect.map(Effect.makeSemaphore(1), (fileLock) => {
    const appendLine = (path: string, line: string) =>
      fileLock.withPermits(1)(
        Effect.tryPromise(() => fs.appendFile(path, line)).pipe(
          Effect.catchAll((error) => {
            const why = error.cause instanceof Error ? error.cause.message : String(error.cause)
            return Effect.logWarning(`the audit log ${path} cannot be written: ${why}`)
          })
        )
      )
    return {
      enabled: (config) => Option.isSome(sink) || config.audit !== undefined,
      write: (entry, config) =>
        Effect.all([
          Option.isSome(sink) ? sink.value.write(entry) : Effect.void,
          config.audit === undefined ? Effect.void : appendLine(config.audit, `${JSON.stringify(entry)}\n`)
        ], { discard: true, concurrency: "unbounded" })
    }
  })
