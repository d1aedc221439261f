import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import * as JsonRpc from "../src/JsonRpc.js"

const bytes = (text: string) => new Uint8Array(Buffer.from(text, "utf8"))

const decodeAll = (decoder: JsonRpc.LineDecoder, chunks: ReadonlyArray<Uint8Array>) => {
  const lines: Array<string> = []
  for (const chunk of chunks) expect(decoder.push(chunk, lines)).toBeUndefined()
  decoder.flush(lines)
  return lines
}

describe("LineDecoder", () => {
  it("splits lines across and within chunks, dropping CR and empty lines", () => {
    const lines = decodeAll(new JsonRpc.LineDecoder(), [
      bytes("{\"a\":1}\n{\"b\""),
      bytes(":2}\r\n\n{\"c\":3}\n{\"d\":")
    ])
    // The unfinished last line comes out only on flush.
    expect(lines).toEqual(["{\"a\":1}", "{\"b\":2}", "{\"c\":3}", "{\"d\":"])
  })

  it("keeps a final line without a newline for flush", () => {
    expect(decodeAll(new JsonRpc.LineDecoder(), [bytes("one\ntw"), bytes("o")])).toEqual(["one", "two"])
  })

  it("decodes a multi-byte character split between chunks", () => {
    const all = Buffer.from("{\"text\":\"héllo ✓ 😀\"}\n", "utf8")
    const chunks = Array.from(all, (byte) => new Uint8Array([byte]))
    expect(decodeAll(new JsonRpc.LineDecoder(), chunks)).toEqual(["{\"text\":\"héllo ✓ 😀\"}"])
  })

  it("reassembles a 16 MiB line from 64 KiB chunks", () => {
    const line = "x".repeat(16 * 1024 * 1024 - 1)
    const all = Buffer.from(line + "\n")
    const chunks: Array<Uint8Array> = []
    for (let i = 0; i < all.length; i += 65536) chunks.push(all.subarray(i, i + 65536))
    const lines = decodeAll(new JsonRpc.LineDecoder(), chunks)
    expect(lines.length).toBe(1)
    expect(lines[0]!.length).toBe(line.length)
  })

  it("reports a line over the cap, within one chunk and across chunks", () => {
    const lines: Array<string> = []
    expect(new JsonRpc.LineDecoder(10).push(bytes("0123456789AB\n"), lines)).toEqual({ oversize: 12 })
    const decoder = new JsonRpc.LineDecoder(10)
    expect(decoder.push(bytes("012345"), lines)).toBeUndefined()
    expect(decoder.push(bytes("6789AB"), lines)).toEqual({ oversize: 12 })
    expect(lines).toEqual([])
  })

  it("accepts a line of exactly the cap", () => {
    const lines: Array<string> = []
    expect(new JsonRpc.LineDecoder(10).push(bytes("0123456789\n"), lines)).toBeUndefined()
    expect(lines).toEqual(["0123456789"])
  })
})

describe("parseLine", () => {
  const parse = (line: string) => {
    const messages: Array<JsonRpc.Message> = []
    const bad: Array<JsonRpc.BadLine> = []
    JsonRpc.parseLine(line, messages, bad)
    return { messages, bad }
  }

  it("parses one message", () => {
    expect(parse(`{"jsonrpc":"2.0","id":1,"result":{}}`).messages).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }])
  })

  it("parses a batch into its messages", () => {
    const { bad, messages } = parse(
      `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"notifications/progress","params":{}}]`
    )
    expect(messages.length).toBe(2)
    expect(bad).toEqual([])
  })

  it("reports non-JSON with an excerpt", () => {
    const { bad, messages } = parse("Server started on port 3000")
    expect(messages).toEqual([])
    expect(bad).toEqual([{ reason: "not JSON", excerpt: "Server started on port 3000" }])
  })

  it("reports JSON that is not JSON-RPC, and keeps the good items of a batch", () => {
    const { bad, messages } = parse(`[{"hello":"world"},{"jsonrpc":"2.0","id":"a","result":{}}]`)
    expect(messages).toEqual([{ jsonrpc: "2.0", id: "a", result: {} }])
    expect(bad[0]!.reason).toMatch(/not a JSON-RPC message/)
  })

  it("marks a broken answer with the id it answers; a broken request or an unusable id is only bad", () => {
    const broken = `{"jsonrpc":"2.0","id":3,"result":1,"error":{}}`
    expect(parse(broken).bad).toEqual([{
      reason: `not a JSON-RPC message: "result" must be an object`,
      excerpt: broken,
      id: 3
    }])
    expect(parse(`{"id":"a","result":{}}`).bad[0]!.id).toBe("a")
    expect(parse(`{"jsonrpc":"2.0","id":4,"error":{"code":"x","message":"m"}}`).bad[0]!.id).toBe(4)
    expect(parse(`{"jsonrpc":"1.0","id":5,"method":"ping"}`).bad[0]!.id).toBeUndefined()
    expect(parse(`{"jsonrpc":"2.0","id":1.5,"result":{}}`).bad[0]!.id).toBeUndefined()
    expect(parse(`[{"jsonrpc":"2.0","id":6,"result":null}]`).bad[0]!.id).toBe(6)
  })

  it("shortens long excerpts", () => {
    const { bad } = parse("x".repeat(5000))
    expect(bad[0]!.excerpt.length).toBeLessThan(300)
    expect(bad[0]!.excerpt).toMatch(/5000 characters/)
  })
})

describe("validateMessage", () => {
  // The hand-written check must accept exactly what the schema accepts.
  const corpus: ReadonlyArray<unknown> = [
    { jsonrpc: "2.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", id: "x", method: "tools/call", params: { name: "a" } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 1, result: {} },
    { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "nope" } },
    { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error", data: "x" } },
    { jsonrpc: "2.0", id: null, method: "ping" },
    { jsonrpc: "2.0", id: 1.5, method: "ping" },
    { jsonrpc: "1.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", id: 1, method: "ping", params: [1, 2] },
    { jsonrpc: "2.0", id: 1, result: "ok" },
    { jsonrpc: "2.0", id: null, result: {} },
    { jsonrpc: "2.0", id: 1, error: { code: "x", message: "m" } },
    { jsonrpc: "2.0", method: 5 },
    { jsonrpc: "2.0" },
    { jsonrpc: "2.0", id: 2 ** 53, method: "ping" },
    { jsonrpc: "2.0", id: 1, error: { code: 2 ** 53, message: "m" } },
    { jsonrpc: "2.0", id: null, method: "ping", error: { code: 1, message: "m" } },
    { jsonrpc: "2.0", id: 1, method: 5, result: {} },
    { jsonrpc: "2.0", id: 1, result: 1, error: { code: 1, message: "m" } },
    { jsonrpc: "2.0", id: 3, result: 1, error: {} },
    "text",
    null,
    [1]
  ]
  const isMessage = Schema.is(JsonRpc.Message)

  it("agrees with the Message schema", () => {
    for (const value of corpus) {
      expect([value, Either.isRight(JsonRpc.validateMessage(value))]).toEqual([value, isMessage(value)])
    }
  })

  // Messages near the schema's edges: each field absent, right, or wrong in a way that
  // matters (ids and codes past the safe integers, a method beside a result or an error).
  const unsafe = [2 ** 53, -(2 ** 53), 2 ** 53 + 2, 1e21, 1.5]
  const id = fc.oneof(
    fc.string({ maxLength: 3 }),
    fc.integer(),
    fc.constantFrom(...unsafe, null, true, {}, [])
  )
  const object = fc.oneof(fc.constant({}), fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })))
  const notObject = fc.constantFrom(null, [], [1], "x", 1, true)
  const error = fc.oneof(
    fc.record({
      code: fc.oneof(fc.integer(), fc.constantFrom(...unsafe, "1", null)),
      message: fc.oneof(fc.string({ maxLength: 3 }), fc.constantFrom(1, null)),
      data: fc.jsonValue({ maxDepth: 1 }),
      method: fc.string({ maxLength: 3 })
    }, { requiredKeys: [] }),
    notObject
  )
  const nearMessage = fc.record({
    jsonrpc: fc.oneof({ arbitrary: fc.constant("2.0"), weight: 8 }, fc.constantFrom("1.0", 2, null)),
    id,
    method: fc.oneof(
      { arbitrary: fc.constantFrom("ping", "constructor", "__proto__"), weight: 3 },
      fc.constantFrom(1, null, {})
    ),
    params: fc.oneof(object, notObject),
    result: fc.oneof(object, notObject),
    error
  }, { requiredKeys: [] }).map((value) => JSON.parse(JSON.stringify(value)) as unknown)

  const schemas: ReadonlyArray<Schema.Schema.AnyNoContext> = [
    JsonRpc.Request,
    JsonRpc.Notification,
    JsonRpc.Success,
    JsonRpc.Failure
  ]
  const members = schemas.map((member) => Schema.decodeUnknownEither(member))
  const kinds = ["request", "notification", "success", "failure"] as const
  // How the schema's union reads a value: its first member that decodes it.
  const schemaKind = (value: unknown) => kinds[members.findIndex((decode) => Either.isRight(decode(value)))]
  // How the Peer reads a validated message.
  const peerKind = (message: JsonRpc.Message) =>
    "method" in message ? ("id" in message ? "request" : "notification") : "result" in message ? "success" : "failure"

  it("accepts exactly what the schema accepts, read as the schema reads it (property)", () => {
    const decode = Schema.decodeUnknownEither(JsonRpc.Message)
    fc.assert(
      fc.property(nearMessage, (value) => {
        const validated = JsonRpc.validateMessage(value)
        const decoded = decode(value)
        if (Either.isLeft(validated) || Either.isLeft(decoded)) {
          return Either.isLeft(validated) && Either.isLeft(decoded)
        }
        expect(peerKind(validated.right)).toBe(schemaKind(value))
        // The schema drops the keys it does not know; the validator keeps them.
        expect(validated.right).toMatchObject(decoded.right)
      }),
      { numRuns: 5_000 }
    )
  })

  it("classifies messages", () => {
    const request = { jsonrpc: "2.0", id: 1, method: "ping" } as const
    const notification = { jsonrpc: "2.0", method: "x" } as const
    const response = { jsonrpc: "2.0", id: 1, result: {} } as const
    expect([JsonRpc.isRequest(request), JsonRpc.isNotification(request), JsonRpc.isResponse(request)]).toEqual([
      true,
      false,
      false
    ])
    expect(JsonRpc.isNotification(notification)).toBe(true)
    expect(JsonRpc.isResponse(response)).toBe(true)
  })
})
