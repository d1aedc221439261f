import { describe, expect, it } from "@effect/vitest"
import {
  type EventSink,
  MAX_LOGS,
  parseEventId,
  StreamLogs
} from "../../../../src/internal/mcpServer/http/streamLog.js"

const sink = () => {
  const written: Array<string> = []
  let ended = 0
  const value: EventSink = { write: (text) => void written.push(text), end: () => void ended++ }
  return { value, written, ended: () => ended }
}

describe("gateway stream logs", () => {
  it("a stream starts with a priming event and writes each event to its reader as it comes, ids in order", () => {
    let released = 0
    const logs = new StreamLogs(() => void released++)
    const log = logs.open()
    const first = sink()
    logs.read(log, 0, first.value)
    log.append("data: a\n\n")
    expect(first.written).toEqual([`id: ${log.id}:0\nretry: 1000\ndata: \n\n`, `id: ${log.id}:1\ndata: a\n\n`])
    log.finish()
    expect(first.ended()).toBe(1)
    expect(released).toBe(1)
    expect(logs.readers.size).toBe(0)
  })

  it("a dropped reader leaves the stream kept; Last-Event-ID resumes after the event it names", () => {
    const logs = new StreamLogs(() => {})
    const log = logs.open()
    const first = sink()
    logs.read(log, 0, first.value).end()
    log.append("data: b\n\n")
    log.finish()
    const resumed = logs.resume(`${log.id}:0`)!
    expect(resumed).toEqual({ log, from: 1 })
    const second = sink()
    logs.read(resumed.log, resumed.from, second.value)
    expect(second.written).toEqual([`id: ${log.id}:1\ndata: b\n\n`])
    expect(second.ended()).toBe(1)
    expect(logs.resume("nope")).toBeUndefined()
    expect(logs.resume("constructor:0")).toBeUndefined()
    expect(logs.resume(undefined)).toBeUndefined()
    expect(parseEventId("ab:12")).toEqual({ stream: "ab", index: 12 })
  })

  it("a new reader of a stream ends the one before", () => {
    const logs = new StreamLogs(() => {})
    const log = logs.open()
    const first = sink()
    logs.read(log, 0, first.value)
    const second = sink()
    logs.read(log, 1, second.value)
    expect(first.ended()).toBe(1)
    log.append("data: c\n\n")
    expect(first.written).toHaveLength(1)
    expect(second.written).toHaveLength(1)
  })

  it("keeps at most MAX_LOGS streams nobody reads, oldest dropped first", () => {
    const logs = new StreamLogs(() => {})
    const ids: Array<string> = []
    for (let i = 0; i <= MAX_LOGS; i++) {
      const log = logs.open()
      ids.push(log.id)
      log.finish()
      logs.read(log, 0, sink().value)
    }
    expect(logs.size).toBe(MAX_LOGS)
    expect(logs.resume(`${ids[0]}:0`)).toBeUndefined()
    expect(logs.resume(`${ids.at(-1)}:0`)).toBeDefined()
  })

  it("ending all ends every reader", () => {
    const logs = new StreamLogs(() => {})
    const a = sink()
    const b = sink()
    logs.read(logs.open(), 0, a.value)
    logs.read(logs.open(), 0, b.value)
    logs.endAll()
    expect([a.ended(), b.ended()]).toEqual([1, 1])
  })
})
