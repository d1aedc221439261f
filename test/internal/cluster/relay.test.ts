// The caller's side of a call on another runner (src/internal/cluster/relay.ts): the call
// ends at its result while the stream's teardown (a round trip to the runner) goes on in the
// background; failures, and the interruption the routes send again on, come through as they are.
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { CallEvent } from "../../../src/internal/cluster/entity.js"
import * as Relay from "../../../src/internal/cluster/relay.js"
import * as McpError from "../../../src/McpError.js"
import { hangGuard } from "../../support/guard.js"

const host = { sampling: Option.none(), elicitation: Option.none(), roots: Option.none() }
const result = { content: [{ type: "text", text: "done" }] }

const follow = <E>(events: Stream.Stream<CallEvent, E>, background: Scope.Scope, told: Array<number> = []) =>
  Relay.follow("s1", events, {
    callbacks: { onProgress: (progress) => Effect.sync(() => void told.push(progress.progress)) },
    host,
    reply: () => Effect.void,
    background
  })

describe("Relay.follow", () => {
  it.effect(
    "a call ends at its result; the stream's teardown goes on after it, in the background",
    () =>
      Effect.gen(function*() {
        const background = yield* Scope.make()
        const release = yield* Deferred.make<void>()
        let tornDown = false
        const events = Stream.make<Array<CallEvent>>(
          { _tag: "Progress", progress: 1 },
          { _tag: "Result", result }
        ).pipe(
          Stream.concat(Stream.never),
          // The runner's reply to the interrupt: not come yet.
          Stream.ensuring(Effect.zipRight(Deferred.await(release), Effect.sync(() => void (tornDown = true))))
        )
        const told: Array<number> = []
        expect(yield* follow(events, background, told)).toEqual(result)
        expect(told).toEqual([1])
        expect(tornDown).toBe(false)
        yield* Deferred.succeed(release, undefined)
        yield* Scope.close(background, Exit.void)
        expect(tornDown).toBe(true)
      }),
    hangGuard(10_000)
  )

  it.effect("the caller interrupted before the result ends the stream first", () =>
    Effect.gen(function*() {
      const background = yield* Scope.make()
      const started = yield* Deferred.make<void>()
      let ended = false
      const events = Stream.never.pipe(
        Stream.onStart(Deferred.succeed(started, undefined)),
        Stream.ensuring(Effect.sync(() => void (ended = true)))
      ) as Stream.Stream<CallEvent>
      const caller = yield* Effect.fork(follow(events, background))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(caller)
      expect(ended).toBe(true)
    }), hangGuard(10_000))

  it.effect(
    "a failure, an interruption (a lost runner: sent again) and no result come through",
    () =>
      Effect.gen(function*() {
        const background = yield* Scope.make()
        const failure = McpError.unavailable("s1", { state: "Ready", message: "the tool failed" })
        const failed = yield* Effect.exit(follow(Stream.fail(failure), background))
        expect(failed).toEqual(Exit.fail(failure))
        const lost = yield* Effect.exit(follow(Stream.fromEffect(Effect.interrupt), background))
        expect(Exit.isFailure(lost) && Cause.isInterruptedOnly(lost.cause)).toBe(true)
        const none = yield* Effect.flip(
          follow(Stream.make<Array<CallEvent>>({ _tag: "Progress", progress: 1 }), background)
        )
        expect(none.message).toContain("ended it without a result")
        yield* Scope.close(background, Exit.void)
      }),
    hangGuard(10_000)
  )
})
