// The cluster in one process, against the real PostgreSQL: a runner and a gateway replica,
// each its own ClusterRegistry layer with its own connections, and one call end to end.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ClusterRegistry } from "../../src/cluster/index.js"
import * as NodeFleet from "../../src/NodeFleet.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { type FreshDatabase, freshDatabase } from "../support/postgres.js"

const LEDGER_SCRIPT = fileURLToPath(new URL("../fixtures/cluster-ledger.mjs", import.meta.url))

let db: FreshDatabase
let dir: string
beforeAll(async () => {
  db = await freshDatabase()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-cluster-"))
})
afterAll(async () => {
  await db?.drop()
  fs.rmSync(dir, { recursive: true, force: true })
})

const specs = () =>
  ["alpha", "beta"].map((name) =>
    fixtureSpec(name, LEDGER_SCRIPT, { env: { SERVER_NAME: name, LEDGER: path.join(dir, "ledger.txt") } })
  )

const registryOf = (options: Omit<ClusterRegistry.Options, "url">) =>
  Effect.map(
    Layer.build(ClusterRegistry.layer({ url: db.url, ...options }).pipe(Layer.provide(NodeFleet.layer))),
    (context) => ({
      registry: context.unsafeMap.get(ServerRegistry.ServerRegistry.key) as ServerRegistry.ServerRegistry
    })
  )

describe("ClusterRegistry", () => {
  it.scopedLive("a call through a gateway replica runs on the runner hosting the server", () =>
    Effect.gen(function*() {
      const runner = yield* registryOf({ servers: specs(), runner: {} })
      const gateway = yield* registryOf({ servers: specs() })
      yield* gateway.registry.awaitReady({ servers: ["alpha", "beta"], timeout: "30 seconds" })
      const result = yield* gateway.registry.callTool("mcp__alpha__record", { id: "c1" })
      const text = JSON.parse((result.content[0] as { text: string }).text)
      expect(text).toMatchObject({ server: "alpha", tool: "record", id: "c1", runner: process.pid })
      const catalog = yield* gateway.registry.catalog.get
      expect(catalog.tools.map((tool) => tool.name).sort()).toEqual([
        "mcp__alpha__lookup",
        "mcp__alpha__record",
        "mcp__beta__lookup",
        "mcp__beta__record"
      ])
      expect(fs.readFileSync(path.join(dir, "ledger.txt"), "utf8").trim().split("\n")).toHaveLength(1)
      void runner
    }), 60_000)
})
