// The decoders under fuzz (fast-check), about 86,000 generated inputs in all, in a few
// seconds: the NDJSON line decoder and line parser, the SSE decoder, and the JSON-RPC
// validator. None may throw, and every bad input must be reported: a line that is not a
// message is in `bad`, a line or an event over the limit is refused, never handed on.
import { describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import { type Event, SseDecoder } from "../../../src/internal/transport/sseDecoder.js"
import * as JsonRpc from "../../../src/JsonRpc.js"

// Cuts `length` into pieces at the given points (taken modulo `length`), in order.
const cutsOf = (length: number, points: ReadonlyArray<number>): Array<number> =>
  [...new Set(points.map((point) => length === 0 ? 0 : point % length))].sort((a, b) => a - b)

const pieces = <A extends { slice(start: number, end?: number): A; readonly length: number }>(
  whole: A,
  points: ReadonlyArray<number>
): Array<A> => {
  const cuts = [0, ...cutsOf(whole.length, points), whole.length]
  return cuts.slice(1).map((end, i) => whole.slice(cuts[i]!, end))
}

// JSON-RPC-like lines: messages, near-messages, batches, other JSON, broken JSON and text.
// (Small dictionaries rather than fc.object, which costs ten times as much to generate.)
const object = fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.integer(), fc.string({ maxLength: 3 })), {
  maxKeys: 3
})
const message = fc.record({
  jsonrpc: fc.constantFrom("2.0", "2.0", "2.0", "1.0"),
  id: fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constantFrom(null, 1.5, 2 ** 53)),
  method: fc.constantFrom("ping", "tools/call", "constructor", "__proto__"),
  params: fc.oneof(object, fc.constantFrom(null, [1], "x")),
  result: fc.oneof(object, fc.constantFrom(null, 1, [])),
  error: fc.oneof(
    fc.record({ code: fc.oneof(fc.integer(), fc.constantFrom("x", 1.5)), message: fc.string({ maxLength: 4 }) }),
    fc.constantFrom(null, {}, "x")
  )
}, { requiredKeys: ["jsonrpc"] })
const jsonLine = fc.oneof(
  message.map((value) => JSON.stringify(value)),
  fc.array(message, { maxLength: 3 }).map((values) => JSON.stringify(values)),
  fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)),
  message.map((value) => JSON.stringify(value).slice(0, -1)),
  fc.string({ unit: "grapheme", maxLength: 40 })
)

// What the decoder must make of `bytes`: each line between newlines, its trailing CR cut,
// empty ones dropped, up to the first (raw) line longer than `max`, which is refused.
const referenceLines = (bytes: Buffer, max: number) => {
  const lines: Array<string> = []
  let start = 0
  for (;;) {
    const newline = bytes.indexOf(0x0a, start)
    const end = newline === -1 ? bytes.length : newline
    if (end - start > max) return { lines, oversize: true }
    let line = bytes.subarray(start, end)
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1)
    if (line.length > 0) lines.push(line.toString("utf8"))
    if (newline === -1) return { lines, oversize: false }
    start = newline + 1
  }
}

// How many things a line stands for: its batch's items, or itself.
const itemsOf = (line: string): Array<unknown> | undefined => {
  try {
    const json: unknown = JSON.parse(line)
    return Array.isArray(json) ? json : [json]
  } catch {
    return undefined
  }
}

// Plain comparisons: `expect` in a property run 100,000 times would cost most of the time.
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

// Whether parsing `line` accounts for all of it: each item of a batch (or the line) is a
// message or a bad entry, and a line that is no JSON, or an empty batch, one bad entry.
const reported = (line: string): boolean => {
  const messages: Array<JsonRpc.Message> = []
  const bad: Array<JsonRpc.BadLine> = []
  JsonRpc.parseLine(line, messages, bad)
  const items = itemsOf(line)
  if (items === undefined) return same(bad, [{ reason: "not JSON", excerpt: JsonRpc.excerpt(line) }])
  if (items.length === 0) return messages.length === 0 && bad.length === 1
  const invalid = items.filter((item) => Either.isLeft(JsonRpc.validateMessage(item))).length
  return messages.length === items.length - invalid && bad.length === invalid
}

describe("fuzz: NDJSON", () => {
  it("splits any bytes in any chunks as a whole split would, refuses a long line, and reports every bad line", () =>
    fc.assert(
      fc.property(
        fc.array(jsonLine, { maxLength: 8 }),
        fc.constantFrom("\n", "\r\n", "\n\n"),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 16, max: 256 }),
        (lines, eol, points, max) => {
          const bytes = Buffer.from(lines.join(eol), "utf8")
          const decoder = new JsonRpc.LineDecoder(max)
          const decoded: Array<string> = []
          let oversize = false
          for (const chunk of pieces(bytes, points)) {
            if (decoder.push(new Uint8Array(chunk), decoded) !== undefined) {
              oversize = true
              break
            }
          }
          if (!oversize) decoder.flush(decoded)
          const expected = referenceLines(bytes, max)
          return oversize === expected.oversize && same(decoded, expected.lines) && decoded.every(reported)
        }
      ),
      // A run here is a stream of up to 8 lines to generate and check (ten times an SSE run):
      // 30,000 took 50 s of a 120 s guard on a busy machine.
      { numRuns: 6_000 }
    ))
})

// SSE-like text: fields, comments and blank lines, with every kind of line end.
const sseText = fc.array(
  fc.oneof(
    fc.string({ maxLength: 12 }).map((value) => `data: ${value}`),
    fc.string({ maxLength: 6 }).map((value) => `data:${value}`),
    fc.string({ maxLength: 6 }).map((value) => `event: ${value}`),
    fc.oneof(fc.string({ maxLength: 4 }), fc.constant("a\u0000b")).map((value) => `id: ${value}`),
    fc.oneof(fc.nat().map(String), fc.string({ maxLength: 3 })).map((value) => `retry: ${value}`),
    fc.string({ maxLength: 8 }).map((value) => `:${value}`),
    fc.string({ maxLength: 8 }),
    fc.constant("")
  ),
  { maxLength: 12 }
).chain((lines) =>
  fc.array(fc.constantFrom("\n", "\r\n", "\r"), { minLength: lines.length, maxLength: lines.length }).map((ends) =>
    lines.map((line, i) => line + ends[i]).join("")
  )
)

const decodeSse = (chunks: ReadonlyArray<string>, max: number) => {
  const decoder = new SseDecoder(max)
  const events: Array<Event> = []
  let fits = true
  // Whether every event it handed on while the stream fit was within the limit.
  let within = true
  for (const chunk of chunks) {
    const before = events.length
    fits = decoder.push(chunk, events)
    if (!fits) break
    for (let i = before; i < events.length; i++) within &&= events[i]!.data.length <= max
  }
  return { events, fits, within, decoder }
}

describe("fuzz: SSE", () => {
  it("decodes any text in any chunks as it decodes it whole, and never hands on an event over the limit", () =>
    fc.assert(
      fc.property(
        sseText,
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 4, max: 64 }),
        (text, points, max) => {
          const chunked = decodeSse(pieces(text, points), max)
          const whole = decodeSse([text], max)
          if (!chunked.within || !whole.within) return false
          // Cut in pieces, a long line may be refused before it is seen whole.
          if (!chunked.fits) return true
          return whole.fits && same(chunked.events, whole.events) &&
            chunked.decoder.lastEventId === whole.decoder.lastEventId && chunked.decoder.retry === whole.decoder.retry
        }
      ),
      { numRuns: 30_000 }
    ))
})

describe("fuzz: JSON-RPC validator", () => {
  it("takes any JSON value without throwing, and says why it refuses one", () =>
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 3 }), message), (value) => {
        const result = JsonRpc.validateMessage(value)
        return Either.isLeft(result) ? result.left.length > 0 : typeof result.right === "object"
      }),
      { numRuns: 50_000 }
    ))
})
