/**
 * mcp-fleet's side of the fleet start benchmark: a ServerRegistry starts K echo servers
 * over stdio at once; the time runs until every one is Ready (initialized, tools listed).
 * Prints one JSON line: { ms, rssMB } at that moment, and what each server added to the
 * client's memory (`perServer`, see `memory.ts`: K more servers once the K are ready).
 *
 * @module
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { ServerRegistry } from "../../src/index.js"
import { NodeFleet } from "../../src/node/index.js"
import { memory, perServer } from "./memory.js"

const K = Number(process.argv[2])
const server = fileURLToPath(new URL("../fixtures/echo-server.mjs", import.meta.url))
const names = Array.from({ length: 2 * K }, (_, i) => `echo${i}`)
const specs = (count: number) =>
  names.slice(0, count).map((name) => ({
    name,
    transport: { type: "stdio" as const, command: process.execPath, args: [server] }
  }))

const program = Effect.gen(function*() {
  const fleet = yield* ServerRegistry.make()
  const began = performance.now()
  yield* fleet.reconcile(specs(K))
  yield* fleet.awaitReady({ servers: names.slice(0, K), timeout: "120 seconds" })
  const ms = performance.now() - began
  const rssMB = process.memoryUsage().rss / 1024 / 1024
  // K more, with every code path warm: what a server costs, not what the first one compiled.
  const before = memory()
  yield* fleet.reconcile(specs(2 * K))
  yield* fleet.awaitReady({ servers: names, timeout: "120 seconds" })
  return { ms, rssMB, perServer: perServer(before, memory(), K) }
}).pipe(Effect.scoped, Effect.provide(NodeFleet.layer))

NodeRuntime.runMain(Effect.map(program, (result) => console.log(JSON.stringify(result))))
