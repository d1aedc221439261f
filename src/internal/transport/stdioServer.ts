/**
 * The server side of stdio (`Stdio.makeServer`): this process's own stdin and stdout (or any pair of Node
 * streams) as a Transport, newline-delimited JSON-RPC both ways.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import type { Readable, Writable } from "node:stream"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpError from "../../McpError.js"
import { Inbox, sendWith, type Transport } from "../../Transport.js"
import * as Ndjson from "./ndjson.js"

/** Who the transport's messages come from, in errors and logs. */
const CLIENT = "stdio client"

/**
 * A Transport reading messages from `input` and writing them to `output`, owned by the
 * current Scope. Lines that are not JSON-RPC are answered with a JSON-RPC error (id null)
 * and logged; the connection ends when `input` ends.
 */
export const make = (
  input: Readable,
  output: Writable,
  maxMessageBytes = JsonRpc.DEFAULT_MAX_MESSAGE_BYTES
): Effect.Effect<Transport, never, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const inbox = new Inbox(CLIENT)
    const writer = new Ndjson.LineWriter((text) => output.write(text))
    const writable = () => inbox.open && !output.destroyed && !output.writableEnded

    const stopReading = Ndjson.read(input, inbox, {
      maxMessageBytes,
      onBad: (bad) => {
        for (const line of bad) {
          if (!writable()) break
          writer.push({
            jsonrpc: "2.0",
            id: null,
            error: {
              code: line.reason === "not JSON" ? JsonRpc.ErrorCode.ParseError : JsonRpc.ErrorCode.InvalidRequest,
              message: line.reason
            }
          })
        }
        Runtime.runFork(runtime)(JsonRpc.logSkipped(CLIENT, "wrote a line", bad))
      },
      onEnd: (error) => inbox.end(error ?? McpError.closed(CLIENT, { message: "stdin ended" }))
    })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        writer.flush()
        stopReading()
        inbox.end(McpError.closed(CLIENT, { message: "the connection was closed" }))
        // Let the process exit once nobody reads stdin any more.
        input.pause()
      })
    )

    const sendNow = (message: JsonRpc.Message): McpError.McpError | undefined => {
      if (!writable()) return McpError.closed(CLIENT, { message: "stdout is closed" })
      writer.push(message)
    }
    return {
      server: CLIENT,
      kind: "stdio",
      send: sendWith(sendNow),
      sendNow,
      listen: inbox.listen,
      info: () => ({ pid: process.pid })
    }
  })
