/**
 * A tracer that notes every span it starts (its name, kind and the span), on top of the
 * built-in one.
 */
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

/** A span as the recording tracer noted it. */
export interface Recorded {
  readonly name: string
  readonly kind: Tracer.SpanKind
  readonly span: Tracer.Span
}

/** The recording tracer, the spans it started and their names, in order. */
export const recordingTracer = Effect.map(Effect.tracer, (builtIn) => {
  const names: Array<string> = []
  const spans: Array<Recorded> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = builtIn.span(name, parent, context, links, startTime, kind, options)
      names.push(name)
      spans.push({ name, kind, span })
      return span
    },
    context: builtIn.context
  })
  return { tracer, names, spans }
})
