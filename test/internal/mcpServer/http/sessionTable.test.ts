import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import type { HttpSession } from "../../../../src/internal/mcpServer/http/httpSession.js"
import { Answer } from "../../../../src/internal/mcpServer/http/response.js"
import { type Limits, SessionTable } from "../../../../src/internal/mcpServer/http/sessionTable.js"
import * as McpServer from "../../../../src/McpServer.js"

// A table over a server that serves nothing, allowing two sessions.
const table = Effect.gen(function*() {
  const server = yield* McpServer.make({ serverInfo: { name: "test", version: "0" }, handlers: {} })
  const limits: Limits = {
    maxSessions: 2,
    maxSessionsPerPrincipal: 2,
    maxSessionsPerAddress: 2,
    initializeTimeout: "1 minute",
    sessionIdleTimeout: "1 minute"
  }
  return new SessionTable(server, yield* Effect.scope, yield* Effect.clock, limits, false)
})

const opened = (table: SessionTable) =>
  Effect.map(table.open(undefined, undefined), (session) => {
    if (session instanceof Answer) throw new Error(`refused: ${session.status}`)
    return session
  })

const status = (found: HttpSession | Answer) => found instanceof Answer ? found.status : "found"

describe("gateway session table", () => {
  it.scoped("opens up to the maximum, finds sessions by header, and ends them", () =>
    Effect.gen(function*() {
      const sessions = yield* table
      const a = yield* opened(sessions)
      const b = yield* opened(sessions)
      // Both busy: nothing idle to end for a third.
      a.standing = b.standing = { write: () => {}, end: () => {} }
      expect(status(yield* sessions.open(undefined, undefined))).toBe(503)
      a.standing = undefined
      expect(status(sessions.lookup({ "mcp-session-id": a.id }))).toBe("found")
      expect(status(sessions.lookup({}))).toBe(400)
      expect(status(sessions.lookup({ "mcp-session-id": "constructor" }))).toBe(404)
      expect(status(sessions.lookup({ "mcp-session-id": a.id, "mcp-protocol-version": "1999-01-01" }))).toBe(400)
      yield* sessions.close(a)
      expect(status(sessions.lookup({ "mcp-session-id": a.id }))).toBe(404)
      expect(a.inbox.open).toBe(false)
      yield* sessions.close(a)
      yield* sessions.closeAll()
      expect(sessions.size).toBe(0)
    }))

  it.scoped("sessions idle past the timeout end; activity and open streams keep them", () =>
    Effect.gen(function*() {
      const sessions = yield* table
      const idle = yield* opened(sessions)
      const busy = yield* opened(sessions)
      busy.standing = { write: () => {}, end: () => {} }
      const sweeper = yield* Effect.fork(sessions.expireIdle())
      yield* TestClock.adjust("30 seconds")
      expect(status(sessions.lookup({ "mcp-session-id": idle.id }))).toBe("found")
      yield* TestClock.adjust("45 seconds")
      expect(status(sessions.lookup({ "mcp-session-id": idle.id }))).toBe("found")
      yield* TestClock.adjust("75 seconds")
      expect(status(sessions.lookup({ "mcp-session-id": idle.id }))).toBe(404)
      expect(status(sessions.lookup({ "mcp-session-id": busy.id }))).toBe("found")
      yield* Fiber.interrupt(sweeper)
    }))
})
