import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { FleetConfig, ServerRegistry } from "mcp-fleet"
import { NodeDashboard, NodeFleet } from "mcp-fleet/node"

const program = Effect.gen(function*() {
  const { url } = yield* NodeDashboard.serve({ port: 0 }) // 127.0.0.1, a free port
  yield* Console.log(`open ${url}`) // http://127.0.0.1:PORT/?token=…
  return yield* Effect.never
})

const Fleet = FleetConfig.layerWithPolicy({ paths: [".mcp.json"] }).pipe( // the files' policy too
  Layer.provideMerge(ServerRegistry.layer()),
  Layer.provide(NodeFleet.layer)
)
NodeRuntime.runMain(program.pipe(Effect.scoped, Effect.provide(Fleet)))
