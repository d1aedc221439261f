// A tool that runs as a task (`execution.taskSupport: "required"`), for the tests of tasks
// that outlive their connection or session: it counts its runs, reports progress 1 at once
// and then each tick it is given, until released; it says when it started and whether it
// was cancelled.
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as McpSchema from "../../src/McpSchema.js"
import * as McpServer from "../../src/McpServer.js"

/** The tool `slow`, answering "done" once `release` completes, and its handles. */
export const slowTaskTool = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  const cancelled = yield* Deferred.make<void>()
  const ticks = yield* Queue.unbounded<number>()
  const runs = { count: 0 }
  const tool = McpServer.tool({
    name: "slow",
    execution: { taskSupport: "required" },
    inputSchema: { type: "object" },
    handler: (_, ctx) =>
      Effect.sync(() => runs.count++).pipe(
        Effect.zipRight(ctx.progress(1)),
        Effect.zipRight(Deferred.succeed(started, undefined)),
        Effect.zipRight(Effect.raceFirst(
          Deferred.await(release),
          Effect.forever(Effect.flatMap(Queue.take(ticks), (tick) => ctx.progress(tick)))
        )),
        Effect.as({ content: [{ type: "text", text: "done" }] } as McpSchema.CallToolResult),
        Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined))
      )
  })
  return { tool, started, release, cancelled, ticks, runs }
})
