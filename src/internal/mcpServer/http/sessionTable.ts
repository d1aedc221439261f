/**
 * The sessions of the gateway's HTTP endpoint by Mcp-Session-Id: opened at initialize (under
 * caps per address, per principal and in all, each making room by ending the least recently
 * used idle session), found by the header of every later request, and ended by DELETE, by
 * being idle too long (seconds for one whose client never came back after initialize), or
 * with the server.
 *
 * @internal
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as JsonRpc from "../../../JsonRpc.js"
import type * as McpServer from "../../../McpServer.js"
import { type Caller, checkVersion, jsonRpcError, type RequestHeaders, sameCaller } from "./guard.js"
import * as HttpSession from "./httpSession.js"
import type { Answer } from "./response.js"

/** The caps and timeouts of an endpoint's sessions. */
export interface Limits {
  /** The most sessions at once. */
  readonly maxSessions: number
  /** The most of one principal (OAuth subject, or the static token's holder). */
  readonly maxSessionsPerPrincipal: number
  /** The most of one client address (where the platform gives it). */
  readonly maxSessionsPerAddress: number
  /** How long a session may wait for the client's first request after initialize. */
  readonly initializeTimeout: Duration.DurationInput
  /** How long a session may be idle (no request, no open stream) before it ends. */
  readonly sessionIdleTimeout: Duration.DurationInput
}

// The caps a new session of `owner` counts against: which sessions share each, and its size.
interface Cap {
  readonly what: string
  readonly max: number
  readonly shares: (session: HttpSession.HttpSession) => boolean
}

/** The sessions of one endpoint. */
export class SessionTable {
  private readonly sessions = new Map<string, HttpSession.HttpSession>()

  constructor(
    readonly server: McpServer.McpServer,
    private readonly scope: Scope.Scope,
    private readonly clock: Clock.Clock,
    private readonly limits: Limits,
    /** Whether a static token guards the endpoint: its holders are one principal. */
    private readonly tokened: boolean
  ) {}

  /** How many sessions are open. */
  get size(): number {
    return this.sessions.size
  }

  /** Whether `id` names an open session. */
  has(id: string | undefined): boolean {
    return id !== undefined && this.sessions.has(id)
  }

  /**
   * A new session of `caller` (with OAuth) from `address`. At a cap (per address, per
   * principal, in all) the least recently used idle session under it ends to make room (its
   * client gets 404 and initializes again), so abandoned sessions never lock newcomers out;
   * 503 only when every session under the cap is busy.
   */
  open(caller: Caller | undefined, address: string | undefined): Effect.Effect<HttpSession.HttpSession | Answer> {
    return Effect.suspend((): Effect.Effect<HttpSession.HttpSession | Answer> => {
      const owner: HttpSession.Owner = { principal: this.principalOf(caller), address }
      const victims = this.makeRoom(owner)
      if (!Array.isArray(victims)) return Effect.succeed(victims)
      return Effect.forEach(victims, (session) => this.close(session), { discard: true }).pipe(
        Effect.zipRight(HttpSession.open(this.server, this.scope, this.clock, caller, owner)),
        Effect.tap((session) => Effect.sync(() => this.sessions.set(session.id, session)))
      )
    })
  }

  private principalOf(caller: Caller | undefined): string | undefined {
    if (caller !== undefined) return `${caller.issuer}\u0000${caller.subject ?? caller.clientId ?? ""}`
    return this.tokened ? "token" : undefined
  }

  // The sessions to end so a session of `owner` fits under every cap (least recently used
  // idle ones first), or the 503 when one cap holds only busy sessions.
  private makeRoom(owner: HttpSession.Owner): Array<HttpSession.HttpSession> | Answer {
    const caps: Array<Cap> = [{ what: "in all", max: this.limits.maxSessions, shares: () => true }]
    if (owner.principal !== undefined) {
      caps.unshift({
        what: "for this principal",
        max: this.limits.maxSessionsPerPrincipal,
        shares: (session) => session.owner.principal === owner.principal
      })
    }
    if (owner.address !== undefined) {
      caps.unshift({
        what: "from this address",
        max: this.limits.maxSessionsPerAddress,
        shares: (session) => session.owner.address === owner.address
      })
    }
    const now = this.clock.unsafeCurrentTimeMillis()
    const victims: Array<HttpSession.HttpSession> = []
    for (const cap of caps) {
      const sharing = [...this.sessions.values()].filter((session) => cap.shares(session) && !victims.includes(session))
      const excess = sharing.length - cap.max + 1
      if (excess <= 0) continue
      // Oldest first; among equals, the first opened (the sort is stable).
      const idle = sharing.filter((session) => HttpSession.isIdle(session, now, 0))
        .sort((a, b) => a.lastActive - b.lastActive)
      if (idle.length < excess) {
        return jsonRpcError(
          503,
          JsonRpc.ErrorCode.InternalError,
          `too many sessions ${cap.what} (${cap.max}), none idle; end one with DELETE first`
        )
      }
      for (const session of idle.slice(0, excess)) victims.push(session)
    }
    return victims
  }

  /**
   * The session a request names, now active: 400 without one, 404 for one that ended or
   * never was, or another caller's (with OAuth: a session id is no credential), and 400 for
   * a protocol revision header naming one the gateway does not speak.
   */
  lookup(headers: RequestHeaders, caller?: Caller): HttpSession.HttpSession | Answer {
    const id = headers["mcp-session-id"]
    if (id === undefined) {
      return jsonRpcError(400, JsonRpc.ErrorCode.InvalidRequest, "Bad Request: Mcp-Session-Id header is required")
    }
    const session = this.sessions.get(id)
    if (session === undefined || !sameCaller(session.caller, caller)) {
      return jsonRpcError(404, -32001, "Session not found")
    }
    const refused = checkVersion(headers)
    if (refused !== undefined) return refused
    session.lastActive = this.clock.unsafeCurrentTimeMillis()
    session.established = true
    return session
  }

  /** Ends a session; nothing when it has ended already. */
  close(session: HttpSession.HttpSession): Effect.Effect<void> {
    return Effect.suspend(() => this.sessions.delete(session.id) ? Scope.close(session.scope, Exit.void) : Effect.void)
  }

  /** Ends every session. */
  closeAll(): Effect.Effect<void> {
    return Effect.suspend(() =>
      Effect.forEach([...this.sessions.values()], (session) => this.close(session), { discard: true })
    )
  }

  /**
   * Ends the sessions idle (no request, no open stream) for the idle timeout, and those whose
   * client never came back after initialize for the (shorter) initialize timeout, checking now
   * and then, for clients that go away without DELETE. Runs until interrupted.
   */
  expireIdle(): Effect.Effect<never> {
    const idleMs = Duration.toMillis(this.limits.sessionIdleTimeout)
    const initializeMs = Duration.toMillis(this.limits.initializeTimeout)
    const sweep = Effect.suspend(() => {
      const now = this.clock.unsafeCurrentTimeMillis()
      const idle = [...this.sessions.values()].filter((session) =>
        HttpSession.isIdle(session, now, session.established ? idleMs : Math.min(initializeMs, idleMs))
      )
      return Effect.forEach(idle, (session) => this.close(session), { discard: true })
    })
    const every = Math.min(Math.max(Math.min(idleMs, initializeMs) / 4, 10), 60_000)
    return Effect.forever(Effect.zipRight(sweep, Effect.sleep(every)))
  }
}
