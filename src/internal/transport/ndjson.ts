/**
 * Newline-delimited JSON-RPC over Node streams: the one read and write path of the stdio
 * transports (a server's child process, and the gateway's own stdin and stdout). Lines are
 * split and parsed in the stream's `data` callback and delivered to the inbox right there;
 * what is written before the pending microtasks run out goes out in one write.
 *
 * @internal
 */
import type { Readable } from "node:stream"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import { deliverBroken, type Inbox } from "../../Transport.js"

/** How to read one input stream. */
export interface ReadOptions {
  readonly maxMessageBytes: number
  /** Lines that were not JSON-RPC messages; they were skipped. */
  readonly onBad: (bad: ReadonlyArray<JsonRpc.BadLine>) => void
  /**
   * The input is done: it ended after its last line was delivered (no `error`), or reading
   * failed, or a message was too large (`error` says which). Called once.
   */
  readonly onEnd: (error?: McpError.McpError) => void
}

/**
 * Reads NDJSON from `input` into `inbox` until the input ends. Returns a function that
 * stops reading.
 */
export const read = (input: Readable, inbox: Inbox, options: ReadOptions): () => void => {
  const server = inbox.server
  const decoder = new JsonRpc.LineDecoder(options.maxMessageBytes)
  // Kept from chunk to chunk, emptied before delivering (a receiver may make us read again):
  // at one answer per chunk, no array is made per chunk.
  const lines: Array<string> = []
  const messages: Array<JsonRpc.Message> = []
  const bad: Array<JsonRpc.BadLine> = []
  let done = false

  const deliverLines = () => {
    for (const line of lines) JsonRpc.parseLine(line, messages, bad)
    lines.length = 0
    // What was skipped is reported first, as it came before what the messages cause; a
    // broken answer fails its request.
    if (bad.length > 0) {
      const skipped = bad.splice(0)
      options.onBad(skipped)
      deliverBroken(skipped, (incoming) => inbox.deliver(incoming))
    }
    if (messages.length === 1) inbox.deliver(messages.pop()!)
    else if (messages.length > 1) { for (const message of messages.splice(0)) inbox.deliver(message) }
  }
  const finish = (error?: McpError.McpError) => {
    if (done) return
    done = true
    stop()
    options.onEnd(error)
  }
  const onData = (chunk: Buffer) => {
    try {
      const oversize = decoder.push(chunk, lines)
      if (oversize !== undefined) {
        lines.length = 0
        return finish(McpError.limit(server, { what: "a message", size: oversize.oversize, limit: decoder.maxBytes }))
      }
      if (lines.length > 0) deliverLines()
    } catch (defect) {
      // A receiver that throws is a bug; the connection ends with it rather than the host.
      finish(McpError.transport(server, { message: `a message could not be handled: ${String(defect)}` }, defect))
    }
  }
  // A last message without its newline still counts.
  const onEnd = () => {
    decoder.flush(lines)
    deliverLines()
    finish()
  }
  const onError = (error: Error) =>
    finish(McpError.transport(server, { message: `reading failed: ${error.message}` }, error))
  const stop = () => {
    input.off("data", onData)
    input.off("end", onEnd)
    input.off("error", onError)
  }
  input.on("data", onData)
  input.once("end", onEnd)
  input.once("error", onError)
  return () => {
    done = true
    stop()
  }
}

/** The ids of the requests in text a LineWriter made: which requests a lost write held. */
export const requestIds = (text: string): Array<JsonRpc.RequestId> => {
  const ids: Array<JsonRpc.RequestId> = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    const message = JSON.parse(line) as JsonRpc.Message
    if (JsonRpc.isRequest(message)) ids.push(message.id)
  }
  return ids
}

/**
 * Joins the lines sent until the pending microtasks run out into one write: at many calls in
 * flight, one write serves them all (the fibers an answer chunk resumes run in one microtask
 * of Effect's scheduler). A microtask, not `setImmediate`: no Immediate per call at one call
 * in flight, and the write leaves in this turn of the event loop rather than the next.
 */
export class LineWriter {
  private pending: Array<string> = []
  private scheduled = false

  constructor(private readonly write: (text: string) => void) {}

  /** Queues one message. */
  push(message: JsonRpc.Message): void {
    this.pending.push(JsonRpc.encodeLine(message))
    if (!this.scheduled) {
      this.scheduled = true
      queueMicrotask(this.flush)
    }
  }

  /** Takes what is queued, unwritten, for when the other end is gone. */
  discard(): string {
    const text = this.pending.join("")
    this.pending = []
    return text
  }

  /** Writes what is queued now. */
  readonly flush = (): void => {
    this.scheduled = false
    if (this.pending.length === 0) return
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join("")
    this.pending = []
    this.write(text)
  }
}
