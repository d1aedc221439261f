// The gateway end to end: a temp config file fronting the slow fixture and
// server-everything, the gateway in-process over HTTP or as a child on stdio, and the
// official SDK client.
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as FleetConfig from "../../src/FleetConfig.js"
import * as Gateway from "../../src/Gateway.js"
import * as NodeFleet from "../../src/NodeFleet.js"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { server } from "./bundle.js"
import { hangGuard } from "./guard.js"

// server-everything on stdio, exiting when its stdin ends (so a gateway's stop does not wait
// out its grace period); not taken from everythingSuite.ts, which needs vitest running, so
// that scripts can use these helpers too.
const EVERYTHING = server("everythingStdio")

export const SLOW = fileURLToPath(new URL("../fixtures/gateway-slow.mjs", import.meta.url))

// The tests' servers inherit the whole environment, so the marker a test gives the gateway
// reaches them and their survivors can be found.

/** A config entry running the slow fixture under `name`. */
export const slowServer = (name: string) => ({ command: process.execPath, args: [SLOW, name], inheritEnv: true })

/** The config entry of server-everything on stdio. */
export const everythingServer = { command: process.execPath, args: [EVERYTHING, "stdio"], inheritEnv: true }

/** A temp config file with `servers`; `write` replaces its servers (a hot-reload edit). */
export const tempConfig = (servers: Record<string, unknown>) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-gateway-"))
  const file = path.join(dir, "mcp.json")
  const write = (next: Record<string, unknown>) => fs.writeFileSync(file, JSON.stringify({ mcpServers: next }, null, 2))
  write(servers)
  return { dir, file, write, remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

/** A client of the SDK, named for the test. */
export const sdkClient = () => new Client({ name: "gateway-test", version: "1.0.0" })

/** The process ids of the fleet's servers, from the registry's status. */
export type Pids = () => Promise<Array<number>>

/**
 * Runs the gateway over HTTP in this process on a free port, fronting the config file;
 * with `clientHost`, as the fleet's host (`Gateway.layerHost`), under the `policy` given.
 * `close` ends it and its servers.
 */
export const httpGateway = async (
  file: string,
  options: Omit<NodeGateway.HttpOptions, "port"> & { readonly port?: number } = {},
  extras: {
    readonly clientHost?: boolean
    readonly policy?: Policy.Config
    /** How the fleet presents itself to its servers (a slow-starting fixture's `discoverTimeout`). */
    readonly client?: ServerRegistry.ClientOptions
  } = {}
) => {
  const scope = Effect.runSync(Scope.make())
  const fleet = Policy.layer(extras.policy ?? {}).pipe(
    Layer.provideMerge(ServerRegistry.layer(extras.client === undefined ? {} : { client: extras.client })),
    Layer.provideMerge(extras.clientHost === true ? Gateway.layerHost() : Layer.empty),
    Layer.provide(NodeFleet.layer)
  )
  const context = await Effect.runPromise(
    Layer.buildWithScope(Layer.merge(fleet, NodeContext.layer), scope).pipe(
      Logger.withMinimumLogLevel(LogLevel.Warning)
    )
  )
  const url = await Effect.runPromise(
    Effect.gen(function*() {
      yield* FleetConfig.sync({ paths: [file], debounce: "50 millis" })
      const registry = yield* ServerRegistry.ServerRegistry
      yield* registry.awaitReady({ servers: "settled", timeout: hangGuard(60_000) })
      return yield* NodeGateway.serveHttp({ port: 0, ...options })
    }).pipe(Scope.extend(scope), Effect.provide(context), Logger.withMinimumLogLevel(LogLevel.Warning))
  )
  const pids: Pids = () =>
    Effect.runPromise(
      Effect.map(
        ServerRegistry.ServerRegistry.pipe(Effect.flatMap((registry) => registry.status)),
        (status) =>
          status.flatMap((server) => typeof server.connection?.pid === "number" ? [server.connection.pid] : [])
      ).pipe(Effect.provide(context))
    )
  return { url, pids, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** Waits for `predicate` to hold (see support/eventually.ts, which loads none of src/). */
export { eventually } from "./eventually.js"
