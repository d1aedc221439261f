/**
 * A Server-Sent Events decoder as the HTML standard describes it, written for MCP's use:
 * lines are found with `indexOf` and a long line's pieces are joined once, so a 1 MiB event
 * costs about what copying it does; the last event id and the `retry` value are kept even
 * when they come in an event without data (a priming event), because resuming needs them.
 *
 * @internal
 */

/** One dispatched event. */
export interface Event {
  readonly event: string
  readonly data: string
  readonly id: string | undefined
}

/** Decodes one stream; feed it text in order. */
export class SseDecoder {
  /** The last `id` field seen; it outlives the event that carried it. */
  lastEventId: string | undefined
  /** The last valid `retry` field, in milliseconds. */
  retry: number | undefined
  private pieces: Array<string> = []
  private pendingSize = 0
  private data: Array<string> = []
  private dataSize = 0
  private type = ""
  private afterCR = false
  private tooLarge = false

  constructor(readonly maxEventSize: number) {}

  /**
   * Decodes `text`, appending complete events to `out`. Returns false when the event being
   * read has grown past `maxEventSize` (the stream should then be abandoned).
   */
  push(text: string, out: Array<Event>): boolean {
    let start = 0
    // A CR ending the previous chunk may be the first half of a CRLF.
    if (this.afterCR && text.charCodeAt(0) === 10) start = 1
    this.afterCR = false
    // The next CR and LF are looked up again only once passed: a stream may have none of
    // one kind, and scanning for it at every line would cost the rest of the chunk each time.
    let cr = text.indexOf("\r", start)
    let lf = text.indexOf("\n", start)
    while (start < text.length) {
      if (cr !== -1 && cr < start) cr = text.indexOf("\r", start)
      if (lf !== -1 && lf < start) lf = text.indexOf("\n", start)
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr)
      if (end === -1) {
        this.pieces.push(text.slice(start))
        this.pendingSize += text.length - start
        return !this.tooLarge && this.pendingSize + this.dataSize <= this.maxEventSize
      }
      let line = text.slice(start, end)
      if (this.pieces.length > 0) {
        this.pieces.push(line)
        line = this.pieces.join("")
        this.pieces = []
        this.pendingSize = 0
      }
      this.line(line, out)
      if (end !== cr) start = end + 1
      else if (end + 1 === text.length) {
        this.afterCR = true
        start = text.length
      } else start = text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1
    }
    return !this.tooLarge
  }

  /** Forgets a partly read line and event (the stream broke); keeps the id and retry. */
  reset(): void {
    this.pieces = []
    this.pendingSize = 0
    this.data = []
    this.dataSize = 0
    this.type = ""
    this.afterCR = false
    this.tooLarge = false
  }

  private line(line: string, out: Array<Event>): void {
    if (line === "") return this.dispatch(out)
    if (line.charCodeAt(0) === 58) return // ":" starts a comment (keep-alive)
    const colon = line.indexOf(":")
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? "" : line.slice(colon + 1)
    if (value.charCodeAt(0) === 32) value = value.slice(1)
    switch (field) {
      case "data":
        this.data.push(value)
        this.dataSize += value.length + 1
        if (this.dataSize > this.maxEventSize + 1) this.tooLarge = true
        return
      case "event":
        this.type = value
        return
      case "id":
        if (!value.includes("\u0000")) this.lastEventId = value
        return
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value)
        return
    }
  }

  private dispatch(out: Array<Event>): void {
    if (this.data.length > 0) {
      out.push({
        event: this.type === "" ? "message" : this.type,
        data: this.data.length === 1 ? this.data[0]! : this.data.join("\n"),
        id: this.lastEventId
      })
    }
    this.data = []
    this.dataSize = 0
    this.type = ""
  }
}
