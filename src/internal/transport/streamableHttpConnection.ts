/**
 * What the pieces of one Streamable HTTP connection share: the endpoint, the settings, the
 * session (its `Mcp-Session-Id` and the negotiated `MCP-Protocol-Version`, sent on every
 * request after initialize), the tool arguments a 2026-07-28 request mirrors into headers,
 * and where the server's messages go.
 *
 * A modern request's headers are made once per method and target, and per call only for a tool
 * that mirrors arguments.
 *
 * @internal
 */
import type * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import type { Incoming } from "../../Transport.js"
import type * as Http from "./http.js"
import { type Mirror, requestHeaders, targetOf } from "./mcpHeaders.js"

/** How lost streams are resumed, and how long the server may take to accept. */
export interface Settings {
  /** For messages that expect no answer, opening streams, ending the session, in milliseconds. */
  readonly httpTimeoutMs: number
  readonly initialDelayMs: number
  readonly maxDelayMs: number
  readonly maxAttempts: number
}

const ACCEPT = "application/json, text/event-stream"

// The most targets (tools, prompts, URIs, task ids) of one method whose headers are kept.
const MAX_TARGETS = 256

// A method's 2026-07-28 headers: the revision they were made for, and the object of each
// target (or of no target) whose request mirrors no tool argument.
interface MethodHeaders {
  readonly version: string
  untargeted: Readonly<Record<string, string>> | undefined
  readonly byTarget: Map<string, Readonly<Record<string, string>>>
}

/** One connection's shared state. */
export class Connection {
  /** The server's `Mcp-Session-Id`, from its answer to initialize. */
  sessionId: string | undefined
  /** The revision negotiated by initialize. */
  protocolVersion: string | undefined
  /** The id of the initialize request, whose answer names the revision. */
  initializeId: JsonRpc.RequestId | undefined
  /** Set when the Scope closes: streams ending then are not resumed. */
  closing = false
  /** The `x-mcp-header` arguments of each tool, as the tools were last listed (2026-07-28). */
  toolMirrors: ReadonlyMap<string, ReadonlyArray<Mirror>> = new Map()
  private postHeaders: Record<string, string> | undefined
  // A request of 2026-07-28 repeats its method and target: their headers are made once.
  private readonly modernHeaders = new Map<string, MethodHeaders>()

  constructor(
    readonly ctx: Http.Context,
    readonly url: string,
    readonly settings: Settings,
    private readonly onIncoming: (message: Incoming, related?: JsonRpc.RequestId) => void
  ) {}

  /**
   * Hands on what the server sent (with the id of the request whose stream carried it, when
   * it came on a POST's stream), noting the negotiated revision on the way.
   */
  readonly deliver = (message: Incoming, related?: JsonRpc.RequestId): void => {
    if (this.initializeId !== undefined && "result" in message && message.id === this.initializeId) {
      const version = message.result.protocolVersion
      if (typeof version === "string") this.setSession(this.sessionId, version)
    }
    this.onIncoming(message, related)
  }

  /** Notes the session id and revision; the headers follow. */
  setSession(id: string | undefined, protocolVersion: string | undefined): void {
    this.sessionId = id
    this.protocolVersion = protocolVersion
    this.postHeaders = undefined
    this.modernHeaders.clear()
  }

  /** The headers of a POST: the same object until the session changes. */
  get post(): Readonly<Record<string, string>> {
    return this.postHeaders ??= this.headers({ accept: ACCEPT, "content-type": "application/json" })
  }

  /**
   * The headers of a POST carrying request `message` of revision `version` (from its
   * `_meta`): a 2026-07-28 request gets its metadata headers, any other the session's.
   */
  requestHeaders(message: JsonRpc.Request, version: string | undefined): Readonly<Record<string, string>> {
    if (version === undefined) return this.post
    const method = message.method
    const target = targetOf(message)
    // A tool call with mirrored arguments has headers of its own values: made every time.
    if (target !== undefined && method === "tools/call" && this.toolMirrors.has(target)) {
      return requestHeaders(this.post, message, version, (tool) => this.toolMirrors.get(tool))
    }
    let known = this.modernHeaders.get(method)
    if (known === undefined || known.version !== version) {
      known = { version, untargeted: undefined, byTarget: new Map() }
      this.modernHeaders.set(method, known)
    }
    if (target === undefined) return known.untargeted ??= requestHeaders(this.post, message, version, noMirrors)
    let headers = known.byTarget.get(target)
    if (headers === undefined) {
      if (known.byTarget.size >= MAX_TARGETS) known.byTarget.clear()
      headers = requestHeaders(this.post, message, version, noMirrors)
      known.byTarget.set(target, headers)
    }
    return headers
  }

  /** The configured headers, the session's, and `extra`. */
  headers(extra: Readonly<Record<string, string>>): Record<string, string> {
    const out: Record<string, string> = { ...this.ctx.headers, ...extra }
    if (this.sessionId !== undefined) out["mcp-session-id"] = this.sessionId
    if (this.protocolVersion !== undefined) out["mcp-protocol-version"] = this.protocolVersion
    return out
  }

  /**
   * The error a connection ends with when the server no longer knows its session (HTTP 404
   * on a request that carried it), and that `refused`, the request it answered, fails with.
   * The owner reconnects: a new connection initializes again.
   */
  sessionExpired(refused?: string): McpError.McpError {
    return McpError.closed(
      this.ctx.server,
      {
        message: "the server ended the session (HTTP 404)",
        sessionExpired: true,
        // The request the 404 answered was not run: it may be sent on the next session.
        ...(refused === undefined ? {} : { method: refused, unsent: true })
      }
    )
  }
}

const noMirrors = (): undefined => undefined

/** Whether the server could not be reached at all (refused, reset, DNS): then it is gone. */
export const unreachable = (error: McpError.McpError): boolean => error.reason._tag === "Transport"

/**
 * Whether an error ends the connection: the server is unreachable, forgot the session, or
 * refuses our credentials (401 or 403): every later message would be refused too, and the
 * owner waits for new credentials instead.
 */
export const endsConnection = (error: McpError.McpError): boolean =>
  unreachable(error) || error.needsAuth || (error.reason._tag === "Closed" && error.reason.sessionExpired === true)
