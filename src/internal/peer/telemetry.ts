/**
 * A Peer's requests by the MCP conventions: each one's duration point and the calls in
 * flight, recorded as its answer is delivered (no frame added to the request), and, for a
 * session made under an app's tracer, its CLIENT span, whose trace context goes in the
 * request's `params._meta` (with the built-in tracer back in context, a request sent under
 * a span, such as a served request's extracted from its `_meta`, carries that span's on).
 *
 * @internal
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../JsonRpc.js"
import type * as Peer from "../../Peer.js"
import { Attributes, callsInFlight, clientOperationDuration } from "../../Telemetry.js"
import type { Transport } from "../../Transport.js"
import {
  builtIn,
  carried,
  clientOutcome,
  endSpan,
  inject,
  networkAttributes,
  operationPoints,
  type Outcome,
  requestAttributes,
  serverTag,
  spanName,
  targetOf
} from "../telemetry.js"
import type { Answer, Entry } from "./pending.js"

export { targetOf }

// A 2025 server answers the revision probe (`server/discover`) "method not found": that is how
// the handshake learns to fall back, not a failed operation. Recorded, it showed as an error
// share at each connection to such a server (the dashboard), and its tag set's key was made
// during connect, where keys' hashing adds up (Telemetry's `withUnit`).
const isRevisionProbeRefused = (method: string, outcome: Outcome): boolean =>
  method === "server/discover" && outcome.statusCode === METHOD_NOT_FOUND

const METHOD_NOT_FOUND = String(JsonRpc.ErrorCode.MethodNotFound)

/** What a Peer tells its telemetry of each request: opened, settled (answered), abandoned. */
export const requestTelemetry = (server: string, nowMs: () => number) => {
  const serverLabel = serverTag(server)
  const points = operationPoints(clientOperationDuration, serverLabel)
  const tags = [serverLabel]
  return {
    opened: (): void => callsInFlight.unsafeModify(1, tags),
    settled: (entry: Entry, answer: Answer): void => {
      callsInFlight.unsafeModify(-1, tags)
      const outcome = clientOutcome(answer)
      if (isRevisionProbeRefused(entry.method, outcome)) return
      points(entry.method, entry.target, outcome, (nowMs() - entry.start) / 1000)
    },
    abandoned: (entry: Entry, errorType: string): void => {
      callsInFlight.unsafeModify(-1, tags)
      points(entry.method, entry.target, { errorType, statusCode: undefined }, (nowMs() - entry.start) / 1000)
    }
  }
}

/** `request` with a CLIENT span per request when a tracer is provided, its context in `_meta`. */
export const spanned = (request: Peer.Peer["request"], context: {
  readonly transport: Transport
  readonly clock: Clock.Clock
  readonly spanAttributes?: (() => Record<string, unknown>) | undefined
}): Peer.Peer["request"] =>
(method, params, options) =>
  Effect.withFiberRuntime((fiber) => {
    if (fiber.currentTracer === builtIn) {
      const parent = fiber.currentSpan
      return parent === undefined
        ? request(method, params, options)
        : request(method, inject(params, parent, fiber.getFiberRef(carried)), options)
    }
    const target = targetOf(method, params)
    const info = context.transport.info()
    const attributes = {
      ...requestAttributes(method, target, context.transport.server),
      ...networkAttributes(context.transport.kind, info.url),
      ...(typeof info.sessionId === "string" ? { [Attributes.sessionId]: info.sessionId } : {}),
      ...context.spanAttributes?.()
    }
    return Effect.flatMap(
      Effect.makeSpan(spanName(method, target), { kind: "client", attributes, captureStackTrace: false }),
      (span) => {
        const onId = options?.onId
        const sent = request(method, inject(params, span, fiber.getFiberRef(carried)), {
          ...options,
          onId: (id) => {
            span.attribute(Attributes.requestId, String(id))
            onId?.(id)
          }
        })
        return sent.pipe(
          Effect.withParentSpan(span),
          Effect.onExit((exit) =>
            Effect.sync(() => endSpan(span, clientOutcome(exit), exit, context.clock.unsafeCurrentTimeNanos()))
          )
        )
      }
    )
  })
