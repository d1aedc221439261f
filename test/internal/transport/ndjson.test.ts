import { describe, expect, it } from "@effect/vitest"
import { PassThrough } from "node:stream"
import type * as JsonRpc from "../../../src/JsonRpc.js"
import type * as McpError from "../../../src/McpError.js"

import * as Ndjson from "../../../src/internal/transport/ndjson.js"
import { BrokenAnswer, Inbox, type Incoming } from "../../../src/Transport.js"

// Reads `input` into an inbox whose receiver records everything, in order.
const reading = (maxMessageBytes = 1024) => {
  const input = new PassThrough()
  const inbox = new Inbox("srv")
  const seen: Array<Incoming | string> = []
  const ended: Array<McpError.McpError | undefined> = []
  let ends = 0
  const stop = Ndjson.read(input, inbox, {
    maxMessageBytes,
    onBad: (bad) => {
      for (const line of bad) seen.push(`bad: ${line.reason}`)
    },
    onEnd: (error) => {
      ends++
      ended.push(error)
    }
  })
  inbox.listen({ message: (message) => seen.push(message), closed: () => {} })
  return { input, inbox, seen, ended, ends: () => ends, stop }
}

const ping = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`

describe("Ndjson.read", () => {
  it("delivers each message in the data callback that completed its line, bad lines reported first", () => {
    const { input, seen } = reading()
    input.write(`${ping(1)}\nnot json\n${ping(2)}`)
    expect(seen).toEqual(["bad: not JSON", { jsonrpc: "2.0", id: 1, method: "ping" }])
    input.write("\n")
    expect(seen).toHaveLength(3)
  })

  it("delivers a broken answer as a BrokenAnswer for its id, after reporting it", () => {
    const { input, seen } = reading()
    input.write(`{"jsonrpc":"2.0","id":3,"result":1,"error":{}}\n`)
    expect(seen).toHaveLength(2)
    expect(seen[0]).toBe(`bad: not a JSON-RPC message: "result" must be an object`)
    expect(seen[1]).toBeInstanceOf(BrokenAnswer)
    expect(seen[1]).toMatchObject({ id: 3, problem: { excerpt: `{"jsonrpc":"2.0","id":3,"result":1,"error":{}}` } })
  })

  it("delivers a last line without its newline when the input ends, then ends once", async () => {
    const { ended, ends, input, seen } = reading()
    input.end(ping(7))
    await new Promise((resolve) => input.once("end", resolve))
    expect(seen).toEqual([{ jsonrpc: "2.0", id: 7, method: "ping" }])
    expect(ends()).toBe(1)
    expect(ended).toEqual([undefined])
  })

  it("ends with a Limit error on a line over the maximum, and reads nothing after it", () => {
    const { ended, input, seen } = reading(32)
    input.write(`${"x".repeat(40)}\n${ping(1)}\n`)
    expect(ended[0]?.reason).toMatchObject({ _tag: "Limit", limit: 32 })
    input.write(`${ping(2)}\n`)
    expect(seen).toEqual([])
  })

  it("ends with a Transport error when the receiver throws, instead of throwing into the stream", () => {
    const input = new PassThrough()
    const inbox = new Inbox("srv")
    const ended: Array<McpError.McpError | undefined> = []
    Ndjson.read(input, inbox, { maxMessageBytes: 1024, onBad: () => {}, onEnd: (error) => ended.push(error) })
    inbox.listen({
      message: () => {
        throw new Error("boom")
      },
      closed: () => {}
    })
    expect(() => input.write(`${ping(1)}\n`)).not.toThrow()
    expect(ended[0]?.reason).toMatchObject({ _tag: "Transport" })
    expect(ended[0]?.message).toContain("boom")
  })

  it("stops reading when asked", () => {
    const { input, seen, stop } = reading()
    stop()
    input.write(`${ping(1)}\n`)
    expect(seen).toEqual([])
  })
})

describe("Ndjson.LineWriter", () => {
  it("joins what is pushed in one tick into one write", async () => {
    const writes: Array<string> = []
    const writer = new Ndjson.LineWriter((text) => writes.push(text))
    const message = (id: number): JsonRpc.Message => ({ jsonrpc: "2.0", id, method: "ping" })
    writer.push(message(1))
    writer.push(message(2))
    expect(writes).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    expect(writes).toEqual([`${ping(1)}\n${ping(2)}\n`])
    writer.push(message(3))
    writer.flush()
    expect(writes).toEqual([`${ping(1)}\n${ping(2)}\n`, `${ping(3)}\n`])
  })
})

describe("Inbox", () => {
  it("keeps what came before the receiver listens, delivers it first, then the end", () => {
    const inbox = new Inbox("srv")
    const seen: Array<unknown> = []
    inbox.deliver({ jsonrpc: "2.0", method: "a" })
    inbox.end({ message: "gone" } as McpError.McpError)
    inbox.deliver({ jsonrpc: "2.0", method: "after the end" })
    inbox.listen({ message: (message) => seen.push(message), closed: (error) => seen.push(error.message) })
    expect(seen).toEqual([{ jsonrpc: "2.0", method: "a" }, "gone"])
    expect(inbox.open).toBe(false)
  })

  it("takes one receiver", () => {
    const inbox = new Inbox("srv")
    inbox.listen({ message: () => {}, closed: () => {} })
    expect(() => inbox.listen({ message: () => {}, closed: () => {} })).toThrow(/server 'srv' already has a receiver/)
  })
})
