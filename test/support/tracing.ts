/**
 * A tracer that notes the name of every span it starts, on top of the built-in one.
 */
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

/** The recording tracer, and the names of the spans it started, in order. */
export const recordingTracer = Effect.map(Effect.tracer, (builtIn) => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (...args) => {
      names.push(args[0])
      return builtIn.span(...args)
    },
    context: builtIn.context
  })
  return { tracer, names }
})
