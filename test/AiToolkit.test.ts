// The @effect/ai bridge against real servers (everything, memory, filesystem and the
// `growing` fixture), driven by a scripted LanguageModel: the schemas a provider would send,
// a conversation over several servers with failures the model reads, a tool added by
// list_changed, and the policy.
import * as Chat from "@effect/ai/Chat"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Response from "@effect/ai/Response"
import * as Tool from "@effect/ai/Tool"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as fs from "node:fs"
import * as path from "node:path"
import * as AiToolkit from "../src/AiToolkit.js"
import type * as FleetTools from "../src/FleetTools.js"
import * as McpManagementTools from "../src/McpManagementTools.js"
import type * as Policy from "../src/Policy.js"
import type { RegistryEvent } from "../src/RegistryEvent.js"
import { agentFleet, agentServers } from "./support/agentFleet.js"
import { until } from "./support/events.js"
import { hangGuard } from "./support/guard.js"

type Parts = Array<Response.PartEncoded>

const finish = (reason: "tool-calls" | "stop"): Response.PartEncoded => ({
  type: "finish",
  reason,
  usage: { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }
})

let ids = 0
const calls = (...wanted: ReadonlyArray<[string, Record<string, unknown>]>): Parts => [
  ...wanted.map(([name, params]): Response.PartEncoded => ({ type: "tool-call", id: `call-${++ids}`, name, params })),
  finish("tool-calls")
]

/**
 * A LanguageModel that plays `turns`, one per generateText, and keeps what each turn was
 * offered; a turn may do something in the fleet before it answers.
 */
const scripted = (turns: ReadonlyArray<(options: LanguageModel.ProviderOptions) => Effect.Effect<Parts>>) =>
  Effect.gen(function*() {
    const offered: Array<LanguageModel.ProviderOptions> = []
    const model = yield* LanguageModel.make({
      generateText: (options) =>
        Effect.suspend(() => {
          const turn = turns[offered.length]
          offered.push(options)
          return turn === undefined ? Effect.die(`no turn ${offered.length} in the script`) : turn(options)
        }),
      streamText: () => Stream.die("the script does not stream")
    })
    return { offered, layer: Layer.succeed(LanguageModel.LanguageModel, model) }
  })

const names = (options: LanguageModel.ProviderOptions) => options.tools.map((tool) => tool.name)

// The results of one response, by tool name.
const results = (response: LanguageModel.GenerateTextResponse<AiToolkit.Tools>) =>
  Object.fromEntries(
    response.toolResults.map((part) => [part.name, { isFailure: part.isFailure, result: part.result }])
  )

const servers = ["everything", "memory", "filesystem"]

describe("AiToolkit (real servers)", () => {
  it.scopedLive(
    "every tool's JSON Schema, as a provider gets it, is the server's inputSchema unchanged",
    () =>
      Effect.gen(function*() {
        const fleet = yield* agentFleet()
        const catalog = yield* SubscriptionRef.get(fleet.registry.catalog)
        const entries = catalog.tools.filter((entry) => servers.includes(entry.server))
        expect(new Set(entries.map((entry) => entry.server))).toEqual(new Set(servers))
        const kit = yield* AiToolkit.toolkit().pipe(Effect.provide(fleet.context))
        expect(Object.keys(kit.tools).sort()).toEqual(catalog.tools.map((entry) => entry.name).sort())
        for (const entry of entries) {
          const tool = kit.tools[entry.name]!
          expect(Tool.getJsonSchema(tool)).toBe(entry.tool.inputSchema)
          expect(Tool.getJsonSchema(tool)).toEqual(entry.tool.inputSchema)
          expect(tool.description).toBe(entry.tool.description)
          expect(tool.failureMode).toBe("return")
          const hints = entry.tool.annotations
          if (hints?.readOnlyHint !== undefined) {
            expect(Context.get(tool.annotations, Tool.Readonly)).toBe(hints.readOnlyHint)
          }
          if (hints?.destructiveHint !== undefined) {
            expect(Context.get(tool.annotations, Tool.Destructive)).toBe(hints.destructiveHint)
          }
          if (hints?.idempotentHint !== undefined) {
            expect(Context.get(tool.annotations, Tool.Idempotent)).toBe(hints.idempotentHint)
          }
          if (hints?.openWorldHint !== undefined) {
            expect(Context.get(tool.annotations, Tool.OpenWorld)).toBe(hints.openWorldHint)
          }
          const title = entry.tool.title ?? hints?.title
          if (title !== undefined) expect(Context.unsafeGet(tool.annotations, Tool.Title)).toBe(title)
        }
        // What generateText hands the provider is the same.
        const model = yield* scripted([() => Effect.succeed([{ type: "text", text: "ok" }, finish("stop")])])
        yield* LanguageModel.generateText({ prompt: "hi", toolkit: AiToolkit.toolkit() }).pipe(
          Effect.provide(model.layer),
          Effect.provide(fleet.context)
        )
        const sent = model.offered[0]!.tools
        for (const entry of entries) {
          expect(Tool.getJsonSchema(sent.find((tool) => tool.name === entry.name) as AiToolkit.FleetAiTool)).toEqual(
            entry.tool.inputSchema
          )
        }
      }),
    { timeout: hangGuard(60_000) }
  )

  it.scopedLive(
    "a model calling a tool named after an Object.prototype member gets an error, not a defect",
    () =>
      Effect.gen(function*() {
        const fleet = yield* agentFleet()
        for (const name of ["constructor", "toString"]) {
          const model = yield* scripted([() => Effect.succeed(calls([name, {}]))])
          const exit = yield* LanguageModel.generateText({ prompt: "hi", toolkit: AiToolkit.toolkit() }).pipe(
            Effect.provide(model.layer),
            Effect.provide(fleet.context),
            Effect.exit
          )
          expect(exit).toMatchObject({ _tag: "Failure", cause: { _tag: "Fail", error: { _tag: "MalformedOutput" } } })
        }
      }),
    { timeout: hangGuard(60_000) }
  )

  it.scopedLive(
    "a conversation: calls on two servers, an isError result and a timeout read as failures, a tool added by list_changed on the next turn, a tool gone mid-turn",
    () =>
      Effect.gen(function*() {
        const fleet = yield* agentFleet({
          servers: { everything: { tools: { "trigger-long-running-operation": { timeout: 300 } } } }
        })
        const events = yield* fleet.registry.subscribe
        const outside = path.join(path.dirname(fleet.dir), "elsewhere.txt")
        const model = yield* scripted([
          () =>
            Effect.succeed(calls(
              ["mcp__everything__echo", { message: "hello fleet" }],
              ["mcp__memory__read_graph", {}],
              ["mcp__growing__unlock", {}]
            )),
          () =>
            Effect.succeed(calls(
              ["mcp__filesystem__read_text_file", { path: outside }],
              ["mcp__everything__trigger-long-running-operation", { duration: 5, steps: 5 }],
              ["mcp__everything__get-sum", { a: "one", b: 2 }]
            )),
          () => Effect.succeed(calls(["mcp__growing__secret", {}])),
          // The growing server leaves after this turn was offered its tools.
          () =>
            Effect.as(
              fleet.registry.reconcile(agentServers(fleet.dir).filter((spec) => spec.name !== "growing")),
              calls(["mcp__growing__secret", {}])
            ),
          () => Effect.succeed([{ type: "text", text: "All done." }, finish("stop")])
        ])
        const chat = yield* Chat.empty
        const turn = (prompt: string) =>
          chat.generateText({ prompt, toolkit: AiToolkit.toolkit() }).pipe(
            Effect.provide(model.layer),
            Effect.provide(fleet.context)
          )

        const first = yield* turn("Greet, read my memory and unlock the secret")
        expect(results(first)).toEqual({
          "mcp__everything__echo": { isFailure: false, result: { text: "Echo: hello fleet" } },
          "mcp__memory__read_graph": {
            isFailure: false,
            result: { text: expect.stringContaining("entities"), structuredContent: { entities: [], relations: [] } }
          },
          "mcp__growing__unlock": { isFailure: false, result: { text: "unlocked: the tool 'secret' is listed now" } }
        })
        expect(names(model.offered[0]!)).not.toContain("mcp__growing__secret")
        yield* until(events, (event): event is RegistryEvent =>
          event._tag === "ToolsChanged" && event.server === "growing")

        const second = yield* turn("Go on")
        expect(names(model.offered[1]!)).toContain("mcp__growing__secret")
        const failures = results(second)
        expect(failures["mcp__filesystem__read_text_file"]).toEqual({
          isFailure: true,
          result: { error: expect.stringContaining("Access denied"), reason: "isError" }
        })
        expect(failures["mcp__everything__trigger-long-running-operation"]).toEqual({
          isFailure: true,
          result: {
            error: "server 'everything' did not finish tools/call within its maximum of 300 ms",
            reason: "Timeout"
          }
        })
        expect(failures["mcp__everything__get-sum"]).toMatchObject({
          isFailure: true,
          result: { error: expect.stringContaining("get-sum"), reason: "Validation" }
        })

        const third = yield* turn("And the secret?")
        expect(results(third)).toEqual({
          "mcp__growing__secret": { isFailure: false, result: { text: "the secret is 42" } }
        })

        const fourth = yield* turn("Once more")
        expect(results(fourth)).toEqual({
          "mcp__growing__secret": {
            isFailure: true,
            result: { error: expect.stringMatching(/^there is no tool 'mcp__growing__secret'/), reason: "NotFound" }
          }
        })

        const fifth = yield* turn("Thanks")
        expect(fifth.text).toBe("All done.")
        expect(
          names(model.offered[4]!).some((name) =>
            name.startsWith("mcp__growing__")
          )
        ).toBe(false)
        // The model had every earlier result in its prompt.
        const history = JSON.stringify(model.offered[4]!.prompt)
        expect(history).toContain("the secret is 42")
        expect(history).toContain("did not finish tools/call within its maximum of 300 ms")
      }),
    { timeout: hangGuard(60_000) }
  )

  it.scopedLive(
    "the policy: denied tools are absent, ask goes to the approver, a filter narrows the toolkit",
    () =>
      Effect.gen(function*() {
        const asked: Array<Policy.ApprovalRequest> = []
        const fleet = yield* agentFleet(
          { deny: ["mcp__memory__delete_*"], servers: { filesystem: { ask: ["write_file"] } } },
          (request) => Effect.sync(() => asked.push(request)).pipe(Effect.as({ decision: "deny", reason: "not today" }))
        )
        const kit = yield* AiToolkit.toolkit().pipe(Effect.provide(fleet.context))
        const offered = Object.keys(kit.tools)
        expect(offered.filter((name) => name.startsWith("mcp__memory__delete_"))).toEqual([])
        expect(offered).toContain("mcp__memory__create_entities")
        expect(offered).toContain("mcp__filesystem__write_file")

        const file = path.join(fleet.dir, "note.txt")
        const model = yield* scripted([
          () => Effect.succeed(calls(["mcp__filesystem__write_file", { path: file, content: "hi" }])),
          () => Effect.succeed(calls(["mcp__memory__delete_entities", { entityNames: ["x"] }]))
        ])
        const run = (filter?: FleetTools.Filter) =>
          LanguageModel.generateText({ prompt: "write", toolkit: AiToolkit.toolkit(filter) }).pipe(
            Effect.provide(model.layer),
            Effect.provide(fleet.context)
          )
        const written = yield* run()
        expect(results(written)["mcp__filesystem__write_file"]).toEqual({
          isFailure: true,
          result: { error: expect.stringContaining("the approver declined (not today)"), reason: "Denied" }
        })
        expect(asked).toMatchObject([{ server: "filesystem", tool: "write_file", arguments: { path: file } }])
        expect(fs.existsSync(file)).toBe(false)
        // A tool the model was not offered (denied) is refused by @effect/ai itself, as a typed
        // AiError, and never called.
        const refused = yield* Effect.flip(run())
        expect(refused._tag).toBe("MalformedOutput")

        const narrow = yield* AiToolkit.toolkit({ servers: ["mem*"], tools: ["read_*", "mcp__*__search_*"] }).pipe(
          Effect.provide(fleet.context)
        )
        expect(Object.keys(narrow.tools).sort()).toEqual(["mcp__memory__read_graph", "mcp__memory__search_nodes"])
      }),
    { timeout: hangGuard(60_000) }
  )

  it.scopedLive(
    "with the McpManagementTools service the toolkit has the management tools, within its filter",
    () =>
      Effect.gen(function*() {
        const fleet = yield* agentFleet()
        const management = yield* McpManagementTools.make().pipe(Effect.provide(fleet.context))
        const withManagement = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          effect.pipe(
            Effect.provideService(McpManagementTools.McpManagementTools, management),
            Effect.provide(fleet.context)
          )
        const all = yield* withManagement(AiToolkit.toolkit())
        for (const tool of McpManagementTools.tools) {
          expect(Tool.getJsonSchema(all.tools[tool.name]!)).toBe(tool.inputSchema)
          expect(Context.get(all.tools[tool.name]!.annotations, Tool.Readonly)).toBe(true)
        }
        const none = yield* withManagement(AiToolkit.toolkit({ management: false }))
        expect(Object.keys(none.tools).some(McpManagementTools.isManagementTool)).toBe(false)

        const model = yield* scripted([
          () =>
            Effect.succeed(calls(["ListMcpResources", {}], ["ReadMcpResource", { server: "everything", uri: "x" }])),
          () => Effect.succeed(calls(["ListMcpResources", {}]))
        ])
        const list = (filter: FleetTools.Filter) =>
          withManagement(LanguageModel.generateText({ prompt: "list", toolkit: AiToolkit.toolkit(filter) })).pipe(
            Effect.provide(model.layer),
            Effect.map(results)
          )
        const serversOf = (result: unknown) => {
          const listed = result as { structuredContent: { resources: Array<{ server: string }> } }
          return new Set(listed.structuredContent.resources.map((resource) => resource.server))
        }
        // A toolkit of the memory server lists and reads only that server's resources.
        const memory = yield* list({ servers: ["memory"] })
        expect(serversOf(memory["ListMcpResources"]!.result)).toEqual(new Set(["memory"]))
        expect(memory["ReadMcpResource"]).toEqual({
          isFailure: true,
          result: { error: "there is no server 'everything'", reason: "NotFound" }
        })
        const everything = yield* list({ servers: ["everything"] })
        expect(serversOf(everything["ListMcpResources"]!.result)).toEqual(new Set(["everything"]))
      }),
    { timeout: hangGuard(60_000) }
  )
})
