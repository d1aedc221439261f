// `perPrincipal: true` on a cluster, against the machine's PostgreSQL: three runners and two
// gateway replicas (OAuth resource servers) in this process. Each principal (the token's
// subject) reaches its own instance — its own process, with its own credentials from the
// token store in PostgreSQL — through either replica, and never another's; the replicas and
// `servers --cluster --json` show the instances per principal; an idle instance ends (its
// process, its row) and starts again on the next call.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as cp from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ClusterRegistry } from "../../src/cluster/index.js"
import { instanceId, parseInstanceId } from "../../src/internal/cluster/instance.js"
import * as McpClient from "../../src/McpClient.js"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import * as StreamableHttp from "../../src/StreamableHttp.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
// @ts-expect-error: a JavaScript fixture without types
import { start } from "../fixtures/oauth-server.mjs"
import { CLI, cliEnv, MARK } from "../support/cli.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"
import { type FreshDatabase, freshDatabase, query } from "../support/postgres.js"
import { procState, survivors } from "../support/processes.js"

const MARKER = "MCP_FLEET_CLUSTER_PRINCIPAL_RUN"
const RUN_ID = `${process.pid}-${Date.now()}`
const whoami = fileURLToPath(new URL("../fixtures/whoami.mjs", import.meta.url))
// Long enough for the calls of one principal to meet its instance alive on a loaded machine.
const IDLE = `${hangGuard(3_000)} millis` as const
const spec = {
  ...fixtureSpec("mine", whoami, { env: { [MARKER]: RUN_ID } }),
  perPrincipal: true,
  idleTimeout: IDLE
} as const

interface AuthServer {
  readonly base: string
  readonly tokens: { readonly jwt: (claims: Record<string, unknown>) => string }
  readonly close: () => Promise<void>
}

let db: FreshDatabase
let dir: string

beforeAll(async () => {
  db = await freshDatabase()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-cluster-principal-"))
}, hangGuard(30_000))

afterAll(async () => {
  await db?.drop()
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
}, hangGuard(30_000))

const whoIs = (result: { readonly content?: ReadonlyArray<unknown> | undefined }) =>
  JSON.parse(firstText(result)) as { readonly pid: number; readonly token: string | null }

// Repeats `effect` until `done` and returns its value; on timeout, fails naming `what` and the last value seen.
const until = <A>(what: string, effect: Effect.Effect<A, unknown>, done: (value: A) => boolean) => {
  let last: A | undefined
  return effect.pipe(
    Effect.tap((value) => Effect.sync(() => last = value)),
    Effect.repeat({ until: done, schedule: Schedule.spaced("100 millis") }),
    Effect.map(() => last!),
    Effect.timeoutFail({
      duration: hangGuard(30_000),
      onTimeout: () => new Error(`${what}: still ${JSON.stringify(last, (_, v) => v instanceof Map ? [...v] : v)}`)
    })
  )
}

// A runner of this process: hosts entities; an instance idles out as its process does.
const runner = (url: string) =>
  ClusterRegistry.make({ url, runner: { port: 0 }, servers: [spec], instanceIdleTime: IDLE })

// A gateway replica: the fleet's config, no entity, the Policy and an OAuth-guarded endpoint.
const gateway = (url: string, issuer: string) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      Policy.layer({}).pipe(Layer.provideMerge(ClusterRegistry.layer({ url, servers: [spec] })))
    )
    const endpoint = yield* NodeGateway.serveHttp({ port: 0, oauth: { issuer } }).pipe(Effect.provide(context))
    return { endpoint, registry: Context.get(context, ServerRegistry.ServerRegistry) }
  })

// The instances a replica shows for `mine`, by principal.
const instancesOf = (registry: ServerRegistry.ServerRegistry) =>
  Effect.map(
    registry.status,
    (statuses) =>
      new Map(
        (statuses.find((status) => status.name === "mine")?.instances ?? []).map((
          instance
        ) => [instance.principal, instance])
      )
  )

// `servers --cluster --json` as printed by the CLI, which must exit by itself.
const serversJson = (url: string) =>
  new Promise<Array<{ name: string; instances?: Array<{ principal: string; runner: string }> }>>(
    (resolve, reject) => {
      const config = path.join(dir, "mcp.json")
      fs.writeFileSync(
        config,
        JSON.stringify({
          mcpServers: {
            mine: { command: process.execPath, args: [whoami], env: { [MARKER]: RUN_ID }, perPrincipal: true }
          }
        })
      )
      const child = cp.spawn(CLI[0], [...CLI.slice(1), "servers", "--cluster", url, "--config", config, "--json"], {
        cwd: dir,
        env: { ...process.env, ...cliEnv(), [MARK]: "cluster-principal", NO_COLOR: "1" },
        stdio: "pipe"
      })
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout += chunk)
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk)
      child.on(
        "exit",
        (code) => code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`exit ${code}: ${stderr}`))
      )
      child.on("error", reject)
    }
  )

describe("per-principal instances on a cluster", () => {
  it("an instance's entity id names one (server, principal) pair", () => {
    const pairs: Array<[string, string]> = [["a#b", "c"], ["a", "b#c"], ["a", "Yg"], ["a#Yg", ""], ["mine", "ä/💡"]]
    const ids = pairs.map(([server, principal]) => instanceId(server, principal))
    expect(new Set(ids).size).toBe(pairs.length)
    expect(ids.map(parseInstanceId)).toEqual(pairs.map(([server, principal]) => ({ server, principal })))
  })

  it.live(
    "each principal its own instance and credentials through either replica; none reaches another's; idle ones end",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const as = yield* Effect.acquireRelease(
          Effect.promise(() => start({}) as Promise<AuthServer>),
          (server) => Effect.promise(() => server.close())
        )
        // One runner after another: the first creates the tables the token store is in.
        const runners = [yield* runner(db.url), yield* runner(db.url), yield* runner(db.url)]
        const addresses = runners.map((joined) => joined.cluster.runner!)
        yield* Effect.promise(() =>
          query(
            db.url,
            `INSERT INTO mcp_fleet_credentials (server, principal, credentials) VALUES
            ('mine', 'alice', '{"UPSTREAM_TOKEN": "alice-upstream-token"}'),
            ('mine', 'bob', '{"UPSTREAM_TOKEN": "bob-upstream-token"}')`
          )
        )
        const [one, two] = [yield* gateway(db.url, as.base), yield* gateway(db.url, as.base)]
        yield* one.registry.awaitReady({ servers: ["mine"], timeout: hangGuard(30_000) })
        yield* two.registry.awaitReady({ servers: ["mine"], timeout: hangGuard(30_000) })

        // A client of a replica with `subject`'s access token.
        const clientOf = (replica: { readonly endpoint: string }, subject: string) =>
          Effect.flatMap(
            StreamableHttp.make({
              name: "gateway",
              url: replica.endpoint,
              headers: {
                authorization: Redacted.make(`Bearer ${as.tokens.jwt({ aud: replica.endpoint, sub: subject })}`)
              }
            }),
            (transport) => McpClient.make().pipe(Effect.provideService(Transport, transport))
          )
        const aliceOne = yield* clientOf(one, "alice")
        const aliceTwo = yield* clientOf(two, "alice")
        const bobTwo = yield* clientOf(two, "bob")
        const carolOne = yield* clientOf(one, "carol")
        const call = (client: McpClient.McpClient) => Effect.map(client.callTool("mcp__mine__whoami", {}), whoIs)

        expect((yield* aliceOne.listTools()).map((tool) => tool.name)).toEqual(["mcp__mine__whoami"])
        const a1 = yield* call(aliceOne)
        const b1 = yield* call(bobTwo)
        const a2 = yield* call(aliceTwo)
        expect(a1).toEqual({ pid: a2.pid, token: "alice-upstream-token" })
        expect(b1.token).toBe("bob-upstream-token")
        expect(b1.pid).not.toBe(a1.pid)

        // A principal the token store has no credentials for gets no instance.
        const none = yield* carolOne.callTool("mcp__mine__whoami", {})
        expect(none.isError).toBe(true)
        expect(firstText(none)).toBe("server 'mine': has no credentials for this principal in the token store")

        // Without a principal (not through the OAuth gateway), the call is refused.
        const anonymous = failure(yield* Effect.exit(one.registry.callServerTool("mine", "whoami", {})))
        expect(anonymous.message).toContain("runs one instance per principal")

        // Every replica, and the CLI, shows the instances by principal and runner.
        const shown = yield* until(
          "both instances shown",
          instancesOf(two.registry),
          (instances) => instances.size === 2
        )
        expect([...shown.keys()].sort()).toEqual(["alice", "bob"])
        for (const instance of shown.values()) expect(addresses).toContain(instance.runner)
        // The CLI takes seconds to start: both principals keep their instances busy meanwhile.
        const busy = yield* Effect.fork(
          Effect.repeat(Effect.zip(call(aliceOne), call(bobTwo)), Schedule.spaced("500 millis"))
        )
        const printed = yield* Effect.promise(() => serversJson(db.url))
        yield* Fiber.interrupt(busy)
        const mine = printed.find((server) => server.name === "mine")!
        expect(mine.instances?.map((instance) => instance.principal).sort(), JSON.stringify(mine)).toEqual([
          "alice",
          "bob"
        ])

        // Idle, alice's instance ends: its process, and its row on every replica.
        yield* until(
          "alice's instance ended",
          Effect.zip(Effect.sync(() => procState(a1.pid)), instancesOf(one.registry)),
          ([state, instances]) => state !== "alive" && !instances.has("alice")
        )
        const a3 = yield* call(aliceOne)
        expect(a3.pid).not.toBe(a1.pid)
        expect(a3.token).toBe("alice-upstream-token")
      })).pipe(
        Effect.provide(Platform),
        Effect.zipRight(Effect.sync(() => expect(survivors(MARKER, RUN_ID)).toEqual([])))
      ),
    hangGuard(180_000)
  )
})
