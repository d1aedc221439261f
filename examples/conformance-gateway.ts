/**
 * The gateway the official MCP conformance suite tests in server mode (`npm run
 * conformance`): a fleet of one server, our conformance fixture
 * (`test/fixtures/conformance-stdio.ts`, named `fixture`, which the fleet speaks 2026-07-28
 * to) as a stdio child, served over
 * Streamable HTTP on 127.0.0.1 with plain naming, so the suite calls the fixture's tools
 * and prompts by their own names (`test_simple_text`). It prints `listening on <url>` once
 * the server is ready and runs until interrupted.
 *
 *   node --import tsx examples/conformance-gateway.ts [--port 3001]
 *
 * @module
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { fileURLToPath } from "node:url"
import * as Gateway from "../src/Gateway.js"
import * as NodeFleet from "../src/NodeFleet.js"
import * as NodeGateway from "../src/NodeGateway.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"

const argv = process.argv.slice(2)
const port = Number(argv[argv.indexOf("--port") + 1] ?? 0) || 0
const fixture = fileURLToPath(new URL("../test/fixtures/conformance-stdio.ts", import.meta.url))

const fleet = Policy.layer({}).pipe(
  Layer.provideMerge(ServerRegistry.layer({
    servers: [{
      name: "fixture",
      transport: { type: "stdio", command: process.execPath, args: ["--import", "tsx", fixture] },
      required: true
    }]
  })),
  // The gateway is the fleet's host: the fixture's sampling, elicitation and roots requests
  // go to the suite's client whose call the fixture is serving, under the fixture's keys.
  Layer.provideMerge(Gateway.layerHost()),
  Layer.provide(NodeFleet.layer)
)

const program = Effect.gen(function*() {
  const registry = yield* ServerRegistry.ServerRegistry
  yield* registry.awaitReady({ timeout: "60 seconds" })
  const url = yield* NodeGateway.serveHttp({ port, naming: "plain", modern: true })
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
