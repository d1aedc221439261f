// Skills (the skills extension, SEP-2640) through the fleet, from a real server: the
// conformance fixture (an McpServer serving two skills) as a stdio child. The catalog carries
// its skills; the gateway passes them through (skills/list, skills/get, their files read at
// their server, verified by the client); `load_skill` loads one through the gateway's
// management tools and through FleetTools (the bridges' tools); the CLI lists and loads them.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { afterAll } from "vitest"
import * as FleetTools from "../../src/FleetTools.js"
import * as Gateway from "../../src/Gateway.js"
import * as McpClient from "../../src/McpClient.js"
import * as McpManagementTools from "../../src/McpManagementTools.js"
import * as McpSchema from "../../src/McpSchema.js"
import * as Memory from "../../src/Memory.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import type * as ServerSpec from "../../src/ServerSpec.js"
import { firstText } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import { bundled } from "../support/bundle.js"
import { config, leavesNothing, MARK, marked, run, tempDir } from "../support/cli.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"

// The fixture bundled (support/bundle.ts): under tsx each start cost seconds of CPU.
const FIXTURE = await bundled("test/fixtures/conformance-stdio.ts")
const mark = `skills-${process.pid}-${Date.now()}`

afterAll(() => leavesNothing(mark))

const docs: ServerSpec.ServerSpec = {
  name: "docs",
  transport: { type: "stdio", command: process.execPath, args: [FIXTURE], env: { [MARK]: mark } }
}

const PDF = "skill://pdf-processing/SKILL.md"
const FORMS = "skill://pdf-processing/references/FORMS.md"

describe("skills through the fleet", () => {
  it.scopedLive(
    "the catalog carries them; the gateway passes them through; load_skill loads one",
    () =>
      Effect.gen(function*() {
        const registry = yield* ServerRegistry.make({ servers: [docs] }).pipe(Effect.provide(Platform))
        yield* registry.awaitReady({ servers: ["docs"], timeout: hangGuard(30_000) })
        const catalog = yield* SubscriptionRef.get(registry.catalog)
        expect(catalog.skills.map((entry) => [entry.server, entry.skill.uri])).toEqual([
          ["docs", PDF],
          ["docs", "skill://acme/billing/refunds/SKILL.md"]
        ])
        const policy = yield* Policy.make({}).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))

        // A client of the gateway (its management tools on), over a Memory pair.
        const gatewayClient = (protocolVersion: McpSchema.Revision) =>
          Effect.gen(function*() {
            const [client, server] = yield* Memory.makePair({ server: "gateway", client: "client" })
            yield* Gateway.serve({ managementTools: true }).pipe(
              Effect.provideService(Transport, server),
              Effect.provideService(ServerRegistry.ServerRegistry, registry),
              Effect.provideService(Policy.Policy, policy),
              Effect.forkScoped
            )
            return yield* McpClient.make({ protocolVersion }).pipe(Effect.provideService(Transport, client))
          })
        const mcp = yield* gatewayClient("2025-11-25")
        expect(mcp.capabilities.extensions).toMatchObject({ [McpSchema.SKILLS_EXTENSION]: {} })
        const skills = yield* mcp.listSkills()
        expect(skills).toEqual(catalog.skills.map((entry) => entry.skill))
        expect(yield* mcp.getSkill(PDF)).toEqual(skills[0])
        // Loaded through the gateway: its reads routed to the fixture, checked by this client.
        const loaded = yield* mcp.loadSkill(PDF)
        expect(loaded.text).toContain("name: pdf-processing")
        expect((yield* mcp.readSkillFile(loaded.skill, FORMS)).text).toContain("# Forms")

        // load_skill, a management tool of the gateway: by name, then one of its files.
        const answer = yield* mcp.callTool("load_skill", { skill: "pdf-processing" })
        expect(answer.isError).toBeUndefined()
        expect(firstText(answer)).toContain("Read references/FORMS.md before filling a form.")
        expect(firstText(answer)).toContain("- references/FORMS.md (")
        expect(answer.structuredContent).toMatchObject({ server: "docs", uri: PDF, files: ["references/FORMS.md"] })
        const file = yield* mcp.callTool("load_skill", { skill: PDF, file: "references/FORMS.md" })
        expect(firstText(file)).toBe("# Forms\n\nEvery field is filled in order.\n")
        const unknown = yield* mcp.callTool("load_skill", { skill: "pdf" })
        expect(unknown.isError).toBe(true)
        expect(firstText(unknown)).toContain("pdf-processing")

        // A 2026-07-28 client, which has no session: the same, load_skill working within one request.
        const modern = yield* gatewayClient("2026-07-28")
        expect(yield* modern.listSkills()).toEqual(skills)
        expect((yield* modern.loadSkill(PDF)).text).toBe(loaded.text)
        expect(firstText(yield* modern.callTool("load_skill", { skill: "refunds" }))).toContain(
          "Check the order first."
        )

        // The bridges' tools (FleetTools) offer it too when the management tools are in context.
        const scope = yield* Effect.scope
        const management = yield* McpManagementTools.make().pipe(
          Effect.provideService(ServerRegistry.ServerRegistry, registry),
          Effect.provideService(Policy.Policy, policy),
          Scope.extend(scope)
        )
        const fleetTools = yield* FleetTools.make.pipe(
          Effect.provideService(McpManagementTools.McpManagementTools, management),
          Effect.provideService(ServerRegistry.ServerRegistry, registry),
          Effect.provideService(Policy.Policy, policy)
        )
        const selection = fleetTools.select()
        expect((yield* selection.tools).map((tool) => tool.name)).toContain("load_skill")
        const viaBridge = yield* selection.call("load_skill", { skill: "refunds" })
        expect(firstText(viaBridge)).toContain("Check the order first.")
        // A filter that leaves the server out leaves its skills out.
        const elsewhere = yield* Effect.exit(
          fleetTools.select({ servers: ["other"] }).call("load_skill", {
            skill: "refunds"
          })
        )
        expect(elsewhere._tag).toBe("Failure")
      }),
    { timeout: 60_000 }
  )
})

describe("mcp-fleet skills", () => {
  const cwd = tempDir({
    ".mcp.json": config({ docs: marked({ command: process.execPath, args: [FIXTURE] }, mark) })
  })

  it("lists the skills, loads one verified, and reads one of its files (each a run starting the fixture)", async () => {
    const listed = await run(["skills", "--json"], { cwd, mark })
    expect(listed.code).toBe(0)
    const skills = JSON.parse(listed.stdout) as ReadonlyArray<{ server: string; uri: string }>
    expect(skills.map((skill) => [skill.server, skill.uri])).toEqual([
      ["docs", PDF],
      ["docs", "skill://acme/billing/refunds/SKILL.md"]
    ])
    const loaded = await run(["skill", "pdf-processing"], { cwd, mark })
    expect(loaded.code).toBe(0)
    expect(loaded.stdout).toContain("# PDF processing")
    const forms = await run(["skill", "pdf-processing", "references/FORMS.md"], { cwd, mark })
    expect(forms.stdout).toContain("Every field is filled in order.")
  }, 120_000)
})
