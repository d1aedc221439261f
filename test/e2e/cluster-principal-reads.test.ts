// `perPrincipal: true` on a cluster, against the machine's PostgreSQL: from a replica that
// hosts nothing, a read, a prompt, a completion and a task followed by its id of a principal
// go where its calls go —
// its own instance on the runner, with its own credentials — and never to the server's own
// entity; without a principal each is refused as a call is. The fixture answers every kind
// of request with its pid and the credential it was started with.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import { fileURLToPath } from "node:url"
import type * as McpError from "../../src/McpError.js"
import type * as McpSchema from "../../src/McpSchema.js"
import type * as ServerRegistry from "../../src/ServerRegistry.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { replica } from "../support/cluster.js"
import { EVERYTHING_STDIO } from "../support/everythingSuite.js"
import { hangGuard } from "../support/guard.js"
import { fileDatabase } from "../support/postgres.js"
import { survivors } from "../support/processes.js"

const MARKER = "MCP_FLEET_CLUSTER_PRINCIPAL_READS_RUN"
const RUN_ID = `${process.pid}-${Date.now()}`
const WHOAMI = fileURLToPath(new URL("../fixtures/whoami-reads.mjs", import.meta.url))

const db = fileDatabase()

const specs = [
  { ...fixtureSpec("mine", WHOAMI, { env: { [MARKER]: RUN_ID } }), perPrincipal: true },
  { ...fixtureSpec("everything", EVERYTHING_STDIO, { args: ["stdio"] }), perPrincipal: true }
]

const principalCredentials: ServerRegistry.PrincipalCredentials = (_server, principal) =>
  Effect.succeed({ UPSTREAM_TOKEN: Redacted.make(`${principal}-upstream-token`) })

type Who = { readonly pid: number; readonly token: string | null }
const parsed = (text: string | undefined) => JSON.parse(text ?? "null") as Who

// A task of alice's, started through `caller`: followed by its id at her instance only.
const followed = (caller: ServerRegistry.ServerRegistry) =>
  Effect.gen(function*() {
    const started = yield* Effect.makeLatch()
    let taskId: string | undefined
    const call = yield* caller.callServerTool("everything", "simulate-research-query", { topic: "tides" }, {
      principal: "alice",
      onTask: (task) => Effect.zipRight(Effect.sync(() => taskId ??= task.taskId), started.open)
    }).pipe(Effect.fork)
    yield* started.await
    const anonymous = failure(yield* Effect.exit(caller.followTask("everything", taskId!)))
    expect(anonymous.message).toContain("runs one instance per principal")
    const bobs = failure(yield* Effect.exit(caller.followTask("everything", taskId!, { principal: "bob" })))
    expect(bobs.message).toContain(`task '${taskId}' is unknown`)
    const result = yield* caller.followTask("everything", taskId!, { principal: "alice" })
    expect(firstText(result)).toContain("tides")
    expect(result).toEqual(yield* Fiber.join(call))
  })

describe("per-principal instances on a cluster: reads, prompts, completions and tasks followed", () => {
  it.scopedLive(
    "go to the principal's own instance from another replica; refused without a principal",
    () =>
      Effect.gen(function*() {
        yield* replica(db.url, { servers: specs, runner: {}, principalCredentials })
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
        yield* followed(caller)
      }).pipe(
        Effect.scoped,
        Effect.zipRight(Effect.sync(() => expect(survivors(MARKER, RUN_ID)).toEqual([])))
      ),
    hangGuard(90_000)
  )
})
