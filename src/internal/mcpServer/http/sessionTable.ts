/**
 * The sessions of the gateway's HTTP endpoint by Mcp-Session-Id: opened at initialize (up
 * to a maximum), found by the header of every later request, and ended by DELETE, by being
 * idle too long, or with the server.
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

/** The sessions of one endpoint. */
export class SessionTable {
  private readonly sessions = new Map<string, HttpSession.HttpSession>()

  constructor(
    readonly server: McpServer.McpServer,
    private readonly scope: Scope.Scope,
    private readonly clock: Clock.Clock,
    private readonly maxSessions: number
  ) {}

  /** How many sessions are open. */
  get size(): number {
    return this.sessions.size
  }

  /** Whether `id` names an open session. */
  has(id: string | undefined): boolean {
    return id !== undefined && this.sessions.has(id)
  }

  /** A new session of `caller` (with OAuth), or 503 when there are `maxSessions` already. */
  open(caller?: Caller): Effect.Effect<HttpSession.HttpSession | Answer> {
    return Effect.suspend((): Effect.Effect<HttpSession.HttpSession | Answer> => {
      if (this.sessions.size >= this.maxSessions) {
        return Effect.succeed(
          jsonRpcError(503, JsonRpc.ErrorCode.InternalError, "too many sessions; end one with DELETE first")
        )
      }
      return HttpSession.open(this.server, this.scope, this.clock, caller).pipe(
        Effect.tap((session) => Effect.sync(() => this.sessions.set(session.id, session)))
      )
    })
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
   * Ends the sessions idle (no request, no open stream) for `timeout`, checking now and then,
   * for clients that go away without DELETE. Runs until interrupted.
   */
  expireIdle(timeout: Duration.DurationInput): Effect.Effect<never> {
    const idleMs = Duration.toMillis(timeout)
    const sweep = Effect.suspend(() => {
      const now = this.clock.unsafeCurrentTimeMillis()
      const idle = [...this.sessions.values()].filter((session) => HttpSession.isIdle(session, now, idleMs))
      return Effect.forEach(idle, (session) => this.close(session), { discard: true })
    })
    return Effect.forever(Effect.zipRight(sweep, Effect.sleep(Math.min(Math.max(idleMs / 4, 10), 60_000))))
  }
}
