// The fleet's tools for models, on fake servers: what a filter selects, the policy's part,
// the management tools within the filter's reach, calls by name, and content as text.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FleetTools from "../src/FleetTools.js"
import * as McpManagementTools from "../src/McpManagementTools.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure, reasonOf } from "../src/testing/Results.js"
import { Platform } from "./support/platform.js"

const tool = (name: string): FakeServer.FakeTool => ({
  tool: { name, inputSchema: { type: "object", properties: { x: { type: "number" } } } },
  call: (args) => Effect.succeed({ content: [{ type: "text", text: `${name}:${JSON.stringify(args)}` }] })
})

const fake = (name: string, tools: ReadonlyArray<string>, resources: ReadonlyArray<string> = []) =>
  FakeServer.spec({
    name,
    tools: tools.map(tool),
    resources: resources.map((uri) => ({ resource: { uri, name: uri }, text: `${name} ${uri}` }))
  })

const servers = [
  fake("alpha", ["read_file", "write_file", "delete_file"], ["alpha://a"]),
  fake("beta", ["read_file", "search"], ["beta://b"])
]

const setup = (config: Policy.Config = {}, management = false) =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.make({ servers }).pipe(Effect.provide(Platform))
    yield* registry.awaitReady({ servers: ["alpha", "beta"], timeout: "1 second" })
    const policy = yield* Policy.make(config).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
    const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.provideService(ServerRegistry.ServerRegistry, registry),
        Effect.provideService(Policy.Policy, policy)
      )
    const fleet = management
      ? yield* provide(
        Effect.flatMap(McpManagementTools.make(), (service) =>
          FleetTools.make.pipe(Effect.provideService(McpManagementTools.McpManagementTools, service)))
      )
      : yield* provide(FleetTools.make)
    return { registry, fleet }
  })

const namesOf = (selection: FleetTools.Selection) =>
  Effect.map(selection.tools, (tools) => tools.map((tool) => tool.name))

describe("FleetTools", () => {
  it.scoped("a filter selects by server and tool globs (qualified or original names), after the policy", () =>
    Effect.gen(function*() {
      const { fleet } = yield* setup({ deny: ["mcp__*__delete_*"] })
      expect(yield* namesOf(fleet.select())).toEqual([
        "mcp__alpha__read_file",
        "mcp__alpha__write_file",
        "mcp__beta__read_file",
        "mcp__beta__search"
      ])
      expect(yield* namesOf(fleet.select({ servers: ["b*"] }))).toEqual(["mcp__beta__read_file", "mcp__beta__search"])
      expect(yield* namesOf(fleet.select({ tools: ["read_*", "mcp__alpha__write_file"] }))).toEqual([
        "mcp__alpha__read_file",
        "mcp__alpha__write_file",
        "mcp__beta__read_file"
      ])
      expect(yield* namesOf(fleet.select({ servers: ["alpha"], tools: ["*file"] }))).toEqual([
        "mcp__alpha__read_file",
        "mcp__alpha__write_file"
      ])
      // The definitions are the servers' own.
      const [first] = yield* fleet.select().tools
      expect(first).toMatchObject({ server: "alpha", tool: { name: "read_file", inputSchema: { type: "object" } } })
    }))

  it.scoped("calls go through the policy; a name the selection lacks, or a tool gone, is NotFound", () =>
    Effect.gen(function*() {
      const { fleet, registry } = yield* setup()
      const alphaOnly = fleet.select({ servers: ["alpha"] })
      expect(yield* alphaOnly.call("mcp__alpha__read_file", { x: 1 })).toEqual({
        content: [{ type: "text", text: "read_file:{\"x\":1}" }]
      })
      const invalid = failure(yield* Effect.exit(alphaOnly.call("mcp__alpha__read_file", { x: "one" })))
      reasonOf(invalid, "Validation")
      const hidden = failure(yield* Effect.exit(alphaOnly.call("mcp__beta__search", {})))
      expect(hidden.message).toBe("there is no tool 'mcp__beta__search'")
      yield* registry.reconcile(servers.filter((spec) => spec.name !== "alpha"))
      const gone = failure(yield* Effect.exit(alphaOnly.call("mcp__alpha__read_file", {})))
      expect(reasonOf(gone, "NotFound").name).toBe("mcp__alpha__read_file")
    }))

  it.scoped("the management tools come after the fleet's when the service is in context, within the filter", () =>
    Effect.gen(function*() {
      const { fleet } = yield* setup({}, true)
      const names = yield* namesOf(fleet.select({ servers: ["beta"] }))
      expect(names).toEqual([
        "mcp__beta__read_file",
        "mcp__beta__search",
        ...McpManagementTools.tools.map((tool) => tool.name)
      ])
      expect(yield* namesOf(fleet.select({ servers: ["beta"], management: false }))).toEqual([
        "mcp__beta__read_file",
        "mcp__beta__search"
      ])
      const listed = yield* fleet.select({ servers: ["beta"] }).call("ListMcpResources", {})
      expect(listed.structuredContent).toEqual({
        resources: [{ server: "beta", uri: "beta://b", name: "beta://b" }],
        templates: []
      })
      const other = failure(
        yield* Effect.exit(
          fleet.select({ servers: ["beta"] }).call("ReadMcpResource", { server: "alpha", uri: "alpha://a" })
        )
      )
      expect(other.message).toBe("there is no server 'alpha'")
      const poll = failure(
        yield* Effect.exit(
          fleet.select({ servers: ["beta"], tools: ["search"] }).call("SubscribePolling", {
            type: "tool",
            server: "beta",
            toolName: "read_file",
            intervalMs: 1000
          })
        )
      )
      expect(poll.message).toBe("server 'beta' has no tool 'read_file'")
      // Without the service, the names are no tools at all.
      const plain = yield* setup()
      expect(failure(yield* Effect.exit(plain.fleet.select().call("ListMcpResources", {}))).message).toMatch(
        /^there is no tool 'ListMcpResources'/
      )
    }))

  it("blockText: text as it is, everything else as a short note; resultText joins blocks", () => {
    const blocks: ReadonlyArray<McpSchema.ContentBlock> = [
      { type: "text", text: "hello" },
      { type: "image", data: "A".repeat(4096), mimeType: "image/png" },
      { type: "audio", data: "AAAA", mimeType: "audio/wav" },
      { type: "resource_link", uri: "file:///a.txt", name: "a.txt", mimeType: "text/plain" },
      { type: "resource", resource: { uri: "mem://note", text: "a note" } },
      { type: "resource", resource: { uri: "mem://bin", mimeType: "application/gzip", blob: "AAAA" } },
      { type: "hologram", depth: 3 } as unknown as McpSchema.ContentBlock
    ]
    expect(blocks.map(FleetTools.blockText)).toEqual([
      "hello",
      "[image image/png, 3.0 kB, not shown]",
      "[audio audio/wav, 0.0 kB, not shown]",
      "[resource file:///a.txt (text/plain): a.txt]",
      "[resource mem://note]\na note",
      "[resource mem://bin application/gzip, 0.0 kB, not shown]",
      "[hologram content, not shown]"
    ])
    expect(FleetTools.resultText({ content: blocks.slice(0, 2) })).toBe("hello\n[image image/png, 3.0 kB, not shown]")
  })
})
