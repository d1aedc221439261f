/**
 * `tools --search "<query>"`: the fleet's tools best matching a query (ToolSearch), hybrid
 * when the default embedding model is installed (its vectors cached in the user config
 * dir's `embeddings/`), else by words alone.
 *
 * @since 0.4.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as NodePath from "node:path"
import * as NodeEmbedder from "../../NodeEmbedder.js"
import * as Policy from "../../Policy.js"
import * as ServerRegistry from "../../ServerRegistry.js"
import * as ToolSearch from "../../ToolSearch.js"
import type * as Fleet from "../Fleet.js"
import * as Render from "../Render.js"
import type * as Settings from "../Settings.js"
import * as TerminalPolicy from "../TerminalPolicy.js"

/**
 * Where the CLI keeps embeddings: `embeddings/` in the user config dir.
 *
 * @since 0.4.0
 */
export const embeddingsDir = (settings: Settings.Settings): string => NodePath.join(settings.configDir, "embeddings")

const hitJson = (ranking: string) => (hit: ToolSearch.ToolHit) => ({
  name: hit.name,
  score: Math.round(hit.score * 1e4) / 1e4,
  server: hit.server,
  tool: hit.tool.name,
  title: hit.tool.title ?? hit.tool.annotations?.title ?? null,
  description: hit.tool.description ?? null,
  ranking
})

/**
 * Searches the started fleet's tools (as the config's policy lets them through) and shows
 * the hits, best first: a JSON array with `--json`, else a table.
 *
 * @since 0.4.0
 */
export const show = (
  settings: Settings.Settings,
  started: Fleet.Started,
  query: string,
  limit: number
): Effect.Effect<void, never, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const policy = yield* TerminalPolicy.make(started, false)
    const search = yield* ToolSearch.ToolSearch.pipe(
      Effect.provide(
        NodeEmbedder.layerSearch(embeddingsDir(settings)).pipe(
          Layer.provide(Layer.succeed(ServerRegistry.ServerRegistry, started.registry)),
          Layer.provide(Layer.succeed(Policy.Policy, policy))
        )
      )
    )
    const hits = yield* search.search(query, { limit })
    const ranking = search.semantic ? "hybrid" : "lexical"
    if (settings.json) return yield* Render.json(hits.map(hitJson(ranking)))
    yield* Render.lines(Render.table([
      ["name", "score", "description"],
      ...hits.map((hit) => [hit.name, hit.score.toFixed(3), Render.clip(hit.tool.description, 70)])
    ]))
    yield* Render.note(
      `${hits.length} tool${hits.length === 1 ? "" : "s"} for '${query}', ranked ${
        search.semantic
          ? "by words and meaning"
          : `by words alone (install ${NodeEmbedder.PACKAGES.join(", ")} to rank by meaning too)`
      }`
    )
  })
