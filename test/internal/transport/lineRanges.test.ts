import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ndjson from "../../../src/internal/transport/ndjson.js"
import * as JsonRpc from "../../../src/JsonRpc.js"

const utf8 = (text: string) => new TextEncoder().encode(text)

// Feeds the chunks one by one, returning the lines each made.
const feed = (chunks: ReadonlyArray<Uint8Array>) => {
  const decoder = new JsonRpc.LineDecoder(1024)
  const lines: Array<string> = []
  for (const chunk of chunks) expect(decoder.push(chunk, lines)).toBeUndefined()
  decoder.flush(lines)
  return lines
}

describe("JsonRpc.LineDecoder, each line decoded from its range of the chunk", () => {
  it("reads plain Uint8Arrays and views into a larger buffer as it reads Buffers", () => {
    const text = "one\r\n\ntwo\nthr"
    const padded = Buffer.from(`xx${text}yy`)
    const view = padded.subarray(2, 2 + Buffer.byteLength(text))
    expect(feed([utf8(text), utf8("ee\n")])).toEqual(["one", "two", "three"])
    expect(feed([view, Buffer.from("ee\n")])).toEqual(["one", "two", "three"])
  })

  it("joins a line split anywhere: in a character, between its CR and LF, and keeps what has no newline", () => {
    const bytes = utf8("é€😀 ok\r\nlast")
    for (let cut = 1; cut < bytes.length; cut++) {
      // Copies, so that no chunk is a view of the other's buffer.
      expect(feed([bytes.slice(0, cut), bytes.slice(cut)])).toEqual(["é€😀 ok", "last"])
    }
  })
})

describe("Ndjson.LineWriter in a microtask", () => {
  it.effect("sends the requests of fibers resumed together in one write", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      const writer = new Ndjson.LineWriter((text) => writes.push(text))
      // 64 fibers waiting, resumed from one callback, as an answer chunk resumes its callers.
      const resumes: Array<() => void> = []
      const fibers = yield* Effect.forEach(
        Array.from({ length: 64 }, (_, i) => i),
        (i) =>
          Effect.fork(Effect.zipRight(
            Effect.async<void>((resume) => void resumes.push(() => resume(Effect.void))),
            Effect.sync(() => writer.push({ jsonrpc: "2.0", id: i, method: "ping" }))
          ))
      )
      yield* Effect.yieldNow()
      expect(resumes).toHaveLength(64)
      yield* Effect.promise(() =>
        new Promise<void>((done) =>
          setImmediate(() => {
            for (const resume of resumes) resume()
            done()
          })
        )
      )
      yield* Effect.forEach(fibers, (fiber) => fiber.await, { discard: true })
      yield* Effect.promise(() => new Promise((done) => setImmediate(done)))
      expect(writes).toHaveLength(1)
      expect(writes[0]!.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line).id)).toEqual(
        Array.from({ length: 64 }, (_, i) => i)
      )
    }))
})
