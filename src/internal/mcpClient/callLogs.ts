/**
 * The log messages of modern (2026-07-28) calls (`CallToolOptions.onLog`): the server sends
 * them only for requests that name a level, on the request's own stream, before its answer.
 * The Peer hands each one over as it arrives (`told`, its `onNotification`, given before the
 * handshake chose the era: on a legacy connection no call ever takes logs, so it costs a size
 * check), before that answer resumes the call; a fiber of the call tells them as they come (a
 * long call's progress is not held back), and the call waits for the last of them before its
 * outcome. On stdio, where nothing names the request, they go to the latest call in flight
 * that takes them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as McpError from "../../McpError.js"
import * as McpSchema from "../../McpSchema.js"

const decodeLog = McpSchema.decodeUnknown(McpSchema.LoggingMessageNotificationParams)

/**
 * The calls of a connection that take their log messages, and the Peer's hook that hands
 * them over.
 */
export class CallLogs {
  private readonly sinks = new Set<Queue.Queue<LogSinkItem>>()

  /** The Peer's `onNotification`: costs a method comparison while no call takes logs. */
  readonly told = (notification: JsonRpc.Notification): void => {
    if (this.sinks.size === 0 || notification.method !== McpSchema.Method.LoggingMessage) return
    const decoded = decodeLog(notification.params)
    if (Either.isLeft(decoded)) return
    let latest: Queue.Queue<LogSinkItem> | undefined
    for (const sink of this.sinks) latest = sink
    latest!.unsafeOffer(decoded.right)
  }

  /** Runs `call`, telling `onLog` what comes for it as it comes, all of it before its outcome. */
  around<A>(
    call: Effect.Effect<A, McpError.McpError>,
    onLog: (message: McpSchema.LoggingMessageNotificationParams) => Effect.Effect<void>
  ): Effect.Effect<A, McpError.McpError> {
    const sinks = this.sinks
    return Effect.gen(function*() {
      const sink = yield* Queue.unbounded<LogSinkItem>()
      sinks.add(sink)
      // A child of the call's fiber: interrupted with it.
      const telling = yield* Effect.fork(tellUntilEnd(sink, onLog))
      const exit = yield* Effect.exit(call).pipe(Effect.ensuring(Effect.sync(() => sinks.delete(sink))))
      sink.unsafeOffer(END_OF_LOGS)
      yield* Fiber.join(telling)
      return yield* exit
    })
  }
}

const END_OF_LOGS = Symbol("end of logs")
type LogSinkItem = McpSchema.LoggingMessageNotificationParams | typeof END_OF_LOGS

const tellUntilEnd = (
  sink: Queue.Queue<LogSinkItem>,
  onLog: (message: McpSchema.LoggingMessageNotificationParams) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.flatMap(
    Queue.take(sink),
    (item) => item === END_OF_LOGS ? Effect.void : Effect.zipRight(onLog(item), tellUntilEnd(sink, onLog))
  )
