// A call on another runner, against the real PostgreSQL: what the server tells during it
// (progress, log messages, task statuses) reaches the caller's callbacks, and what it asks
// (sampling, elicitation) is answered by the caller's host services or its onInput, never by
// the runner's. A runner and two gateway replicas (hosting nothing) in one process, each its
// own ClusterRegistry layer with its own host services.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { fileURLToPath } from "node:url"
import { ClusterRegistry } from "../../src/cluster/index.js"
import * as Host from "../../src/Host.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as NodeFleet from "../../src/NodeFleet.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { failure, firstText, texts } from "../../src/testing/Results.js"
import { EVERYTHING_STDIO } from "../support/everythingSuite.js"
import { hangGuard } from "../support/guard.js"
import { fileDatabase } from "../support/postgres.js"

const STREAMS = fileURLToPath(new URL("../fixtures/cluster-streams.mjs", import.meta.url))

const db = fileDatabase()

const specs = () => [
  fixtureSpec("everything", EVERYTHING_STDIO, { args: ["stdio"] }),
  fixtureSpec("streams", STREAMS)
]

// Host services that answer as `who`: a sampled message and a form naming it ("silent": never).
const hostOf = (who: string) =>
  Layer.mergeAll(
    Host.layerSampling({
      createMessage: () =>
        Effect.succeed({ role: "assistant", content: { type: "text", text: `sampled by ${who}` }, model: who })
    }),
    Host.layerElicitation({
      elicit: () =>
        who === "silent" ? Effect.never : Effect.succeed({ action: "accept", content: { name: who, colour: who } })
    })
  )

const registryOf = (who: string, options: Omit<ClusterRegistry.Options, "url">) =>
  Effect.map(
    Layer.build(
      ClusterRegistry.layer({ url: db.url, servers: specs(), ...options }).pipe(
        Layer.provide(NodeFleet.layer),
        Layer.provide(hostOf(who))
      )
    ),
    (context) => context.unsafeMap.get(ServerRegistry.ServerRegistry.key) as ServerRegistry.ServerRegistry
  )

// A runner hosting both servers, and a replica (hosting none) ready to call them.
const cluster = Effect.gen(function*() {
  yield* registryOf("runner", { runner: {} })
  const caller = yield* registryOf("caller", {})
  yield* caller.awaitReady({ servers: ["everything", "streams"], timeout: "60 seconds" })
  return caller
})

describe("ClusterRegistry streams", () => {
  it.scopedLive(
    "progress and log messages of a call on another runner reach the caller, in order",
    () =>
      Effect.gen(function*() {
        const caller = yield* cluster
        const progress: Array<number> = []
        const result = yield* caller.callServerTool("everything", "trigger-long-running-operation", {
          duration: 0.3,
          steps: 3
        }, { onProgress: (p) => Effect.sync(() => progress.push(p.progress)) })
        expect(firstText(result)).toContain("Long running operation completed")
        expect(progress).toEqual([1, 2, 3])

        const told: Array<string> = []
        const work = yield* caller.callServerTool("streams", "work", {}, {
          onProgress: (p) => Effect.sync(() => told.push(`progress ${p.progress}/${p.total}`)),
          onLog: (message) => Effect.sync(() => told.push(`log ${String(message.data)}`))
        })
        expect(firstText(work)).toBe("done")
        expect(told).toEqual(["progress 1/2", "progress 2/2", "log working"])
      }),
    hangGuard(90_000)
  )

  it.scopedLive(
    "what the server asks during the call is answered by the caller, not the runner",
    () =>
      Effect.gen(function*() {
        const caller = yield* cluster
        // A legacy server asking on its own (stdio: the request names no call).
        const sampled = yield* caller.callServerTool("everything", "trigger-sampling-request", { prompt: "hi" })
        expect(firstText(sampled)).toContain("sampled by caller")
        expect(firstText(sampled)).not.toContain("runner")
        const elicited = yield* caller.callServerTool("everything", "trigger-elicitation-request", {})
        expect(texts(elicited).join("\n")).toContain("Name: caller")
        // A 2026-07-28 server's input request, tied to the call: the host services without onInput...
        const asked = yield* caller.callServerTool("streams", "ask", {})
        expect(JSON.parse(firstText(asked))).toMatchObject({ action: "accept", content: { colour: "caller" } })
        // ...and the call's own onInput when it has one.
        const inputs: Array<string> = []
        const own = yield* caller.callServerTool("streams", "ask", {}, {
          onInput: (input) =>
            Effect.sync(() => {
              inputs.push(input.method)
              return { action: "accept", content: { colour: "onInput" } }
            })
        })
        expect(inputs).toEqual(["elicitation/create"])
        expect(JSON.parse(firstText(own))).toMatchObject({ content: { colour: "onInput" } })
        // A caller that never answers: the call ends at its own limit, and the server goes on.
        const silent = yield* registryOf("silent", {})
        const unanswered = yield* Effect.exit(silent.callServerTool("streams", "ask", {}, { timeout: "1 second" }))
        expect(failure(unanswered).reason._tag).toBe("Timeout")
        expect(firstText(yield* silent.callServerTool("streams", "work", {}))).toBe("done")
      }),
    hangGuard(90_000)
  )

  it.scopedLive("a task started through one replica is followed through another", () =>
    Effect.gen(function*() {
      const caller = yield* cluster
      const other = yield* registryOf("other", {})
      const started = yield* Effect.makeLatch()
      let taskId: string | undefined
      const statuses: Array<string> = []
      const call = yield* caller.callServerTool("everything", "simulate-research-query", { topic: "tides" }, {
        onTask: (task: McpSchema.Task) =>
          Effect.zipRight(
            Effect.sync(() => {
              taskId ??= task.taskId
              statuses.push(task.status)
            }),
            started.open
          )
      }).pipe(Effect.fork)
      yield* started.await
      const followed = yield* other.followTask("everything", taskId!)
      const result = yield* Fiber.join(call)
      expect(statuses[0]).toBe("working")
      expect(firstText(followed)).toContain("tides")
      expect(followed).toEqual(result)
    }), hangGuard(90_000))
})
