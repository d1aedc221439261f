// `perPrincipal: true`: through the gateway as an OAuth resource server, each principal (the
// token's subject) reaches its own instance of a stdio server — its own process, started on
// its first call with its own credentials from the token store — and never another's; an
// idle instance stops its process and starts again on the next call. The fixture reports
// its pid and the credential it was started with.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { fileURLToPath } from "node:url"
import * as McpError from "../../src/McpError.js"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"
import { authServer, gatewayClient } from "../support/principals.js"
import { procState, survivors } from "../support/processes.js"

const MARKER = "MCP_FLEET_PER_PRINCIPAL_RUN"
const RUN_ID = `${process.pid}-${Date.now()}`
const whoami = fileURLToPath(new URL("../fixtures/whoami.mjs", import.meta.url))

// Each principal's upstream credential, as a token store keyed by principal holds it.
const store: Record<string, string> = { alice: "alice-upstream-token", bob: "bob-upstream-token" }
const credentials: ServerRegistry.PrincipalCredentials = (server, principal) =>
  Effect.succeed(
    server === "mine" && store[principal] !== undefined
      ? { UPSTREAM_TOKEN: Redacted.make(store[principal]) }
      : undefined
  )

const whoIs = (result: { readonly content?: ReadonlyArray<unknown> | undefined }) =>
  JSON.parse(firstText(result)) as { readonly pid: number; readonly token: string | null }

describe("per-principal instances", () => {
  it.live("each principal its own process and credentials; none reaches another's; idle ones stop", () =>
    Effect.scoped(Effect.gen(function*() {
      const as = yield* authServer
      const context = yield* Layer.build(
        Policy.layer({}).pipe(
          Layer.provideMerge(ServerRegistry.layer({ principalCredentials: credentials })),
          Layer.provide(Platform)
        )
      )
      const registry = ServerRegistry.ServerRegistry.pipe(Effect.provide(context))
      yield* Effect.flatMap(registry, (fleet) =>
        Effect.zipRight(
          fleet.reconcile([{
            ...fixtureSpec("mine", whoami, { env: { [MARKER]: RUN_ID } }),
            perPrincipal: true,
            idleTimeout: "1 second"
          }]),
          fleet.awaitReady({ servers: ["mine"], timeout: hangGuard(20_000) })
        ))
      const url = yield* NodeGateway.serveHttp({ port: 0, oauth: { issuer: as.base } }).pipe(Effect.provide(context))

      const clientOf = (subject: string) => gatewayClient(as, url, subject)
      const alice = yield* clientOf("alice")
      const bob = yield* clientOf("bob")
      const carol = yield* clientOf("carol")

      // The catalog is the server's own instance's, which no call reaches.
      expect((yield* alice.listTools()).map((tool) => tool.name)).toEqual(["mcp__mine__whoami"])
      const template = (yield* Effect.flatMap(registry, (fleet) => fleet.status))[0]!.connection?.pid as number

      const a1 = whoIs(yield* alice.callTool("mcp__mine__whoami", {}))
      const b1 = whoIs(yield* bob.callTool("mcp__mine__whoami", {}))
      const a2 = whoIs(yield* alice.callTool("mcp__mine__whoami", {}))
      expect(a1).toEqual({ pid: a2.pid, token: "alice-upstream-token" })
      expect(b1.token).toBe("bob-upstream-token")
      expect(new Set([a1.pid, b1.pid, template]).size).toBe(3)

      // A principal the token store has no credentials for gets no instance.
      const none = yield* carol.callTool("mcp__mine__whoami", {})
      expect(none.isError).toBe(true)
      expect(firstText(none)).toBe(
        "server 'mine': has no credentials for this principal in the token store"
      )

      // Without a principal (not through the OAuth gateway), the call is refused.
      const anonymous = failure(
        yield* Effect.exit(Effect.flatMap(registry, (fleet) => fleet.callServerTool("mine", "whoami", {})))
      )
      expect(anonymous.reason).toMatchObject({ _tag: "Unavailable" })
      expect(anonymous.message).toContain("runs one instance per principal")
      expect(anonymous).toBeInstanceOf(McpError.McpError)

      // Idle for its idleTimeout, alice's process ends; her next call starts a new one.
      yield* Effect.repeat(Effect.sync(() => procState(a1.pid)), {
        until: (state) => state !== "alive",
        schedule: Schedule.spaced("50 millis")
      }).pipe(Effect.timeout(hangGuard(10_000)))
      const a3 = whoIs(yield* alice.callTool("mcp__mine__whoami", {}))
      expect(a3.pid).not.toBe(a1.pid)
      expect(a3.token).toBe("alice-upstream-token")
    })).pipe(
      Effect.provide(Platform),
      Effect.zipRight(Effect.sync(() => expect(survivors(MARKER, RUN_ID)).toEqual([])))
    ))
})
