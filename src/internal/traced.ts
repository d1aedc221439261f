/**
 * Spans for public operations that cost nothing when nobody collects them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"

/** The tracer every Effect program has until one that exports spans (OpenTelemetry, ...) is provided. */
export const builtIn: Tracer.Tracer = Effect.runSync(Effect.tracer)

/**
 * Like `Effect.fn(name)`: each call runs in a span called `name`. A span costs about
 * 10 µs in Effect 3, as much as a whole tool call, so with the built-in tracer, whose spans
 * no one exports, the body runs without one.
 */
export const traced = (name: string) =>
<Args extends ReadonlyArray<any>, A, E, R>(
  body: (...args: Args) => Effect.Effect<A, E, R>
): (...args: Args) => Effect.Effect<A, E, R> => {
  const spanned = Effect.fn(name)(body)
  // The fiber's own field, not `Effect.tracerWith`: one closure fewer per call.
  return (...args) =>
    Effect.withFiberRuntime((fiber) => fiber.currentTracer === builtIn ? body(...args) : spanned(...args))
}

/**
 * `effect` in a span called `name` with the `attributes` (made only then), when a tracer
 * other than the built-in one is provided; else `effect` alone.
 */
export const inSpan = <A, E, R>(
  name: string,
  attributes: () => Record<string, unknown>,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) =>
    fiber.currentTracer === builtIn
      ? effect
      : Effect.withSpan(effect, name, { attributes: attributes(), captureStackTrace: false })
  )
