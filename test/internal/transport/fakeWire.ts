// A Wire whose exchanges a test answers by hand: each request is recorded with the
// handler it was given, so a test can send headers, chunks and the end when it likes.
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Runtime from "effect/Runtime"
import type { Wire, WireHandler, WireRequest } from "../../../src/HttpWire.js"
import type * as Http from "../../../src/internal/transport/http.js"

export interface Sent {
  readonly request: WireRequest
  readonly handler: WireHandler
  aborted: boolean
  /** Answers with `status`, `headers` and, if given, a whole body. */
  readonly answer: (status: number, headers?: Record<string, string>, body?: string) => void
  readonly chunk: (text: string) => void
}

export const fakeWire = () => {
  const sent: Array<Sent> = []
  const wire: Wire = (request, handler) => {
    const entry: Sent = {
      request,
      handler,
      aborted: false,
      answer: (status, headers = {}, body) => {
        handler.onHeaders(status, headers)
        if (body === undefined) return
        if (body !== "") handler.onData(new TextEncoder().encode(body))
        handler.onEnd()
      },
      chunk: (text) => handler.onData(new TextEncoder().encode(text))
    }
    sent.push(entry)
    return { abort: () => void (entry.aborted = true) }
  }
  return { sent, wire }
}

/** A Context on `wire` whose forks run in the current runtime (TestClock included), collected. */
export const contextOn = (wire: Wire, overrides: Partial<Http.Context> = {}) =>
  Effect.map(
    Effect.runtime<never>(),
    (runtime): Http.Context & { readonly forked: Array<Fiber.RuntimeFiber<void>> } => {
      const forked: Array<Fiber.RuntimeFiber<void>> = []
      return {
        server: "fixture",
        wire,
        headers: { authorization: "Bearer s3cret" },
        maxMessageBytes: 1024,
        redirects: "same-origin",
        auth: undefined,
        fork: (effect) => {
          const fiber = Runtime.runFork(runtime)(effect)
          forked.push(fiber)
          return fiber
        },
        forked,
        ...overrides
      }
    }
  )
