import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { FleetConfig, ServerRegistry, ToolSearch } from "mcp-fleet"
import { NodeEmbedder, NodeFleet } from "mcp-fleet/node"

const program = Effect.gen(function*() {
  const fleet = yield* ServerRegistry.ServerRegistry
  yield* fleet.awaitReady({ servers: "settled" })
  const search = yield* ToolSearch.ToolSearch
  const hits = yield* search.search("post to the team channel", { limit: 3 })
  for (const hit of hits) console.log(hit.score.toFixed(3), hit.name, hit.tool.description)
})

const Fleet = FleetConfig.layerWithPolicy({ paths: [".mcp.json"] }).pipe(
  Layer.provideMerge(ServerRegistry.layer()),
  Layer.provide(NodeFleet.layer)
)
// Hybrid when the model's packages are installed, else by words alone; vectors kept in ./embeddings.
const Search = NodeEmbedder.layerSearch("embeddings").pipe(
  Layer.provideMerge(Fleet),
  Layer.provide(NodeFleet.layer)
)
NodeRuntime.runMain(program.pipe(Effect.provide(Search)))
