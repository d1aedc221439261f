/**
 * The audit log: one entry per call, to the AuditSink in context and appended as a JSON
 * line to the config's `audit` file through @effect/platform's FileSystem, when one is in
 * context (on Node, `NodeFleet.layer` provides it); the module itself stays neutral.
 * Arguments are kept as a digest, never as they are.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
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
 * An auditor writing to `sink`, if any, and to each config's file with `files`. Lines to
 * the file are appended one at a time, so concurrent calls never interleave; a line that
 * cannot be written (or with no FileSystem to write it) is logged as a warning.
 */
export const makeAuditor = (
  sink: Option.Option<Policy.AuditSink>,
  files: Option.Option<FileSystem.FileSystem>
): Effect.Effect<Auditor> =>
  Effect.map(Effect.makeSemaphore(1), (fileLock) => {
    const append = (path: string, line: string): Effect.Effect<void, { readonly message: string }> =>
      Option.isSome(files)
        ? files.value.writeFileString(path, line, { flag: "a" })
        : Effect.fail({ message: "no FileSystem in context" })
    const appendLine = (path: string, line: string) =>
      fileLock.withPermits(1)(
        append(path, line).pipe(
          Effect.catchAll((error) => Effect.logWarning(`the audit log ${path} cannot be written: ${error.message}`))
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
