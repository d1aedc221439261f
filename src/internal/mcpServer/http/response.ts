/**
 * Answers written straight onto Node's response from the callback that has them: a whole
 * answer (a refusal, or a JSON body once a POST's requests are answered) with its head and
 * body in one write, or SSE events as they come. No fiber waits on a response.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type * as http from "node:http"
import type { EventSink } from "./streamLog.js"

/** What a method needs besides its callbacks. */
export interface Runner {
  /** Runs what cannot be done in a callback (opening a session), with the server; 500 if it dies. */
  readonly fork: (response: http.ServerResponse, effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>
  /** A callback threw: the defect is logged and the request answered with 500. */
  readonly failed: (response: http.ServerResponse, defect: unknown) => void
}

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

/** The headers of every SSE answer. */
export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive"
}

/**
 * Whether the client went away or the answer was written. (A response of a pipelined
 * request has no socket until the ones before it are written: it is not gone.)
 */
export const isGone = (response: http.ServerResponse): boolean =>
  response.writableEnded || response.destroyed || response.socket?.destroyed === true

/**
 * Writes `answer` with `headers` besides its own (CORS, the session id), unless the client
 * went away. Head and body go in one write: with the length known, Node sends the head with
 * the body.
 */
export const send = (response: http.ServerResponse, answer: Answer, headers: Record<string, string>): void => {
  if (isGone(response)) return
  const head: Record<string, string> = { ...headers, ...answer.headers }
  if (answer.body !== undefined) head["content-length"] = String(Buffer.byteLength(answer.body))
  response.writeHead(answer.status, head)
  response.end(answer.body)
}

/**
 * Answers with an event stream at once, and gives `start` its sink. When the client goes
 * away first, the reader `start` returned is ended.
 */
export const eventStream = (
  response: http.ServerResponse,
  headers: Record<string, string>,
  start: (sink: EventSink) => EventSink
): void => {
  // Headers go out with the first event, which `start` writes at once.
  response.writeHead(200, { ...headers, ...SSE_HEADERS })
  const reader = start({
    write: (text) => {
      if (!response.writableEnded) response.write(text)
    },
    end: () => {
      if (!response.writableEnded) response.end()
    }
  })
  response.once("close", reader.end)
}
