/**
 * For the tests of per-principal servers (`perPrincipal: true`): the OAuth authorization
 * server of test/fixtures/oauth-server.mjs for the Scope, a gateway client with a subject's
 * access token, the whoami-reads fixture and what it answers, and a task of alice's followed
 * by its id.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { fileURLToPath } from "node:url"
import * as McpClient from "../../src/McpClient.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import * as StreamableHttp from "../../src/StreamableHttp.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import { hangGuard } from "./guard.js"
// @ts-expect-error: a JavaScript fixture without types
import { start } from "../fixtures/oauth-server.mjs"

/** The authorization server: its issuer URL and the tokens it signs. */
export interface AuthServer {
  readonly base: string
  readonly tokens: { readonly jwt: (claims: Record<string, unknown>) => string }
  readonly close: () => Promise<void>
}

/** An authorization server, closed with the Scope. */
export const authServer = Effect.acquireRelease(
  Effect.promise(() => start({}) as Promise<AuthServer>),
  (server) => Effect.promise(() => server.close())
)

/** A client of the gateway at `url` with `subject`'s access token. */
export const gatewayClient = (as: AuthServer, url: string, subject: string) =>
  Effect.flatMap(
    StreamableHttp.make({
      name: "gateway",
      url,
      headers: { authorization: Redacted.make(`Bearer ${as.tokens.jwt({ aud: url, sub: subject })}`) }
    }),
    (transport) => McpClient.make().pipe(Effect.provideService(Transport, transport))
  )

/** A server answering a call, a read, a prompt and a completion with its pid and UPSTREAM_TOKEN. */
export const WHOAMI_READS = fileURLToPath(new URL("../fixtures/whoami-reads.mjs", import.meta.url))

/** Which instance a request reached, and with whose credentials. */
export interface Who {
  readonly pid: number
  readonly token: string | null
}

/** What the whoami fixtures answer, parsed. */
export const parsed = (text: string | undefined) => JSON.parse(text ?? "null") as Who

/** Every principal's credential: `<principal>-upstream-token`. */
export const upstreamCredentials: ServerRegistry.PrincipalCredentials = (_server, principal) =>
  Effect.succeed({ UPSTREAM_TOKEN: Redacted.make(`${principal}-upstream-token`) })

/**
 * A fleet of one per-principal whoami-reads server, `mine` (its processes given `env`),
 * ready; and the context a gateway over it needs (the registry and an empty Policy).
 */
export const mineFleet = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const fleet = yield* ServerRegistry.make({ principalCredentials: upstreamCredentials })
    const context = yield* Layer.build(
      Layer.provideMerge(Policy.layer({}), Layer.succeed(ServerRegistry.ServerRegistry, fleet))
    )
    yield* fleet.reconcile([{ ...fixtureSpec("mine", WHOAMI_READS, { env }), perPrincipal: true }])
    yield* fleet.awaitReady({ servers: ["mine"], timeout: hangGuard(20_000) })
    return { fleet, context }
  })

/**
 * A task of alice's (`simulate-research-query` of the per-principal `everything` server),
 * followed by its id through `registry`: refused without a principal, unknown to bob's own
 * instance, and followed at alice's to the call's own result.
 */
export const followedByItsPrincipal = (registry: ServerRegistry.ServerRegistry) =>
  Effect.gen(function*() {
    const started = yield* Effect.makeLatch()
    let taskId: string | undefined
    const call = yield* registry.callServerTool("everything", "simulate-research-query", { topic: "tides" }, {
      principal: "alice",
      onTask: (task) => Effect.zipRight(Effect.sync(() => taskId ??= task.taskId), started.open)
    }).pipe(Effect.fork)
    yield* started.await
    const anonymous = failure(yield* Effect.exit(registry.followTask("everything", taskId!)))
    expect(anonymous.message).toContain("runs one instance per principal")
    const bobs = failure(yield* Effect.exit(registry.followTask("everything", taskId!, { principal: "bob" })))
    expect(bobs.message).toContain(`task '${taskId}' is unknown`)
    const result = yield* registry.followTask("everything", taskId!, { principal: "alice" })
    expect(firstText(result)).toContain("tides")
    expect(result).toEqual(yield* Fiber.join(call))
  })
