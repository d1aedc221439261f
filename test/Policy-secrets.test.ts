/**
 * Policy: a tool call whose arguments carry a secret of any server of the fleet (plain,
 * URL-encoded or in base64) is refused, with an audit entry, unless an `allow` rule names
 * the tool; the error never quotes the secret.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import type * as ServerSpec from "../src/ServerSpec.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure, firstText, text } from "../src/testing/Results.js"
import { Platform } from "./support/platform.js"

const SECRET = "sk-vault/4f1e9a2c+7b"

const save: FakeServer.FakeTool = {
  tool: { name: "save", inputSchema: { type: "object" } },
  call: (args) => Effect.succeed(text(`saved ${JSON.stringify(args)}`))
}

// `notes` takes anything; `vault` (never started) holds the secret in its env.
const vault: ServerSpec.ServerSpec = {
  name: "vault",
  disabled: true,
  transport: { type: "stdio", command: "vault-mcp", env: { VAULT_TOKEN: Redacted.make(SECRET) } }
}

const start = (config: Policy.Config) =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.make({
      servers: [FakeServer.spec({ name: "notes", tools: [save] }), vault]
    }).pipe(Effect.provide(Platform))
    yield* registry.awaitReady({ servers: ["notes"], timeout: "1 second" })
    const entries = yield* Queue.unbounded<Policy.AuditEntry>()
    const policy = yield* Policy.make(config).pipe(
      Effect.provideService(Policy.AuditSink, Policy.AuditSink.of({ write: (entry) => Queue.offer(entries, entry) })),
      Effect.provideService(ServerRegistry.ServerRegistry, registry)
    )
    return { policy, entries }
  })

describe("Policy: secrets in arguments", () => {
  it.scoped("refuses another server's secret, in every form, with an audit entry", () =>
    Effect.gen(function*() {
      const { entries, policy } = yield* start({})
      for (const form of [SECRET, encodeURIComponent(SECRET), Buffer.from(SECRET).toString("base64")]) {
        const error = failure(yield* Effect.exit(policy.callTool("mcp__notes__save", { note: `key: ${form}` })))
        expect(error.reason._tag).toBe("Denied")
        expect(error.message).toContain("the arguments carry a secret of server 'vault'")
        expect(JSON.stringify(error)).not.toContain(form)
        const entry = yield* Queue.take(entries)
        expect(entry).toMatchObject({ name: "mcp__notes__save", outcome: "denied", rule: "secret in arguments" })
      }
      // Arguments without it pass.
      expect(firstText(yield* policy.callTool("mcp__notes__save", { note: "hello" }))).toBe(`saved {"note":"hello"}`)
    }))

  it.scoped("lets it pass to a tool an allow rule names", () =>
    Effect.gen(function*() {
      const { policy } = yield* start({ allow: ["mcp__notes__save"] })
      const result = yield* policy.callTool("mcp__notes__save", { note: SECRET })
      expect(firstText(result)).toContain(SECRET)
    }))
})
