import { describe, expect, it } from "@effect/vitest"
import { type Event, SseDecoder } from "../../../src/internal/transport/sseDecoder.js"

const decode = (chunks: ReadonlyArray<string>, max = 1024) => {
  const decoder = new SseDecoder(max)
  const events: Array<Event> = []
  const fits = chunks.map((chunk) => decoder.push(chunk, events))
  return { decoder, events, fits }
}

const stream = [
  ": keep-alive",
  "id: 1",
  "retry: 250",
  "data:",
  "",
  "event: message",
  "id: 2",
  "data: {\"a\":1}",
  "data: second line",
  "",
  "id: 3",
  "",
  "data:no space",
  "",
  "event: endpoint",
  "data: /messages?session=x",
  "",
  ""
]

describe("SseDecoder", () => {
  for (const [name, eol] of [["LF", "\n"], ["CRLF", "\r\n"], ["CR", "\r"]] as const) {
    it(`decodes events, comments, ids and retry with ${name} line ends, however the text is split`, () => {
      const text = stream.join(eol)
      const whole = decode([text])
      const byChar = decode(text.split(""))
      for (const { decoder, events } of [whole, byChar]) {
        expect(events).toEqual([
          { event: "message", data: "", id: "1" },
          { event: "message", data: "{\"a\":1}\nsecond line", id: "2" },
          { event: "message", data: "no space", id: "3" },
          { event: "endpoint", data: "/messages?session=x", id: "3" }
        ])
        // An id in an event without data still counts: resuming needs it.
        expect(decoder.lastEventId).toBe("3")
        expect(decoder.retry).toBe(250)
      }
    })
  }

  it("says when the event being read outgrows the cap, whole or in pieces", () => {
    expect(decode([`data: ${"x".repeat(2000)}\n\n`]).fits).toEqual([false])
    expect(decode([`data: ${"x".repeat(600)}`, "x".repeat(600)]).fits).toEqual([true, false])
    expect(decode([`data: ${"x".repeat(1000)}\n\n`]).fits).toEqual([true])
  })

  it("reset forgets a broken event but keeps the id and retry", () => {
    const { decoder, events } = decode(["id: 7\nretry: 10\ndata: half"])
    decoder.reset()
    decoder.push("data: whole\n\n", events)
    expect(events).toEqual([{ event: "message", data: "whole", id: "7" }])
    expect(decoder.retry).toBe(10)
  })
})
