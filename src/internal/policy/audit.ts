/**
 * The audit log: one entry per call, to the AuditSink in context and appended as a JSON
 * line to the config's `audit` file through @effect/platform's FileSystem, when one is in
 * context (on Node, `NodeFleet.layer` provides it); the module itself stays neutral.
 * Arguments are kept as a digest, never as they are. Lines to the file are hash-chained,
 * with a checkpoint every thousand entries and at close, signed with the config's
 * `auditKey` (or `MCP_FLEET_AUDIT_KEY`) when there is one: the format is `auditChain.ts`'s.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as Policy from "../../Policy.js"
import { canonicalDigest } from "../canonicalJson.js"
import { utf8Bytes } from "../crypto.js"
import { processEnv } from "../platform.js"
import {
  type AuditKey,
  chained,
  checkpoint,
  CHECKPOINT_EVERY,
  GENESIS,
  lineHash,
  lineNumberOf,
  parseKey
} from "./auditChain.js"

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

/** The environment variable holding the audit key, which wins over the config's `auditKey` file. */
export const AUDIT_KEY_ENV = "MCP_FLEET_AUDIT_KEY"

// Where one file's chain stands: the last line's hash and number, the file's size as we left
// it (another writer changed it when it differs), entries since the last checkpoint.
interface Chain {
  prev: string
  line: number
  size: number
  since: number
  readonly key: AuditKey | undefined
  // The file ends in a cut line: end it before appending.
  newline: boolean
}

type Failure = { readonly message: string }
const LF = 10
const TAIL_BYTES = 65_536

// The file's last line (without its newline), its line count and size. The last 64 KiB are
// read; the whole file only when they hold no whole line or the line has no number.
const tailOf = (files: FileSystem.FileSystem, path: string) =>
  Effect.gen(function*() {
    const exists = yield* files.exists(path)
    if (!exists) return { last: undefined, line: 0, size: 0, newline: false }
    const size = Number((yield* files.stat(path)).size)
    const from = Math.max(0, size - TAIL_BYTES)
    const bytes = from === 0 ? yield* files.readFile(path) : yield* Effect.scoped(
      Effect.flatMap(files.open(path, { flag: "r" }), (file) =>
        Effect.zipRight(file.seek(from, "start"), file.readAlloc(size - from)))
    ).pipe(Effect.map(Option.getOrElse(() =>
      new Uint8Array(0)
    )))
    const newline = bytes.length > 0 && bytes[bytes.length - 1] !== LF
    const end = newline ? bytes.length : bytes.length - 1
    const start = bytes.lastIndexOf(LF, end - 1) + 1
    const last = end <= 0 ? undefined : new TextDecoder().decode(bytes.subarray(start, end))
    const numbered = last === undefined ? 0 : lineNumberOf(last)
    if ((start > 0 || from === 0) && numbered !== undefined) return { last, line: numbered, size, newline }
    // An older, unchained log (or a line over 64 KiB): count its lines.
    const whole = yield* files.readFileString(path)
    const line = whole.split("\n").length - (newline ? 0 : 1)
    return { last: whole.slice(whole.lastIndexOf("\n", whole.length - 2) + 1).replace(/\n$/, ""), line, size, newline }
  })

const keyOf = (files: FileSystem.FileSystem, config: Policy.Config) =>
  Effect.gen(function*() {
    const fromEnv = processEnv()[AUDIT_KEY_ENV]
    const source = fromEnv !== undefined ? AUDIT_KEY_ENV : config.auditKey
    if (source === undefined) return undefined
    const text = fromEnv ?? (yield* files.readFileString(config.auditKey!))
    const key = parseKey(text)
    if (typeof key !== "string") return key
    yield* Effect.logWarning(
      `the audit key in ${source} is not an Ed25519 private key (${key}): checkpoints are not signed`
    )
    return undefined
  })

const chainOf = (files: FileSystem.FileSystem, path: string, key: AuditKey | undefined) =>
  Effect.map(tailOf(files, path), (tail): Chain => ({
    prev: tail.last === undefined ? GENESIS : lineHash(tail.last),
    line: tail.line,
    size: tail.size,
    since: 0,
    key,
    newline: tail.newline
  }))

/** Appends `json` (chained) to `chain`'s text, with a checkpoint after every thousandth entry. */
const appendTo = (chain: Chain, lines: Array<string>, json: string, now: string) => {
  const line = chained(json, ++chain.line, chain.prev)
  chain.prev = lineHash(line)
  lines.push(line)
  if (++chain.since < CHECKPOINT_EVERY) return
  const mark = checkpoint("every", now, ++chain.line, chain.prev, chain.key)
  chain.prev = lineHash(mark)
  lines.push(mark)
  chain.since = 0
}

/**
 * An auditor writing to `sink`, if any, and to each config's file with `files`. Lines wait
 * in a queue per file and are appended in batches under one lock, so concurrent calls never
 * interleave and share a write; a line that cannot be written (or with no FileSystem to
 * write it) is logged as a warning. Each file this auditor wrote to gets a closing checkpoint
 * when its scope closes. Before each batch the file's size is checked: when another process
 * appended, the chain is read again from the file's end.
 */
export const makeAuditor = (
  sink: Option.Option<Policy.AuditSink>,
  files: Option.Option<FileSystem.FileSystem>,
  // `chain: false` writes plain JSON lines: the baseline of `npm run bench:audit`.
  options: { readonly chain?: boolean } = {}
): Effect.Effect<Auditor, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fileLock = yield* Effect.makeSemaphore(1)
    const chains = new Map<string, Chain>()
    const pending = new Map<
      string,
      { readonly waiting: Array<{ readonly json: string; readonly written: Deferred.Deferred<void> }>; busy: boolean }
    >()

    // The chain of `path`, read again when the file is not as this auditor left it.
    const current = (fs: FileSystem.FileSystem, path: string, config: Policy.Config) =>
      Effect.gen(function*() {
        const known = chains.get(path)
        const size = known === undefined
          ? -1
          : Number((yield* Effect.orElseSucceed(fs.stat(path), () => ({ size: -1 }))).size)
        if (known !== undefined && size === known.size) return known
        const chain = yield* chainOf(fs, path, known === undefined ? yield* keyOf(fs, config) : known.key)
        chains.set(path, chain)
        return chain
      })

    // Appends `lines` of `path` (more of them given by `more`, chained at once) under the lock.
    const append = (
      path: string,
      config: Policy.Config,
      more: (chain: Chain, lines: Array<string>, now: string) => void
    ) =>
      fileLock.withPermits(1)(
        Effect.gen(function*() {
          if (Option.isNone(files)) return yield* Effect.fail<Failure>({ message: "no FileSystem in context" })
          const chain = yield* current(files.value, path, config)
          const now = new Date(yield* Clock.currentTimeMillis).toISOString()
          const lines: Array<string> = []
          more(chain, lines, now)
          if (lines.length === 0) return
          const bytes = utf8Bytes(`${chain.newline ? "\n" : ""}${lines.join("\n")}\n`)
          yield* Effect.tapError(
            files.value.writeFile(path, bytes, { flag: "a" }),
            () => Effect.sync(() => chains.delete(path))
          )
          chain.size += bytes.length
          chain.newline = false
        }).pipe(
          Effect.catchAll((error) => Effect.logWarning(`the audit log ${path} cannot be written: ${error.message}`))
        )
      )

    // The first caller to find a file's queue idle writes it, batch after batch, until it is
    // empty; the others wait for their line to be written. (A Semaphore's waiters are each
    // woken on every release: at c=64 that cost a call 200 µs.)
    const appendLine = (path: string, json: string, config: Policy.Config) =>
      Effect.suspend(() => {
        const queue = pending.get(path) ?? { waiting: [], busy: false }
        pending.set(path, queue)
        const written = Deferred.unsafeMake<void>(FiberId.none)
        queue.waiting.push({ json, written })
        if (queue.busy) return Deferred.await(written)
        queue.busy = true
        return Effect.uninterruptible(
          Effect.gen(function*() {
            while (queue.waiting.length > 0) {
              const batch = queue.waiting.splice(0)
              yield* append(path, config, (chain, lines, now) => {
                for (const { json } of batch) {
                  if (options.chain === false) lines.push(json)
                  else appendTo(chain, lines, json, now)
                }
              })
              for (const { written } of batch) Deferred.unsafeDone(written, Exit.void)
            }
          }).pipe(Effect.ensuring(Effect.sync(() => queue.busy = false)))
        )
      })

    yield* Effect.addFinalizer(() =>
      Effect.forEach([...chains.keys()], (path) =>
        append(path, {}, (chain, lines, now) => {
          chain.line++
          lines.push(checkpoint("close", now, chain.line, chain.prev, chain.key))
        }), { discard: true })
    )

    return {
      enabled: (config) => Option.isSome(sink) || config.audit !== undefined,
      // One after the other: forking the two for each call cost it 100 µs and more.
      write: (entry, config) =>
        Effect.zipRight(
          Option.isSome(sink) ? sink.value.write(entry) : Effect.void,
          config.audit === undefined ? Effect.void : appendLine(config.audit, JSON.stringify(entry), config)
        )
    }
  })
