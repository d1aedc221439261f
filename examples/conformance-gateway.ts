/**
 * The gateway the official MCP conformance suite tests in server mode (`npm run
 * conformance`): a fleet of one server, `@modelcontextprotocol/server-everything` on stdio
 * (named `everything`), served over Streamable HTTP on 127.0.0.1. It prints
 * `listening on <url>` once the server is ready and runs until interrupted.
 *
 *   node --import tsx examples/conformance-gateway.ts [--port 3001]
 *
 * @module
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { createRequire } from "node:module"
import * as path from "node:path"
import * as Gateway from "../src/Gateway.js"
import * as HttpClientUndici from "../src/HttpClientUndici.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"

const argv = process.argv.slice(2)
const port = Number(argv[argv.indexOf("--port") + 1] ?? 0) || 0
const everything = path.join(
  path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js"
)

const fleet = Policy.layer({}).pipe(
  Layer.provideMerge(ServerRegistry.layer({
    servers: [{
      name: "everything",
      transport: { type: "stdio", command: process.execPath, args: [everything, "stdio"] },
      required: true
    }]
  })),
  Layer.provide(Layer.merge(NodeContext.layer, HttpClientUndici.layer))
)

const program = Effect.gen(function*() {
  const registry = yield* ServerRegistry.ServerRegistry
  yield* registry.awaitReady({ timeout: "60 seconds" })
  const url = yield* Gateway.serveHttp({ port })
  // stdout carries only this line: the runner waits for it.
  process.stdout.write(`listening on ${url}\n`)
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  Effect.provide(fleet),
  // Logs go to stderr, as in stdio mode: stdout is for the line above.
  Effect.provide(Gateway.stdioLogger),
  Logger.withMinimumLogLevel(LogLevel.Warning)
)

NodeRuntime.runMain(program, { disablePrettyLogger: true })
