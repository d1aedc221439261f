// `perPrincipal: true` on a cluster, against the machine's PostgreSQL: from a replica that
// hosts nothing, a principal's read, prompt, completion and task followed by its id go where
// its calls go — its own instance on the runner, with its own credentials — and never to the
// server's own entity; without a principal each is refused as a call is. The fixture answers
// every kind of request with its pid and the credential it was started with.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as McpError from "../../src/McpError.js"
import type * as McpSchema from "../../src/McpSchema.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { replica } from "../support/cluster.js"
import { EVERYTHING_STDIO } from "../support/everythingSuite.js"
import { hangGuard } from "../support/guard.js"
import { fileDatabase } from "../support/postgres.js"
import { followedByItsPrincipal, parsed, upstreamCredentials, WHOAMI_READS } from "../support/principals.js"
import { survivors } from "../support/processes.js"

const MARKER = "MCP_FLEET_CLUSTER_PRINCIPAL_READS_RUN"
const RUN_ID = `${process.pid}-${Date.now()}`

const db = fileDatabase()

const specs = [
  { ...fixtureSpec("mine", WHOAMI_READS, { env: { [MARKER]: RUN_ID } }), perPrincipal: true },
  { ...fixtureSpec("everything", EVERYTHING_STDIO, { args: ["stdio"] }), perPrincipal: true }
]

describe("per-principal instances on a cluster: reads, prompts, completions and tasks followed", () => {
  it.scopedLive(
    "go to the principal's own instance from another replica; refused without a principal",
    () =>
      Effect.gen(function*() {
        yield* replica(db.url, { servers: specs, runner: {}, principalCredentials: upstreamCredentials })
        const caller = yield* replica(db.url, { servers: specs })
        yield* caller.awaitReady({ servers: ["mine", "everything"], timeout: hangGuard(60_000) })

        const alice = { principal: "alice" }
        const own = parsed(firstText(yield* caller.callServerTool("mine", "whoami", {}, alice)))
        expect(own.token).toBe("alice-upstream-token")
        const read = yield* caller.readResource("mine", "whoami://me", alice)
        expect(parsed((read.contents[0] as { text?: string }).text)).toEqual(own)
        const prompt = yield* caller.getPrompt("mine", "whoami", undefined, alice)
        expect(parsed((prompt.messages[0]!.content as { text?: string }).text)).toEqual(own)
        const ref: McpSchema.PromptReference = { type: "ref/prompt", name: "whoami" }
        const completion = yield* caller.complete("mine", ref, { name: "who", value: "" }, undefined, alice)
        expect(parsed(completion.completion.values[0])).toEqual(own)

        const refused: ReadonlyArray<Effect.Effect<unknown, McpError.McpError>> = [
          caller.callServerTool("mine", "whoami", {}),
          caller.readResource("mine", "whoami://me"),
          caller.getPrompt("mine", "whoami"),
          caller.complete("mine", ref, { name: "who", value: "" })
        ]
        for (const request of refused) {
          const error = failure(yield* Effect.exit(request))
          expect(error.reason).toMatchObject({ _tag: "Unavailable" })
          expect(error.message).toContain("runs one instance per principal")
        }
        yield* followedByItsPrincipal(caller)
      }).pipe(
        Effect.scoped,
        Effect.zipRight(Effect.sync(() => expect(survivors(MARKER, RUN_ID)).toEqual([])))
      ),
    hangGuard(90_000)
  )
})
