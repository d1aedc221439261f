/**
 * The one error type of mcp-fleet: every failure says what went wrong in a `reason`, so
 * callers can match on `error.reason._tag` and people can read `error.message`. A failure
 * that concerns one server names it in `server`; a failure of the fleet as a whole (an
 * unknown qualified tool name, several servers not ready in time, the gateway unable to
 * listen) has no `server`, and never a made-up or joined one.
 *
 * Whether another attempt may help is a property of the error (`retryable`, `needsAuth`),
 * so the supervisor and callers decide the same way.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"

// Built on `Data`, not `Schema`: `effect/Schema` loads fast-check and builds its classes at
// import, megabytes of resident memory for every client that only ever fails with this type.
// The Schemas of this module (for the cluster's wire) are in `McpErrorSchema`.

/**
 * How a child process ended: its exit code or the signal that killed it, and the last
 * lines it wrote to stderr.
 *
 * @since 0.1.0
 */
export interface ProcessExit {
  readonly exitCode?: number | null | undefined
  readonly signal?: string | null | undefined
  readonly stderrTail?: string | undefined
}

/**
 * The transport failed: spawning, writing or reading failed for a reason other than the
 * server closing the connection.
 *
 * @since 0.1.0
 */
export class TransportReason extends Data.TaggedClass("Transport")<
  {
    readonly message: string
    /**
     * The system's error code when it refused to start the server: `ENOENT` (no such program
     * or working directory) or `EACCES` (not allowed to run it) cannot be fixed by retrying.
     */
    readonly code?: string | undefined
  } & ProcessExit
> {}

/**
 * The connection closed (the process exited, the peer hung up, the scope closed) while
 * something still needed it. `method` is the request that was waiting, if any.
 * `sessionExpired` is set when an HTTP server no longer knew the session (404): a request
 * it refused that way was not processed, and a new connection starts a new session.
 * `unsent` is set when the request was refused because the connection had ended before it
 * was sent: the server cannot have seen it, so sending it on a new connection runs it once.
 *
 * @since 0.1.0
 */
export class ClosedReason extends Data.TaggedClass("Closed")<
  {
    readonly message: string
    readonly method?: string | undefined
    readonly sessionExpired?: boolean | undefined
    readonly unsent?: boolean | undefined
  } & ProcessExit
> {}

/**
 * The server answered with a JSON-RPC error.
 *
 * @since 0.1.0
 */
export class ProtocolReason extends Data.TaggedClass("Protocol")<{
  readonly method: string
  readonly code: number
  readonly message: string
  readonly data?: unknown
}> {}

/**
 * A request got no answer in time: `idle` when no progress came for `afterMs`, `total`
 * when the maximum total time ran out.
 *
 * @since 0.1.0
 */
export class TimeoutReason extends Data.TaggedClass("Timeout")<{
  readonly method: string
  readonly afterMs: number
  readonly kind: "idle" | "total"
}> {}

/**
 * An HTTP server answered with an error status. `method` is what was asked (an MCP method,
 * or the GET stream), `body` the start of the answer, and `wwwAuthenticate` the challenge
 * of a 401 or 403, which says how to authenticate.
 *
 * @since 0.1.0
 */
export class HttpReason extends Data.TaggedClass("Http")<{
  readonly status: number
  readonly method: string
  readonly body: string
  readonly wwwAuthenticate?: string | undefined
}> {}

/**
 * A size or count limit was exceeded (message size, list pages, list items).
 *
 * @since 0.1.0
 */
export class LimitReason extends Data.TaggedClass("Limit")<{
  readonly what: string
  /** How large it was, when known (a WebSocket frame's size is not). */
  readonly size?: number | undefined
  readonly limit: number
}> {}

/**
 * A message did not have the shape the protocol requires (a malformed result, structured
 * content that does not match a tool's outputSchema, a repeated cursor).
 *
 * @since 0.1.0
 */
export class ValidationReason extends Data.TaggedClass("Validation")<{
  readonly message: string
  readonly method?: string | undefined
}> {}

/**
 * The server (or its negotiated protocol revision) does not support what was asked.
 *
 * @since 0.1.0
 */
export class UnsupportedReason extends Data.TaggedClass("Unsupported")<{
  readonly message: string
}> {}

/**
 * The server cannot take requests now and will not by waiting: it is disabled, stopped,
 * failed for good, or did not become ready in time. `state` is its state at that moment.
 *
 * @since 0.1.0
 */
export class UnavailableReason extends Data.TaggedClass("Unavailable")<{
  readonly state: string
  readonly message: string
}> {}

/**
 * What a `NotFoundReason` did not find.
 *
 * @since 0.4.0
 */
export type NotFoundWhat = "server" | "tool" | "prompt" | "resource" | "drifted tool" | "skill"

/**
 * No server, tool, prompt or resource has that name (or, for `drifted tool`, no tool of
 * that name awaits approval); `suggestions` are the closest names.
 *
 * @since 0.1.0
 */
export class NotFoundReason extends Data.TaggedClass("NotFound")<{
  readonly what: NotFoundWhat
  readonly name: string
  readonly suggestions: ReadonlyArray<string>
}> {}

/**
 * The server's configuration cannot be used (a missing variable, a bad field).
 *
 * @since 0.1.0
 */
export class ConfigReason extends Data.TaggedClass("Config")<{
  readonly message: string
}> {}

/**
 * Tool policy refused a call: a `deny` rule matched, an `ask` rule matched and the
 * approver said no (or there is no approver). `tool` is the qualified name and `rule` the
 * rule that decided, as written (`deny "mcp__github__*" (global)`), when one did.
 *
 * @since 0.1.0
 */
export class DeniedReason extends Data.TaggedClass("Denied")<{
  readonly tool: string
  readonly rule?: string | undefined
  readonly message: string
}> {}

/**
 * A tool call may have run on a server that then died (its process exited, its connection
 * or its runner was lost) before answering, and is not sent again: the tool is not
 * annotated `idempotentHint` or `readOnlyHint`, so running it a second time could do its
 * effect twice. `message` says what ended.
 *
 * @since 0.1.0
 */
export class InDoubtReason extends Data.TaggedClass("InDoubt")<{
  readonly tool: string
  readonly message: string
}> {}

/**
 * Every reason an McpError can have (its Schema is `McpErrorSchema.Reason`).
 *
 * @since 0.1.0
 */
export type Reason =
  | TransportReason
  | ClosedReason
  | ProtocolReason
  | HttpReason
  | TimeoutReason
  | LimitReason
  | ValidationReason
  | UnsupportedReason
  | UnavailableReason
  | NotFoundReason
  | ConfigReason
  | DeniedReason
  | InDoubtReason

const exitText = (exit: ProcessExit): string =>
  exit.signal
    ? `was killed by ${exit.signal}`
    : typeof exit.exitCode === "number"
    ? `exited with code ${exit.exitCode}`
    : ""

/** How much of a process's stderr a message keeps: its last lines, within a size. */
const TAIL_LINES = 20
const TAIL_CHARS = 2048

// The end of the stderr tail, enough for the lines that explain a failure (a Node stack trace
// puts "Cannot find module" a dozen lines from the end); `stderrTail` keeps all of it.
const tail = (exit: ProcessExit): string => {
  const text = exit.stderrTail?.trim()
  if (!text) return ""
  const kept = text.split("\n").slice(-TAIL_LINES).join("\n")
  if (kept.length <= TAIL_CHARS) return `: ${kept}`
  // Too long: the last characters, from a line's start when one begins among them.
  const end = kept.slice(-TAIL_CHARS)
  const newline = end.indexOf("\n")
  return `: …${newline === -1 ? end : end.slice(newline + 1)}`
}

// The 2026-07-28 probe is the first thing a server is asked: a server that dies before it
// never agreed on a revision, so the user is told of the handshake, not of a method name.
const answering = (method: string): string => method === "server/discover" ? "the handshake" : method

const describe = (server: string | undefined, reason: Reason): string => {
  const who = server === undefined ? "the server" : `server '${server}'`
  // "server 'x': text", or the text alone for a failure of the fleet as a whole.
  const about = (text: string) => server === undefined ? text : `${who}: ${text}`
  switch (reason._tag) {
    case "Closed": {
      const how = exitText(reason)
      // A process that ended did not answer, whether or not the request reached it (a write
      // into a pipe it had closed is refused): one wording, however the race went.
      const when = reason.method === undefined
        ? ""
        : reason.unsent === true && !how && reason.sessionExpired !== true
        ? ` (${reason.method} was not sent)`
        : ` before answering ${answering(reason.method)}`
      return how ? `${who} ${how}${when}${tail(reason)}` : `${about(reason.message)}${when}${tail(reason)}`
    }
    case "Transport": {
      const how = exitText(reason)
      return `${about(reason.message)}${how ? ` (process ${how})` : ""}${tail(reason)}`
    }
    case "Protocol":
      // SDK servers repeat the code in the message ("MCP error -32602: ..."): say it once.
      return `${who} answered ${reason.method} with error ${reason.code}: ${
        reason.message.replace(/^MCP error -?\d+:\s*/, "")
      }`
    case "Http": {
      const body = reason.body.trim()
      const challenge = reason.wwwAuthenticate ? ` (WWW-Authenticate: ${reason.wwwAuthenticate})` : ""
      return `${who} answered ${reason.method} with HTTP ${reason.status}${body ? `: ${body}` : ""}${challenge}`
    }
    case "Timeout":
      return reason.kind === "idle"
        ? `${who} did not answer ${reason.method} within ${reason.afterMs} ms`
        : `${who} did not finish ${reason.method} within its maximum of ${reason.afterMs} ms`
    case "Limit":
      return about(
        reason.size === undefined
          ? `${reason.what} exceeds the limit of ${reason.limit}`
          : `${reason.what} of ${reason.size} exceeds the limit of ${reason.limit}`
      )
    case "Validation":
      return server === undefined
        ? `${reason.method ? `${reason.method}: ` : ""}${reason.message}`
        : `${who}${reason.method ? ` (${reason.method})` : ""}: ${reason.message}`
    case "Unsupported":
    case "Unavailable":
      return about(reason.message)
    case "NotFound": {
      const hint = reason.suggestions.length > 0
        ? `; did you mean ${reason.suggestions.map((name) => `'${name}'`).join(", ")}?`
        : ""
      return reason.what === "server" || server === undefined
        ? `there is no ${reason.what} '${reason.name}'${hint}`
        : `${who} has no ${reason.what} '${reason.name}'${hint}`
    }
    case "Config":
      return server === undefined
        ? `the configuration cannot be used: ${reason.message}`
        : `${who} is misconfigured: ${reason.message}`
    case "Denied":
      // A tool held back by its pins is not the policy's refusal: say which it is.
      return about(
        reason.rule === "tool pinning"
          ? `tool '${reason.tool}' is quarantined by tool pinning: ${reason.message}`
          : `tool '${reason.tool}' was denied by policy: ${reason.message}`
      )
    case "InDoubt":
      return `${who} ended while running tool '${reason.tool}', which may have run: it is not sent again, ` +
        `as '${reason.tool}' is not annotated idempotentHint or readOnlyHint (${reason.message})`
  }
}

/**
 * What an McpError holds: the server it concerns (never empty), its reason, and what caused it.
 *
 * @since 0.4.0
 * @category models
 */
export interface McpErrorFields {
  readonly server?: string | undefined
  readonly reason: Reason
  readonly cause?: unknown
}

/**
 * The error of every mcp-fleet operation. `server` is the one server the failure concerns,
 * absent when it concerns none or several of them.
 *
 * @since 0.1.0
 * @category errors
 */
export class McpError extends Data.TaggedError("McpError")<McpErrorFields> {
  constructor(fields: McpErrorFields) {
    // A programming error, thrown as Schema's constructor check did: a name is one server's.
    if (fields.server === "") throw new TypeError("McpError: a server's name cannot be empty")
    super(fields)
  }

  /**
   * A sentence that tells a person what happened, naming the server.
   */
  override get message(): string {
    return describe(this.server, this.reason)
  }

  /**
   * Whether the same thing may succeed if tried again later, with no change of config or
   * credentials: false for an unsupported feature or revision, a configuration that cannot
   * be used, a program that does not exist or may not be run, a refusal for want of
   * credentials, a policy denial, an unknown name and a server that is unavailable for good.
   */
  get retryable(): boolean {
    switch (this.reason._tag) {
      case "Transport":
        return this.reason.code !== "ENOENT" && this.reason.code !== "EACCES"
      case "Unsupported":
      case "Config":
      case "Denied":
      case "InDoubt":
      case "NotFound":
      case "Unavailable":
        return false
      case "Http":
        return !this.needsAuth
      default:
        return true
    }
  }

  /**
   * Whether the request was never sent, because its connection had already ended: the
   * server cannot have seen it, so it can be sent again on a new connection without
   * running twice. A request that may have reached the server is never `unsent`.
   */
  get unsent(): boolean {
    return this.reason._tag === "Closed" && this.reason.unsent === true
  }

  /**
   * Whether the server refused us for want of credentials (HTTP 401 or 403): only new
   * credentials (a config change or a restart) can help.
   */
  get needsAuth(): boolean {
    return this.reason._tag === "Http" && (this.reason.status === 401 || this.reason.status === 403)
  }
}

/**
 * Makes an McpError about `server`, or about the fleet as a whole when `server` is
 * undefined. The name must be one server's, never empty or a list.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (server: string | undefined, reason: Reason, cause?: unknown): McpError =>
  new McpError({ reason, ...(server === undefined ? {} : { server }), ...(cause === undefined ? {} : { cause }) })

// One constructor per reason, so a failure reads `McpError.closed(server, { message })`.
const reasonOf =
  <R extends Reason, F>(Reason: new(fields: F) => R) =>
  (server: string | undefined, fields: F, cause?: unknown): McpError => make(server, new Reason(fields), cause)

/**
 * An McpError whose reason is a `TransportReason`: spawning, writing or reading failed.
 *
 * @since 0.3.0
 * @category constructors
 */
export const transport = reasonOf(TransportReason)

/**
 * An McpError whose reason is a `ClosedReason`: the connection closed while it was needed.
 *
 * @since 0.3.0
 * @category constructors
 */
export const closed = reasonOf(ClosedReason)

/**
 * An McpError whose reason is a `ProtocolReason`: the server answered with a JSON-RPC error.
 *
 * @since 0.3.0
 * @category constructors
 */
export const protocol = reasonOf(ProtocolReason)

/**
 * An McpError whose reason is a `TimeoutReason`: a request was not answered in time.
 *
 * @since 0.3.0
 * @category constructors
 */
export const timeout = reasonOf(TimeoutReason)

/**
 * An McpError whose reason is an `HttpReason`: the server answered with an HTTP error status.
 *
 * @since 0.3.0
 * @category constructors
 */
export const http = reasonOf(HttpReason)

/**
 * An McpError whose reason is a `LimitReason`: something exceeded its limit.
 *
 * @since 0.3.0
 * @category constructors
 */
export const limit = reasonOf(LimitReason)

/**
 * An McpError whose reason is a `ValidationReason`: a message did not match its schema.
 *
 * @since 0.3.0
 * @category constructors
 */
export const validation = reasonOf(ValidationReason)

/**
 * An McpError whose reason is an `UnsupportedReason`: the server or revision lacks a feature.
 *
 * @since 0.3.0
 * @category constructors
 */
export const unsupported = reasonOf(UnsupportedReason)

/**
 * An McpError whose reason is an `UnavailableReason`: the server is not in a state to answer.
 *
 * @since 0.3.0
 * @category constructors
 */
export const unavailable = reasonOf(UnavailableReason)

/**
 * An McpError whose reason is a `NotFoundReason`: no server, tool, prompt or resource of that name.
 *
 * @since 0.3.0
 * @category constructors
 */
export const notFound = reasonOf(NotFoundReason)

/**
 * An McpError whose reason is a `ConfigReason`: the configuration cannot be used.
 *
 * @since 0.3.0
 * @category constructors
 */
export const config = reasonOf(ConfigReason)

/**
 * An McpError whose reason is a `DeniedReason`: the policy denied a tool call.
 *
 * @since 0.3.0
 * @category constructors
 */
export const denied = reasonOf(DeniedReason)

/**
 * An McpError whose reason is an `InDoubtReason`: a tool call may have run on a server that
 * died, and is not sent again.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inDoubt = reasonOf(InDoubtReason)
