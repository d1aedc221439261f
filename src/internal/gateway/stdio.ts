/**
 * The server side of stdio: this process's own stdin and stdout (or any pair of Node
 * streams) as a Transport, newline-delimited JSON-RPC both ways.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { Readable, Writable } from "node:stream"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import type { TransportService } from "../../Transport.js"

/** Who the transport's messages come from, in errors and logs. */
const CLIENT = "stdio client"

/**
 * A Transport reading messages from `input` and writing them to `output`. Lines that are
 * not JSON-RPC are answered with a JSON-RPC error (id null) and logged; the stream ends
 * when `input` ends.
 */
export const make = (
  input: Readable,
  output: Writable,
  maxMessageBytes = JsonRpc.DEFAULT_MAX_MESSAGE_BYTES
): TransportService => {
  let closed = false
  const write = (message: JsonRpc.Message) =>
    Effect.suspend(() => {
      if (closed || output.destroyed || output.writableEnded) {
        return Effect.fail(McpError.make(CLIENT, new McpError.ClosedReason({ message: "stdout is closed" })))
      }
      output.write(JsonRpc.encodeLine(message))
      return Effect.void
    })

  const decoder = new JsonRpc.LineDecoder(maxMessageBytes)
  const parse = (lines: ReadonlyArray<string>): Effect.Effect<Chunk.Chunk<JsonRpc.Message>> => {
    const messages: Array<JsonRpc.Message> = []
    const bad: Array<JsonRpc.BadLine> = []
    for (const line of lines) JsonRpc.parseLine(line, messages, bad)
    if (bad.length === 0) return Effect.succeed(Chunk.unsafeFromArray(messages))
    return JsonRpc.logSkipped(CLIENT, "wrote a line", bad).pipe(
      Effect.zipRight(Effect.forEach(bad, (line) =>
        Effect.ignore(write({
          jsonrpc: "2.0",
          id: null,
          error: {
            code: line.reason === "not JSON" ? JsonRpc.ErrorCode.ParseError : JsonRpc.ErrorCode.InvalidRequest,
            message: line.reason
          }
        })), { discard: true })),
      Effect.as(Chunk.unsafeFromArray(messages))
    )
  }

  const chunks = Stream.async<Uint8Array, McpError.McpError>((emit) => {
    const onData = (chunk: Buffer) => void emit.single(chunk)
    const onEnd = () => void emit.end()
    const onError = (error: Error) =>
      void emit.fail(McpError.make(CLIENT, new McpError.TransportReason({ message: `reading stdin failed: ${error.message}` }), error))
    input.on("data", onData)
    input.once("end", onEnd)
    input.once("close", onEnd)
    input.once("error", onError)
    return Effect.sync(() => {
      input.off("data", onData)
      input.off("end", onEnd)
      input.off("close", onEnd)
      input.off("error", onError)
      // Let the process exit once nobody reads stdin any more.
      input.pause()
    })
  })

  const incoming = chunks.pipe(
    Stream.mapChunksEffect((batch) => {
      const lines: Array<string> = []
      const oversize = decoder.pushAll(batch, lines)
      return oversize === undefined
        ? parse(lines)
        : Effect.fail(McpError.make(CLIENT, new McpError.LimitReason({ what: "a message", size: oversize.oversize, limit: decoder.maxBytes })))
    }),
    Stream.concat(Stream.flattenChunks(Stream.fromEffect(Effect.suspend(() => {
      const lines: Array<string> = []
      decoder.flush(lines)
      return parse(lines)
    })))),
    Stream.ensuring(Effect.sync(() => {
      closed = true
    }))
  )

  return { server: CLIENT, kind: "stdio", send: write, incoming, info: () => ({ pid: process.pid }) }
}
