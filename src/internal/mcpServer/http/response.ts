/**
 * Answers, as the core writes them through an exchange (`exchange.ts`) from the callback that
 * has them: a whole answer (a refusal, or a JSON body once a POST's requests are answered)
 * or an event stream whose events are written as they come. No fiber waits on an answer.
 *
 * @internal
 */
import type { Exchange } from "./exchange.js"
import type { EventSink } from "./streamLog.js"

/** An answer sent whole: a status, its headers, and a body unless it is empty. */
export class Answer {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly body?: string | undefined
  ) {}
}

/** An answer with a JSON body. */
export const json = (status: number, value: unknown, headers: Record<string, string> = {}): Answer =>
  new Answer(status, { ...headers, "content-type": "application/json" }, JSON.stringify(value))

/** An answer with a plain-text body. */
export const text = (status: number, body: string, headers: Record<string, string> = {}): Answer =>
  new Answer(status, { ...headers, "content-type": "text/plain" }, body)

/** The headers of every SSE answer (an adapter adds what its platform's connections need). */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache"
}

/**
 * Answers `exchange` with an event stream at once, and gives `start` its sink. When the
 * exchange closes first (the client went away), the reader `start` returned is ended.
 */
export const eventStream = <X>(
  io: Exchange<X>,
  exchange: X,
  headers: Readonly<Record<string, string>>,
  start: (sink: EventSink) => EventSink
): void => {
  const reader = start(io.stream(exchange, headers))
  io.onClose(exchange, reader.end)
}
