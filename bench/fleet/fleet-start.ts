/**
 * mcp-fleet's side of the fleet start benchmark: a ServerRegistry starts K echo servers
 * over stdio at once; the time runs until every one is Ready (initialized, tools listed).
 * Prints one JSON line: { ms, rssMB } at that moment.
 *
 * @module
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { ServerRegistry } from "../../src/index.js"
import { NodeFleet } from "../../src/node/index.js"

const K = Number(process.argv[2])
const server = fileURLToPath(new URL("../fixtures/echo-server.mjs", import.meta.url))
const names = Array.from({ length: K }, (_, i) => `echo${i}`)

const program = Effect.gen(function*() {
  const fleet = yield* ServerRegistry.make()
  const began = performance.now()
  yield* fleet.reconcile(names.map((name) => ({
    name,
    transport: { type: "stdio" as const, command: process.execPath, args: [server] }
  })))
  yield* fleet.awaitReady({ servers: names, timeout: "120 seconds" })
  const ms = performance.now() - began
  const rssMB = process.memoryUsage().rss / 1024 / 1024
  return { ms, rssMB }
}).pipe(Effect.scoped, Effect.provide(NodeFleet.layer))

NodeRuntime.runMain(Effect.map(program, (result) => console.log(JSON.stringify(result))))
