// Tool search on fake servers: ranking by the tools' words, the Policy's part, the servers
// option, FleetTools' searchTools, and the index following the catalog.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FleetTools from "../src/FleetTools.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import * as ToolSearch from "../src/ToolSearch.js"
import { Platform } from "./support/platform.js"

const tool = (name: string, description: string, properties: Record<string, string> = {}): FakeServer.FakeTool => ({
  tool: {
    name,
    description,
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(
        Object.entries(properties).map(([key, text]) => [key, { type: "string", description: text }])
      )
    }
  },
  call: () => Effect.succeed({ content: [{ type: "text", text: name }] })
})

const servers = [
  FakeServer.spec({
    name: "tracker",
    tools: [
      tool("create_issue", "Open a new issue in a repository.", { title: "Issue title", body: "Markdown body" }),
      tool("close_issue", "Close an issue.", { number: "The issue number" }),
      tool("listPullRequests", "List the pull requests of a repository.", { state: "open or closed" })
    ]
  }),
  FakeServer.spec({
    name: "ledger",
    instructions: "Bookkeeping for invoices and payments.",
    tools: [tool("record", "Record an entry.", { amount: "How much" })]
  }),
  FakeServer.spec({
    name: "chat",
    tools: [
      tool("post_message", "Send a message to a channel.", { channel: "Channel id", text: "Message text" }),
      tool("delete_message", "Delete a message from a channel.", { ts: "Message timestamp" })
    ]
  })
]

const setup = (config: Policy.Config = {}) =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.make({ servers }).pipe(Effect.provide(Platform))
    yield* registry.awaitReady({ servers: ["tracker", "ledger", "chat"], timeout: "1 second" })
    const policy = yield* Policy.make(config).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
    const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.provideService(ServerRegistry.ServerRegistry, registry),
        Effect.provideService(Policy.Policy, policy)
      )
    return { registry, search: yield* provide(ToolSearch.make), provide }
  })

const names = (hits: ReadonlyArray<ToolSearch.ToolHit>) => hits.map((hit) => hit.name)

describe("ToolSearch", () => {
  it.scoped("ranks by the words of names (split), descriptions and parameters; best score 1", () =>
    Effect.gen(function*() {
      const { search } = yield* setup()
      const hits = yield* search.search("create issue")
      expect(hits[0]).toMatchObject({ name: "mcp__tracker__create_issue", server: "tracker", score: 1 })
      expect(hits[0]!.tool.name).toBe("create_issue")
      expect(names(yield* search.search("pull requests")).at(0)).toBe("mcp__tracker__listPullRequests")
      expect(names(yield* search.search("messages channel", { limit: 2 }))).toHaveLength(2)
      expect(yield* search.search("   ")).toEqual([])
      expect(search.semantic).toBe(false)
    }))

  it.scoped("denied tools are not found; servers narrows by name or glob", () =>
    Effect.gen(function*() {
      const { search } = yield* setup({ deny: ["mcp__chat__delete_*"] })
      expect(names(yield* search.search("delete message", { limit: 10 }))).not.toContain("mcp__chat__delete_message")
      const narrowed = yield* search.search("issue message", { servers: ["ch*"], limit: 10 })
      expect(narrowed.every((hit) => hit.server === "chat")).toBe(true)
    }))

  it.scoped("a server's instructions are searched too, for every tool of it", () =>
    Effect.gen(function*() {
      const { search } = yield* setup()
      expect(names(yield* search.search("invoices", { limit: 1 }))).toEqual(["mcp__ledger__record"])
    }))

  it.scoped("FleetTools searches the same catalog", () =>
    Effect.gen(function*() {
      const { provide } = yield* setup()
      const fleet = yield* provide(FleetTools.make)
      expect(names(yield* fleet.searchTools("close issue", { limit: 1 }))).toEqual(["mcp__tracker__close_issue"])
    }))
})
