// `@modelcontextprotocol/server-everything` in its HTTP modes, on a free port of 127.0.0.1,
// ended (and waited for) when the Scope closes.
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as cp from "node:child_process"
import * as net from "node:net"
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
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        cp.spawn(process.execPath, [EVERYTHING, mode], {
          env: { ...process.env, PORT: String(port) },
          stdio: ["ignore", "ignore", "pipe"]
        })
      ),
      (child) =>
        Effect.async<void>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
          child.kill("SIGTERM")
        })
    )
    yield* Effect.async<void, Error>((resume) => {
      let seen = ""
      child.stderr!.on("data", (chunk: Buffer) => {
        seen += chunk.toString()
        if (/listening on port|running on port/i.test(seen)) resume(Effect.void)
      })
      child.once(
        "exit",
        (code) => resume(Effect.fail(new Error(`server-everything ${mode} exited (${code}): ${seen}`)))
      )
    })
    return `http://127.0.0.1:${port}/${mode === "sse" ? "sse" : "mcp"}`
  })
