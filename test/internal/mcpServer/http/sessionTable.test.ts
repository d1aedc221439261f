import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import type { HttpSession } from "../../../../src/internal/mcpServer/http/httpSession.js"
import { Answer } from "../../../../src/internal/mcpServer/http/response.js"
import { SessionTable } from "../../../../src/internal/mcpServer/http/sessionTable.js"
import * as McpServer from "../../../../src/McpServer.js"

// A table over a server that serves nothing, allowing two sessions.
const table = Effect.gen(function*() {
  const server = yield* McpServer.make({ serverInfo: { name: "test", version: "0" }, handlers: {} })
  return new SessionTable(server, yield* Effect.scope, yield* Effect.clock, 2)
})

const opened = (table: SessionTable) =>
  Effect.map(table.open(), (session) => {
    if (session instanceof Answer) throw new Error(`refused: ${session.status}`)
    return session
  })

const status = (found: HttpSession | Answer) => found instanceof Answer ? found.status : "found"

describe("gateway session table", () => {
  it.scoped("opens up to the maximum, finds sessions by header, and ends them", () =>
    Effect.gen(function*() {
      const sessions = yield* table
      const a = yield* opened(sessions)
      yield* opened(sessions)
      expect(status(yield* sessions.open())).toBe(503)
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
      const sweeper = yield* Effect.fork(sessions.expireIdle("1 minute"))
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
