/**
 * The caller's side of a call on another runner: its events (`CallEvent`) followed to its
 * result. Progress, log messages and task statuses go to the call's callbacks, in order, each
 * told before the next event (the result last). An input request is answered while the
 * events go on: a request the server tied to the call by its `onInput` when it has one, any
 * other by the `Host` services of the caller's context, through the same checks a connection
 * makes (`Host.clientSide`); the answer, or the refusal, goes back as an `Answer` message.
 *
 * @since 0.3.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Host from "../../Host.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import type * as McpSchema from "../../McpSchema.js"
import * as Peer from "../../Peer.js"
import type * as ServerRegistry from "../../ServerRegistry.js"
import type { CallEvent } from "./entity.js"

/** What a caller gives a call: `ServerRegistry.CallToolOptions`' callbacks. */
export type Callbacks = Pick<ServerRegistry.CallToolOptions, "onProgress" | "onLog" | "onTask" | "onInput">

/** The answer to one input request, as the `Answer` message carries it: a result, or a refusal. */
export interface Reply {
  readonly requestId: string
  readonly result?: Record<string, unknown>
  readonly error?: { readonly code: number; readonly message: string; readonly data: unknown }
}

/** What `Call` and `Follow` carry of the callbacks: the server is asked only for what is taken. */
export const tellsOf = (callbacks: Callbacks | undefined) => ({
  progress: callbacks?.onProgress !== undefined,
  log: callbacks?.onLog !== undefined
})

type Input = Extract<CallEvent, { readonly _tag: "Input" }>

// The caller's answer: its onInput for a request tied to the call, else its host services.
const answerOf = (
  server: string,
  host: Host.Services,
  callbacks: Callbacks | undefined,
  input: Input
): Effect.Effect<Record<string, unknown>, Peer.HandlerError> => {
  const { key, method, params } = input
  if (input.tied && callbacks?.onInput !== undefined) return callbacks.onInput({ method, params, key })
  const side = Host.clientSide(host, { server, notify: () => Effect.void })
  const handler = side.handlers[method]
  if (handler === undefined) {
    return Effect.fail(
      new Peer.HandlerError({ code: JsonRpc.ErrorCode.MethodNotFound, message: `the caller does not answer ${method}` })
    )
  }
  return handler(
    key === undefined ? { jsonrpc: "2.0", id: `cluster-${input.requestId}`, method, params } : Host.inputRequest(
      key,
      method,
      params
    )
  )
}

const noResult = (server: string) =>
  McpError.unavailable(server, { state: "Moving", message: "the call's runner ended it without a result" })

/**
 * Follows `events` to the call's result (a tool's, or a read's or a prompt's: `A`): each
 * event told to `callbacks` (or answered, through `reply`) as it comes. Fails as the call
 * does, or when the events end without a result.
 *
 * The call ends at its result: the stream's teardown (the interrupt the runner is sent, and
 * its reply, a round trip) goes on in a fiber of `background`, which the caller does not wait
 * for. The caller interrupted before the result interrupts the stream and waits for that.
 */
export const follow = <A, E>(
  server: string,
  events: Stream.Stream<CallEvent, E>,
  options: {
    readonly callbacks: Callbacks | undefined
    readonly host: Host.Services
    readonly reply: (reply: Reply) => Effect.Effect<void>
    readonly background: Scope.Scope
  }
): Effect.Effect<A, E | McpError.McpError> =>
  Effect.gen(function*() {
    const { callbacks, host, reply } = options
    const outcome = yield* Deferred.make<A, E | McpError.McpError>()
    const consume = Effect.scoped(Effect.gen(function*() {
      // Answers in flight end with the stream.
      const answering = yield* FiberSet.make()
      const untilResult = Stream.takeUntil(events, (event) => event._tag === "Result")
      yield* Stream.runForEach(untilResult, (event): Effect.Effect<unknown> => {
        switch (event._tag) {
          case "Progress":
            return callbacks?.onProgress?.({ progress: event.progress, total: event.total, message: event.message }) ??
              Effect.void
          case "Log":
            return callbacks?.onLog?.(event.message as McpSchema.LoggingMessageNotificationParams) ?? Effect.void
          case "Task":
            return callbacks?.onTask?.(event.task as McpSchema.Task) ?? Effect.void
          case "Input":
            return FiberSet.run(
              answering,
              answerOf(server, host, callbacks, event).pipe(
                Effect.matchEffect({
                  onFailure: ({ code, data, message }) =>
                    reply({ requestId: event.requestId, error: { code, message, data } }),
                  onSuccess: (result) => reply({ requestId: event.requestId, result })
                })
              )
            )
          case "Result":
            return Deferred.succeed(outcome, event.result as A)
        }
      })
      yield* Deferred.fail(outcome, noResult(server))
    }))
    const fiber = yield* consume.pipe(
      Effect.onExit((exit) => Exit.isFailure(exit) ? Deferred.failCause(outcome, exit.cause) : Effect.void),
      Effect.forkIn(options.background)
    )
    return yield* Deferred.await(outcome).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber)))
  })
