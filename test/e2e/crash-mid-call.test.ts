// A real stdio server that exits in the middle of a tool call (test/fixtures/dies-mid-call.mjs
// logs every call id it runs): a tool with no annotation ran once and the call fails InDoubt,
// naming the server and the tool; a readOnlyHint or idempotentHint tool is sent once more to
// the restarted process, and succeeds.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { fixtureSpec, tempDir } from "../../src/testing/node.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"
import { survivors } from "../support/processes.js"

const MARKER = "MCP_FLEET_CRASH_MID_CALL_RUN"
const RUN_ID = `${process.pid}-${Date.now()}`
const script = fileURLToPath(new URL("../fixtures/dies-mid-call.mjs", import.meta.url))

// The lines the server logged for `call` ("<tool> <id>"): the pid of each run.
const runsOf = (log: string, call: string): Array<string> =>
  fs.readFileSync(log, "utf8").split("\n").filter((line) => line.startsWith(call + " ")).map((line) =>
    line.slice(call.length + 1)
  )

describe("a stdio server that exits mid-call", () => {
  it.scopedLive("runs a plain tool once and fails InDoubt; retries readOnly and idempotent tools once", () =>
    Effect.gen(function*() {
      const log = path.join(yield* tempDir(), "calls.log")
      yield* Effect.scoped(
        Effect.gen(function*() {
          const fleet = yield* ServerRegistry.make({
            restart: { initialDelay: "50 millis", maxDelay: "1 second", jitter: 0 },
            servers: [fixtureSpec("dying", script, { env: { CALL_LOG: log, [MARKER]: RUN_ID } })]
          })
          yield* fleet.awaitReady({ servers: ["dying"], timeout: hangGuard(20_000) })

          const error = failure(yield* Effect.exit(fleet.callTool("mcp__dying__write", { id: "w1" })))
          expect(error.reason).toMatchObject({ _tag: "InDoubt", tool: "write" })
          expect(error.message).toMatch(
            /^server 'dying' ended while running tool 'write', which may have run: it is not sent again, as 'write' is not annotated idempotentHint or readOnlyHint \(server 'dying' exited with code 1 before answering tools\/call: dying in write\)$/
          )

          const read = yield* fleet.callTool("mcp__dying__lookup", { id: "r1" })
          const [first, second] = runsOf(log, "lookup r1")
          expect(firstText(read)).toBe(`lookup r1 ran in ${second}`)
          expect(second).not.toBe(first)

          const put = yield* fleet.callTool("mcp__dying__put", { id: "p1" })
          expect(firstText(put)).toMatch(/^put p1 ran in \d+$/)
          expect(runsOf(log, "put p1")).toHaveLength(2)

          // Nothing sent `write` again, not even the restarts the later calls waited for.
          expect(runsOf(log, "write w1")).toHaveLength(1)
        }).pipe(Effect.provide(Platform))
      )
      expect(survivors(MARKER, RUN_ID)).toEqual([])
    }))
})
