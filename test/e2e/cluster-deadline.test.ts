// A call's `timeout` covers the wait for the caller's answer to what the server asks: a
// 2026-07-28 server's input request (an InputRequiredResult) that the caller never answers
// ends the call at its timeout, in one process as on another runner of the cluster (not at
// the cluster caller's safety bound, readyTimeout + timeout), naming the server, and the
// server goes on. Against the real PostgreSQL for the cluster.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { fileURLToPath } from "node:url"
import type { ClusterRegistry } from "../../src/cluster/index.js"
import * as Host from "../../src/Host.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as NodeFleet from "../../src/NodeFleet.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { replica } from "../support/cluster.js"
import { hangGuard } from "../support/guard.js"
import { fileDatabase } from "../support/postgres.js"
import { margin } from "../support/processes.js"

const STREAMS = fileURLToPath(new URL("../fixtures/cluster-streams.mjs", import.meta.url))

const db = fileDatabase()

const COLOUR = "streams://colour"

// "brief": the same server, whose requests (a read's) time out after 2 s.
const specs =
  () => [fixtureSpec("streams", STREAMS), { ...fixtureSpec("brief", STREAMS), requestTimeout: "2 seconds" as const }]

// Host services that answer a form, or never ("silent").
const hostOf = (who: string) =>
  Host.layerElicitation({
    elicit: () => who === "silent" ? Effect.never : Effect.succeed({ action: "accept", content: { colour: who } })
  })

const clusterOf = (who: string, options: Omit<ClusterRegistry.Options, "url">) =>
  replica(db.url, { servers: specs(), ...options }, hostOf(who))

// An unanswered call with these limits, timed, beside the bound it must keep (its 1 s, a
// hop's slack, and the machine's lateness measured meanwhile): it fails Timeout of `kind`.
const timed = (
  registry: ServerRegistry.ServerRegistry,
  options: ServerRegistry.CallToolOptions,
  kind: "idle" | "total"
) =>
  Effect.gen(function*() {
    const started = performance.now()
    const [exit, limit] = yield* Effect.all([
      Effect.exit(registry.callServerTool("streams", "ask", {}, options)).pipe(
        Effect.map((exit) => ({ exit, ms: performance.now() - started }))
      ),
      margin(1_000 + 1_500)
    ], { concurrency: 2 })
    const error = failure(exit.exit)
    expect(error.reason).toMatchObject({ _tag: "Timeout", kind, afterMs: 1_000 })
    expect(error.server).toBe("streams")
    expect(exit.ms).toBeGreaterThanOrEqual(1_000)
    expect(exit.ms).toBeLessThan(limit)
  })

// The call's timeout, then its total alone (the wait is otherwise the default 60 s timeout),
// each ends it; the server answers the next call.
const unanswered = (registry: ServerRegistry.ServerRegistry) =>
  Effect.gen(function*() {
    yield* timed(registry, { timeout: "1 second" }, "idle")
    yield* timed(registry, { maxTotalTimeout: "1 second" }, "total")
    expect(firstText(yield* registry.callServerTool("streams", "work", {}))).toBe("done")
  })

describe("a call's timeout covers the caller's answer", () => {
  it.scopedLive("in one process", () =>
    Effect.gen(function*() {
      const registry = yield* ServerRegistry.make({ servers: specs() }).pipe(
        Effect.provide(Layer.merge(NodeFleet.layer, hostOf("silent")))
      )
      yield* registry.awaitReady({ servers: ["streams"], timeout: "60 seconds" })
      yield* unanswered(registry)
    }), hangGuard(60_000))

  it.scopedLive("on another runner of the cluster", () =>
    Effect.gen(function*() {
      yield* clusterOf("runner", { runner: {} })
      const caller = yield* clusterOf("silent", {})
      yield* caller.awaitReady({ servers: ["streams"], timeout: "60 seconds" })
      yield* unanswered(caller)
      // The caller's own onInput that never answers ends the call the same way.
      const own = yield* Effect.exit(
        caller.callServerTool("streams", "ask", {}, { timeout: "1 second", onInput: () => Effect.never })
      )
      expect(failure(own).reason).toMatchObject({ _tag: "Timeout", kind: "idle" })
    }), hangGuard(90_000))

  it.scopedLive(
    "a read and a prompt on another runner ask their caller, and end at the request timeout",
    () =>
      Effect.gen(function*() {
        yield* clusterOf("runner", { runner: {} })
        const caller = yield* clusterOf("caller", {})
        const silent = yield* clusterOf("silent", {})
        yield* caller.awaitReady({ servers: ["streams", "brief"], timeout: "60 seconds" })
        const colourOf = (text: string | undefined) =>
          (JSON.parse(text ?? "{}") as { content?: { colour?: string } }).content?.colour
        const read = (result: McpSchema.ReadResourceResult) => colourOf((result.contents[0] as { text?: string }).text)
        expect(read(yield* caller.readResource("streams", COLOUR))).toBe("caller")
        const onInput = () => Effect.succeed({ action: "accept", content: { colour: "onInput" } })
        expect(read(yield* caller.readResource("streams", COLOUR, { onInput }))).toBe("onInput")
        const prompt = yield* caller.getPrompt("streams", "colour")
        expect(colourOf((prompt.messages[0]!.content as { text?: string }).text)).toBe("caller")

        const started = performance.now()
        const [exit, limit] = yield* Effect.all([
          Effect.exit(silent.readResource("brief", COLOUR)).pipe(
            Effect.map((exit) => ({ exit, ms: performance.now() - started }))
          ),
          margin(2_000 + 1_500)
        ], { concurrency: 2 })
        expect(failure(exit.exit).reason).toMatchObject({ _tag: "Timeout", kind: "idle", afterMs: 2_000 })
        expect(failure(exit.exit).server).toBe("brief")
        expect(exit.ms).toBeLessThan(limit)
      }),
    hangGuard(90_000)
  )
})
