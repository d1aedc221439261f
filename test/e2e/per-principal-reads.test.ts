// `perPrincipal: true` in one process: a read, a prompt, a completion and a task followed by
// its id go where the principal's calls go — its own instance, with its own credentials — and
// never to the server's own (the template, which only lists), directly with a `principal` as
// through the OAuth gateway (the token's subject); without a principal each is refused as a
// call is. The fixture answers every kind of request with its pid and the credential it was
// started with.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as McpError from "../../src/McpError.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { EVERYTHING_STDIO } from "../support/everythingSuite.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"
import {
  authServer,
  followedByItsPrincipal,
  gatewayClient,
  mineFleet,
  parsed,
  upstreamCredentials
} from "../support/principals.js"
import { survivors } from "../support/processes.js"

const MARKER = "MCP_FLEET_PER_PRINCIPAL_READS_RUN"
const RUN_ID = `${process.pid}-${Date.now()}`

// What each kind of request of `mine` answers: whose instance it reached.
const reached = {
  call: (result: McpSchema.CallToolResult) => parsed(firstText(result)),
  read: (result: McpSchema.ReadResourceResult) => parsed((result.contents[0] as { text?: string }).text),
  prompt: (result: McpSchema.GetPromptResult) => parsed((result.messages[0]!.content as { text?: string }).text),
  completion: (result: McpSchema.CompleteResult) => parsed(result.completion.values[0])
}

const PROMPT = { type: "ref/prompt", name: "whoami" } as const
const ARGUMENT = { name: "who", value: "" }

// The four kinds of request of `mine` through the registry, each as `principal`'s.
const allOf = (fleet: ServerRegistry.ServerRegistry, principal: string | undefined) => {
  const options = principal === undefined ? undefined : { principal }
  return {
    call: fleet.callServerTool("mine", "whoami", {}, options),
    read: fleet.readResource("mine", "whoami://me", options),
    prompt: fleet.getPrompt("mine", "whoami", undefined, options),
    completion: fleet.complete("mine", PROMPT, ARGUMENT, undefined, options)
  }
}

describe("per-principal instances: reads, prompts, completions and tasks followed", () => {
  it.live("go to the principal's own instance, never the server's own; refused without a principal", () =>
    Effect.scoped(Effect.gen(function*() {
      const as = yield* authServer
      const { context, fleet } = yield* mineFleet({ [MARKER]: RUN_ID })
      const template = (yield* fleet.status)[0]!.connection?.pid as number

      // With a principal: each kind reaches the same instance, alice's, with her credential.
      const alice = allOf(fleet, "alice")
      const own = reached.call(yield* alice.call)
      expect(own.token).toBe("alice-upstream-token")
      expect(own.pid).not.toBe(template)
      expect(reached.read(yield* alice.read)).toEqual(own)
      expect(reached.prompt(yield* alice.prompt)).toEqual(own)
      expect(reached.completion(yield* alice.completion)).toEqual(own)

      // Without one, each is refused as a call is.
      const anonymous = allOf(fleet, undefined)
      for (const request of [anonymous.call, anonymous.read, anonymous.prompt, anonymous.completion]) {
        const error = failure(yield* Effect.exit(request as Effect.Effect<unknown, McpError.McpError>))
        expect(error.reason).toMatchObject({ _tag: "Unavailable" })
        expect(error.message).toContain("runs one instance per principal")
      }

      // Through the OAuth gateway, the token's subject is the principal.
      const url = yield* NodeGateway.serveHttp({ port: 0, oauth: { issuer: as.base } }).pipe(Effect.provide(context))
      const bob = yield* gatewayClient(as, url, "bob")
      const bobs = reached.call(yield* bob.callTool("mcp__mine__whoami", {}))
      expect(bobs.token).toBe("bob-upstream-token")
      expect(new Set([bobs.pid, own.pid, template]).size).toBe(3)
      const resource = (yield* bob.listResources())[0]!
      expect(reached.read(yield* bob.readResource(resource.uri))).toEqual(bobs)
      const prompt = (yield* bob.listPrompts())[0]!
      expect(reached.prompt(yield* bob.getPrompt(prompt.name))).toEqual(bobs)
      expect(reached.completion(yield* bob.complete({ type: "ref/prompt", name: prompt.name }, ARGUMENT))).toEqual(bobs)
    })).pipe(
      Effect.provide(Platform),
      Effect.zipRight(Effect.sync(() => expect(survivors(MARKER, RUN_ID)).toEqual([])))
    ))

  it.live(
    "a task is followed at the principal's own instance: not another's, not without a principal",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const fleet = yield* ServerRegistry.make({
          principalCredentials: upstreamCredentials,
          servers: [{ ...fixtureSpec("everything", EVERYTHING_STDIO, { args: ["stdio"] }), perPrincipal: true }]
        })
        yield* fleet.awaitReady({ servers: ["everything"], timeout: hangGuard(30_000) })
        yield* followedByItsPrincipal(fleet)
      })).pipe(Effect.provide(Platform)),
    hangGuard(90_000)
  )
})
