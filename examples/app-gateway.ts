/**
 * An app's own tools plus every server in its config, as one MCP server: two tools written
 * here with `McpServer.tool` (Effect Schema parameters, decoded before the handler runs) and
 * a fleet from an embedded config (server-everything and server-memory, from this
 * package's node_modules), served over Streamable HTTP on 127.0.0.1. Clients list the app's
 * tools under their own names and the fleet's as `mcp__<server>__<tool>`; the fleet's calls
 * go through the Policy, the app's run here.
 *
 * Run it with `npx tsx examples/app-gateway.ts`, then point an MCP client at the URL it prints.
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { FleetConfig, type McpError, McpServer, Policy, ServerRegistry } from "../src/index.js"
import { NodeFleet } from "../src/node/index.js"
import * as NodeGateway from "../src/NodeGateway.js"

const require = createRequire(import.meta.url)
const entry = (name: string) =>
  path.join(path.dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), "dist", "index.js")

/** The fleet, as a config file would give it. */
export const config = JSON.stringify({
  mcpServers: {
    everything: { command: process.execPath, args: [entry("server-everything"), "stdio"] },
    memory: {
      command: process.execPath,
      args: [entry("server-memory")],
      env: { MEMORY_FILE_PATH: path.join(os.tmpdir(), `mcp-fleet-app-gateway-${process.pid}.jsonl`) }
    }
  }
})

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })

/** The app's own tools. */
export const tools: ReadonlyArray<McpServer.ToolItem> = [
  McpServer.tool({
    name: "word_count",
    description: "Counts the words of a text",
    parameters: Schema.Struct({ text: Schema.String }),
    handler: ({ text: given }) => Effect.succeed(text(String(given.split(/\s+/).filter((w) => w !== "").length)))
  }),
  McpServer.tool({
    name: "dice",
    description: "Rolls n dice of the given number of sides, reporting each roll as progress",
    parameters: Schema.Struct({
      n: Schema.Int.pipe(Schema.between(1, 20)),
      sides: Schema.optionalWith(Schema.Int.pipe(Schema.between(2, 100)), { default: () => 6 })
    }),
    handler: ({ n, sides }, ctx) =>
      Effect.gen(function*() {
        const rolls: Array<number> = []
        for (let i = 1; i <= n; i++) {
          rolls.push(1 + Math.floor(Math.random() * sides))
          yield* ctx.progress(i, n)
        }
        return text(rolls.join(" "))
      })
  })
]

/** The fleet of `config`, and the Policy (no rules) its tool calls go through. */
export const Fleet: Layer.Layer<ServerRegistry.ServerRegistry | Policy.Policy> = Layer.unwrapEffect(
  Effect.map(
    Effect.orDie(FleetConfig.parse(config, "app-gateway (embedded)")),
    (servers) => Policy.layer().pipe(Layer.provideMerge(ServerRegistry.layer({ servers })))
  )
).pipe(Layer.provide(NodeFleet.layer))

/** Serves the app's tools and the fleet's over HTTP until the Scope closes; returns the URL. */
export const serve = (
  port = 0
): Effect.Effect<string, McpError.McpError, ServerRegistry.ServerRegistry | Policy.Policy | Scope.Scope> =>
  NodeGateway.serveHttp({ port, tools, serverInfo: { name: "app-gateway", version: "1.0.0" } })

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const main = Effect.gen(function*() {
    const url = yield* serve(Number(process.env.PORT ?? 3000))
    yield* Effect.logInfo(`app tools and the fleet on ${url}`)
    return yield* Effect.never
  })
  NodeRuntime.runMain(main.pipe(Effect.scoped, Effect.provide(Fleet)))
}
