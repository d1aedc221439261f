// `@modelcontextprotocol/server-everything` in its HTTP modes, on a free port of 127.0.0.1,
// ended (and waited for) when the Scope closes.
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as net from "node:net"
import { spawn } from "../../src/testing/node.js"
import { EVERYTHING } from "./everythingSuite.js"

const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Starts the server; resolves with its MCP URL once it listens. */
export const everything = (mode: "streamableHttp" | "sse"): Effect.Effect<string, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const port = yield* freePort
    const server = yield* spawn(EVERYTHING, { args: [mode], env: { PORT: String(port) } })
    yield* server.waitFor("stderr", /listening on port|running on port/i)
    return `http://127.0.0.1:${port}/${mode === "sse" ? "sse" : "mcp"}`
  })
