// Runners started at the same moment on a fresh database: each creates the cluster's tables
// (@effect/cluster's and the fleet's) when missing, so they race to create the same tables.
// Three runners (ClusterRegistry layers of this process, each with its own connections) are
// built at once; all must join and serve the fleet. Without the lock around the tables'
// creation this failed every time (a SqlError from a concurrent CREATE TABLE).
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ClusterRegistry } from "../../src/cluster/index.js"
import * as NodeFleet from "../../src/NodeFleet.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { LEDGER_SCRIPT } from "../support/cluster.js"
import { hangGuard } from "../support/guard.js"
import { type FreshDatabase, freshDatabase } from "../support/postgres.js"

const NAMES = ["s1", "s2", "s3"]
let db: FreshDatabase
let dir: string

beforeAll(async () => {
  db = await freshDatabase()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-cluster-startup-"))
}, hangGuard(30_000))

afterAll(async () => {
  await db?.drop()
  fs.rmSync(dir, { recursive: true, force: true })
}, hangGuard(30_000))

const specs = () =>
  NAMES.map((name) =>
    fixtureSpec(name, LEDGER_SCRIPT, { env: { SERVER_NAME: name, LEDGER: path.join(dir, "ledger.txt") } })
  )

const join = (options: Omit<ClusterRegistry.Options, "url">) =>
  Effect.map(
    Layer.build(ClusterRegistry.layer({ url: db.url, ...options }).pipe(Layer.provide(NodeFleet.layer))),
    (context) => Context.get(context, ClusterRegistry.Cluster)
  )

describe("runners started together", () => {
  it.scopedLive(
    "three runners joining a fresh database at once all join, and serve the fleet",
    () =>
      Effect.gen(function*() {
        const runners = yield* Effect.all([0, 1, 2].map(() => join({ servers: specs(), runner: {} })), {
          concurrency: "unbounded"
        })
        expect(new Set(runners.map((runner) => runner.runner)).size).toBe(3)
        const gateway = yield* Effect.map(
          Layer.build(ClusterRegistry.layer({ url: db.url, servers: specs() }).pipe(Layer.provide(NodeFleet.layer))),
          (context) => Context.get(context, ServerRegistry.ServerRegistry)
        )
        yield* gateway.awaitReady({ servers: NAMES, timeout: "60 seconds" })
        for (const name of NAMES) {
          const result = yield* gateway.callServerTool(name, "lookup", { id: `${name}-1` })
          expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({
            server: name,
            id: `${name}-1`
          })
        }
      }),
    hangGuard(120_000)
  )
})
