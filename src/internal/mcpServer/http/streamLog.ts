/**
 * The SSE streams of one HTTP session's POSTs, kept so a client whose connection dropped
 * gets the rest with a GET carrying Last-Event-ID (SEP-1699). Event ids are
 * `<stream>:<index>`. Events go to the stream's reader as they are appended: no queue or
 * stream stage in between.
 *
 * @internal
 */
import type * as JsonRpc from "../../../JsonRpc.js"

/** Where a stream's events are written: a response being read now. */
export interface EventSink {
  readonly write: (text: string) => void
  /** Ends the response. Called once. */
  readonly end: () => void
}

/** One message as an SSE event (without its id). */
export const sseEvent = (message: JsonRpc.Message): string => `event: message\ndata: ${JSON.stringify(message)}\n\n`

/** How long a client waits before resuming a dropped stream (the SSE `retry` field). */
export const RETRY_MS = 1000
/** How many streams nobody reads a session keeps for resumption, and how much of them. */
export const MAX_LOGS = 16
export const MAX_LOG_BYTES = 4 * 1024 * 1024

/** The events of one POST's stream. */
export class StreamLog {
  readonly events: Array<string> = []
  /** How many events were appended (`events` holds them when kept). */
  count = 0
  /** The size of `events`, in UTF-16 code units. */
  bytes = 0
  done = false
  /** The connection reading the stream now, if any. */
  reader: EventSink | undefined

  /** @param keep whether events are kept for a resumption (not for a stream nothing resumes). */
  constructor(readonly id: string, private readonly keep = true) {}

  /** Adds an event (SSE fields after the id) and writes it to the reader. */
  append(text: string): void {
    const event = `id: ${this.id}:${this.count++}\n${text}`
    if (this.keep) {
      this.events.push(event)
      this.bytes += event.length
    }
    this.reader?.write(event)
  }

  /** The stream is complete: its reader's response ends. */
  finish(): void {
    this.done = true
    this.reader?.end()
  }
}

/**
 * A new stream, opened with a priming event (id, no data) so the client can resume from its
 * start; written to `reader` at once when given (then its events need not be kept).
 */
export const primed = (reader?: EventSink): StreamLog => {
  const log = new StreamLog(globalThis.crypto.randomUUID().slice(0, 8), reader === undefined)
  log.reader = reader
  log.append(`retry: ${RETRY_MS}\ndata: \n\n`)
  return log
}

/** The stream and index a Last-Event-ID names, if it is one of ours. */
export const parseEventId = (
  lastEventId: string | undefined
): { readonly stream: string; readonly index: number } | undefined => {
  const match = /^([^:]+):(\d+)$/.exec(lastEventId ?? "")
  return match === null ? undefined : { stream: match[1]!, index: Number(match[2]) }
}

/** The streams of one session. */
export class StreamLogs {
  private readonly logs = new Map<string, StreamLog>()
  /** The POST and resumed streams being read now. */
  readonly readers = new Set<EventSink>()

  /** @param released called when a reader's response ended (the session was active). */
  constructor(private readonly released: () => void) {}

  /** A new stream of the session, kept for resumption (`primed`). */
  open(): StreamLog {
    const log = primed()
    this.logs.set(log.id, log)
    return log
  }

  /** The stream a Last-Event-ID names, and the index to read on from, while it is kept. */
  resume(lastEventId: string | undefined): { readonly log: StreamLog; readonly from: number } | undefined {
    const id = parseEventId(lastEventId)
    const log = id === undefined ? undefined : this.logs.get(id.stream)
    return log === undefined ? undefined : { log, from: id!.index + 1 }
  }

  /**
   * Has `sink` read `log` from index `from` on, ending when the stream is complete; a reader
   * that was there before is ended. Returns the reader: ending it detaches it (the client
   * went away), and the stream is kept for a later resumption.
   */
  read(log: StreamLog, from: number, sink: EventSink): EventSink {
    let ended = false
    const reader: EventSink = {
      write: sink.write,
      end: () => {
        if (ended) return
        ended = true
        this.readers.delete(reader)
        if (log.reader === reader) log.reader = undefined
        sink.end()
        this.released()
        this.evict()
      }
    }
    log.reader?.end()
    log.reader = reader
    this.readers.add(reader)
    for (let i = from; i < log.events.length; i++) reader.write(log.events[i]!)
    if (log.done) reader.end()
    return reader
  }

  /** Ends every response being read (the session ended). */
  endAll(): void {
    for (const reader of this.readers) reader.end()
  }

  /** How many streams are kept. */
  get size(): number {
    return this.logs.size
  }

  // Streams nobody reads are kept for a while, even those read to their end: a connection
  // may have dropped after the server wrote the last event but before the client got it.
  // The oldest go first once there are too many or they hold too much.
  private evict(): void {
    let count = 0
    let bytes = 0
    for (const log of [...this.logs.values()].reverse()) {
      if (log.reader !== undefined) continue
      count++
      bytes += log.bytes
      if (count > MAX_LOGS || bytes > MAX_LOG_BYTES) this.logs.delete(log.id)
    }
  }
}
