/**
 * A served request by the MCP conventions: its SERVER span (when a tracer is provided) under
 * the parent its `params._meta.traceparent` names, linked to the span it arrived in, and its
 * `mcp.server.operation.duration` point; a session's `mcp.server.session.duration`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as Peer from "../../Peer.js"
import { Attributes, serverOperationDuration } from "../../Telemetry.js"
import {
  builtIn,
  carrying,
  endSpan,
  extract,
  networkAttributes,
  operationPoints,
  requestAttributes,
  serverOutcome,
  serverTag,
  spanName,
  targetOf
} from "../telemetry.js"

type Answer = Effect.Effect<Record<string, unknown>, Peer.HandlerError>

/**
 * Wraps the answering of each request of a server named `server`: `attributes` are its
 * session's (protocol version, session id, transport), read only when a span starts.
 */
export const served = (server: string, attributes: () => Record<string, unknown>) => {
  const points = operationPoints(serverOperationDuration, serverTag(server))
  return (request: JsonRpc.Request, answer: Answer): Answer =>
    Effect.clockWith((clock) =>
      Effect.withFiberRuntime((fiber) => {
        const start = clock.unsafeCurrentTimeMillis()
        const { method, params } = request
        const target = targetOf(method, params)
        const record = (exit: Exit.Exit<Record<string, unknown>, Peer.HandlerError>) =>
          points(method, target, serverOutcome(exit), (clock.unsafeCurrentTimeMillis() - start) / 1000)
        const parent = extract(params)
        if (fiber.currentTracer === builtIn) {
          const run = parent === undefined ? answer : carrying(params, Effect.withParentSpan(answer, parent))
          return Effect.onExit(run, (exit) => Effect.sync(() => record(exit)))
        }
        const ambient = fiber.currentSpan
        const options = {
          kind: "server" as const,
          parent,
          captureStackTrace: false,
          links: parent !== undefined && ambient !== undefined
            ? [{ _tag: "SpanLink" as const, span: ambient, attributes: {} }]
            : [],
          attributes: {
            ...requestAttributes(method, target, server),
            [Attributes.requestId]: String(request.id),
            ...attributes()
          }
        }
        return Effect.flatMap(Effect.makeSpan(spanName(method, target), options), (span) =>
          carrying(params, Effect.withParentSpan(answer, span)).pipe(
            Effect.onExit((exit) =>
              Effect.sync(() => {
                record(exit)
                endSpan(span, serverOutcome(exit), exit, clock.unsafeCurrentTimeNanos())
              })
            )
          ))
      })
    )
}

/** The attributes of a session over a transport of `kind` (its `info()` giving a session id). */
export const sessionAttributes = (
  kind: string,
  info: () => Record<string, unknown>,
  protocolVersion: () => string | undefined
) =>
() => {
  const sessionId = info().sessionId
  const version = protocolVersion()
  return {
    ...networkAttributes(kind, undefined),
    ...(typeof sessionId === "string" ? { [Attributes.sessionId]: sessionId } : {}),
    ...(version === undefined ? {} : { [Attributes.protocolVersion]: version })
  }
}
