import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, SubscriptionRef } from "effect"
import { FleetConfig, ServerRegistry } from "mcp-fleet"
import { NodeFleet } from "mcp-fleet/node"

const program = Effect.gen(function*() {
  const fleet = yield* ServerRegistry.ServerRegistry
  yield* fleet.awaitReady({ servers: "settled" }) // each server ready or failed once
  const catalog = yield* SubscriptionRef.get(fleet.catalog)
  console.log(catalog.tools.map((entry) => entry.name)) // mcp__<server>__<tool>
  const result = yield* fleet.callTool("mcp__memory__read_graph", {}, { timeout: "30 seconds" })
  console.log(result.content) // waits for the server if it is restarting
})

const Fleet = FleetConfig.layer({ paths: [".mcp.json"] }).pipe( // hot reload: edits are reconciled
  Layer.provideMerge(ServerRegistry.layer({ restart: { maxAttempts: 10 } })),
  Layer.provide(NodeFleet.layer) // Node: processes, files, HTTP
)
NodeRuntime.runMain(program.pipe(Effect.provide(Fleet))) // closing ends every server's process tree
