/**
 * Secrets in what mcp-fleet shows. A server's configured secrets are masked (`***`) in the
 * text that comes from the server and that mcp-fleet passes on: stderr, HTTP error bodies,
 * JSON-RPC error messages, bad lines it logs. URLs are shown without credentials or query,
 * and causes from the wire are reduced to their text, so no request, header or socket
 * object rides along in an error.
 *
 * It runs on error, status, log and notification paths, never on a call's result. The
 * Redacted values are revealed here, and only to be searched for.
 *
 * Where it is applied: `ServerSpec.secrets` names a server's secret values (Redacted and
 * secret-named `env` values, header values, URL credentials and query values), and the
 * OAuth tokens it is given join them as they are known; every request and notification the
 * server sends is masked as it arrives (`maskIncoming`: progress, logs, elicitation and
 * sampling messages, resource updates), before the CLI prints it or the gateway forwards
 * it; a tool's result is not (the user asked for it). The server's
 * actor masks them in everything else that leaves it (a failed session's error in state, status,
 * events and the supervisor's log; a call's error, in the step that already ends the call;
 * `RefreshFailed` and `LogMessage` events; task status messages; connection diagnostics; its
 * fibers' log lines). The HTTP and WebSocket transports show URLs with `safeUrl` and keep wire
 * causes as text (`scrubCause`). The CLI masks its own logs with every configured server's
 * secrets, `test` its report, and `Render.where` shows a command line masked and a URL safe.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as McpError from "../McpError.js"
import { textBase64, textFromBase64 } from "./crypto.js"

/** What a secret is replaced with. */
export const MASK = "***"

/** The shortest value that is masked: shorter ones would mask ordinary words. */
export const MIN_LENGTH = 8

/**
 * Whether a configured value is masked: at least {@link MIN_LENGTH} characters, and not a
 * number (ports, counts and flags are everywhere in messages; `true`/`null` are short).
 */
export const isMaskable = (value: string): boolean =>
  value.trim().length >= MIN_LENGTH && !/^[+-]?\d+(?:\.\d+)?$/.test(value.trim())

/** Masks one server's secrets in text; built once per server, its search compiled on first use. */
export interface Masker {
  /** No secret to mask: text passes unchanged. */
  readonly isEmpty: boolean
  readonly text: (text: string) => string
}

/** The masker that masks nothing. */
export const none: Masker = { isEmpty: true, text: (text) => text }

// Basic credentials decoded, or undefined when they are not base64.
const basicCredentials = (credentials: string): string | undefined => {
  try {
    return textFromBase64(credentials)
  } catch {
    return undefined
  }
}

// A value as a server may echo it: as configured, URL-encoded, in base64 (a `Basic`
// header), and for `<scheme> <credentials>` (`Bearer x`, `Basic x`) the credentials alone,
// decoded for Basic.
const forms = (value: string): Array<string> => {
  if (!isMaskable(value)) return []
  const encoded = textBase64(value)
  // Padded and not: some encoders drop the padding.
  const out = [value, encodeURIComponent(value), encoded, encoded.replace(/=+$/, "")]
  const scheme = /^(\S+)\s+(\S+)$/.exec(value.trim())
  if (scheme !== null) {
    const credentials = scheme[2]!
    out.push(credentials)
    if (scheme[1]!.toLowerCase() === "basic") {
      const decoded = basicCredentials(credentials)
      if (decoded !== undefined) out.push(decoded, decoded.slice(decoded.indexOf(":") + 1))
    }
  }
  return out.filter(isMaskable)
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

// An excerpt cut a text off with "…": what precedes it may be the start of a secret.
const PARTIAL = 4
const maskCutOff = (text: string, values: ReadonlyArray<string>): string =>
  text.replace(/(\S+)…/g, (whole, before: string) => {
    for (const value of values) {
      for (let k = Math.min(before.length, value.length - 1); k >= PARTIAL; k--) {
        if (before.endsWith(value.slice(0, k))) return `${before.slice(0, before.length - k)}${MASK}…`
      }
    }
    return whole
  })

/**
 * A masker for `secrets`: each value that {@link isMaskable}, in every form a server may
 * echo it, longest first, so a value that contains another is masked whole.
 */
export const make = (secrets: Iterable<Redacted.Redacted<string>>): Masker => {
  const values = [...new Set([...secrets].flatMap((secret) => forms(Redacted.value(secret))))]
    .sort((a, b) => b.length - a.length)
  if (values.length === 0) return none
  let pattern: RegExp | undefined
  return {
    isEmpty: false,
    text: (text) => {
      pattern ??= new RegExp(values.map(escape).join("|"), "g")
      const masked = text.replace(pattern, MASK)
      return masked.includes("…") ? maskCutOff(masked, values) : masked
    }
  }
}

/** A masker that more secrets can join: a server's OAuth tokens, the moment they are known. */
export interface GrowingMasker extends Masker {
  readonly add: (secrets: Iterable<Redacted.Redacted<string>>) => void
}

/** A masker of `secrets` and of those added later; its search is built again on each addition. */
export const growing = (secrets: Iterable<Redacted.Redacted<string>>): GrowingMasker => {
  const known = new Map<string, Redacted.Redacted<string>>()
  let current = none
  const add = (more: Iterable<Redacted.Redacted<string>>) => {
    const before = known.size
    for (const secret of more) known.set(Redacted.value(secret), secret)
    if (known.size !== before) current = make(known.values())
  }
  add(secrets)
  return {
    get isEmpty() {
      return current.isEmpty
    },
    text: (text) => current.text(text),
    add
  }
}

/** Whether a JSON-like value holds one of the masker's secrets (masking it would change it). */
export const carries = (masker: Masker, value: unknown): boolean =>
  !masker.isEmpty && maskValue(masker, value) !== value

/** Every string in a JSON-like value masked; objects are copied only where something changed. */
export const maskValue = (masker: Masker, value: unknown, depth = 0): unknown => {
  if (typeof value === "string") return masker.text(value)
  if (value === null || typeof value !== "object" || depth > 16 || masker.isEmpty) return value
  if (Array.isArray(value)) {
    const items = value.map((item) => maskValue(masker, item, depth + 1))
    return items.some((item, i) => item !== value[i]) ? items : value
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value
  let copy: Record<string, unknown> | undefined
  for (const [key, field] of Object.entries(value)) {
    const masked = maskValue(masker, field, depth + 1)
    if (masked !== field) (copy ??= { ...value })[key] = masked
  }
  return copy ?? value
}

/**
 * What a server sends, as the fleet passes it on: the params of its requests and
 * notifications (progress, log messages, elicitation and sampling requests, resource
 * updates, anything else it may say unasked) with its secrets masked. Answers pass as they
 * are: a call's result is what the user asked for (its error is masked where the call ends).
 */
export const maskIncoming = <M>(masker: Masker, message: M): M => {
  if (masker.isEmpty || typeof message !== "object" || message === null) return message
  const { method, params } = message as { readonly method?: unknown; readonly params?: unknown }
  if (typeof method !== "string" || params === undefined) return message
  const masked = maskValue(masker, params)
  return masked === params ? message : { ...message, params: masked }
}

/** Text with URL credentials (`user:password@`) and queries and fragments (tokens) cut out. */
export const scrubUrls = (text: string): string =>
  text.replace(/(\w+:\/\/)[^\s/@]*@/g, "$1").replace(/(\w+:\/\/[^\s?#]*)[?#]\S*/g, "$1")

/** A URL without its credentials, query or fragment, which may carry tokens: safe to show. */
export const safeUrl = (url: string | URL): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return "(an invalid URL)"
  }
}

/** What is kept of a cause from the wire: its name, text and code, and its own cause. */
export class ScrubbedCause extends Error {
  constructor(name: string, message: string, readonly code: string | undefined, cause: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = name
  }
}

const causeText = (cause: unknown): string => {
  if (cause instanceof Error) return cause.message
  const message = (cause as { readonly message?: unknown } | null)?.message
  return typeof message === "string" ? message : String(cause)
}

/**
 * A cause reduced to text (URLs cut, secrets masked), its `code`, and its own cause chain
 * reduced the same way: an HTTP client's request (headers in clear), a socket or an event
 * carrying a URL with its token is left behind. An McpError cause is masked as one.
 */
export const scrubCause = (cause: unknown, masker: Masker = none, depth = 0): unknown => {
  if (cause === undefined || (cause instanceof ScrubbedCause && masker.isEmpty)) return cause
  if (cause instanceof McpError.McpError) return maskError(masker, cause)
  const inner = (cause as { readonly cause?: unknown } | null)?.cause
  const code = (cause as { readonly code?: unknown } | null)?.code
  const scrubbed = new ScrubbedCause(
    cause instanceof Error ? cause.name : "Error",
    masker.text(scrubUrls(causeText(cause))),
    typeof code === "string" ? code : undefined,
    inner === undefined || depth >= 4 ? undefined : scrubCause(inner, masker, depth + 1)
  )
  // Keep where it was thrown, without the first line that repeats the message.
  const frames = cause instanceof Error ? cause.stack?.split("\n").filter((line) => /^\s+at /.test(line)) : undefined
  if (frames !== undefined) scrubbed.stack = [`${scrubbed.name}: ${scrubbed.message}`, ...frames].join("\n")
  return scrubbed
}

const maskReason = (masker: Masker, reason: McpError.Reason): McpError.Reason => {
  if (masker.isEmpty) return reason
  let fields: Record<string, unknown> | undefined
  for (const [key, field] of Object.entries(reason)) {
    if (key === "_tag") continue
    const masked = maskValue(masker, field)
    if (masked !== field) (fields ??= { ...reason })[key] = masked
  }
  if (fields === undefined) return reason
  const { _tag, ...rest } = fields
  const Reason = reason.constructor as new(fields: Record<string, unknown>) => McpError.Reason
  return new Reason(rest)
}

/** The error with the server's secrets masked in its reason and its cause scrubbed. */
export const maskError = (masker: Masker, error: McpError.McpError): McpError.McpError => {
  const reason = maskReason(masker, error.reason)
  const cause = scrubCause(error.cause, masker)
  return reason === error.reason && cause === error.cause ? error : McpError.make(error.server, reason, cause)
}

const maskCause = <E>(masker: Masker, cause: Cause.Cause<E>): Cause.Cause<unknown> =>
  Cause.match(cause, {
    onEmpty: Cause.empty as Cause.Cause<unknown>,
    onFail: (error) => Cause.fail(scrubCause(error, masker)),
    onDie: (defect) => Cause.die(scrubCause(defect, masker)),
    onInterrupt: Cause.interrupt,
    onSequential: Cause.sequential,
    onParallel: Cause.parallel
  })

const maskLogger = (masker: Masker) => <O>(logger: Logger.Logger<unknown, O>): Logger.Logger<unknown, O> =>
  Logger.mapInputOptions(logger, (options) => ({
    ...options,
    message: maskValue(masker, options.message),
    annotations: HashMap.map(options.annotations, (value) => maskValue(masker, value)),
    cause: Cause.isEmpty(options.cause) ? options.cause : maskCause(masker, options.cause)
  }))

const maskLoggers = (masker: Masker) => (loggers: HashSet.HashSet<Logger.Logger<unknown, any>>) =>
  HashSet.map(loggers, maskLogger(masker))

/** Runs `effect` with its logs, and those of every fiber it starts, masked. */
export const maskLogs = (masker: Masker) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  masker === none ? effect : Effect.locallyWith(effect, FiberRef.currentLoggers, maskLoggers(masker))

/** Masks the logs of the current fiber, and of those it starts, until the Scope closes. */
export const maskLogsScoped = (masker: Masker): Effect.Effect<void, never, Scope.Scope> =>
  masker === none ? Effect.void : Effect.locallyScopedWith(FiberRef.currentLoggers, maskLoggers(masker))
