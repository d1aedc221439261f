// The MCP management tools on fake servers, on the TestClock: listing, reading and
// subscribing to resources, polls that publish a change once, their bounds, their Scope,
// and the policy over a poll's tool.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as McpManagementTools from "../src/McpManagementTools.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Peer from "../src/Peer.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure, reasonOf } from "../src/testing/Results.js"
import { pollClock } from "./support/clock.js"
import { Platform } from "./support/platform.js"

// A server whose `counter` tool and `mem://counter` resource both read `state.value`.
const counterServer = (name: string) => {
  const state = { value: 1, broken: false }
  const text = () => `count ${state.value}`
  const options: FakeServer.Options = {
    tools: [
      {
        tool: { name: "counter", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
        call: () => Effect.sync(() => ({ content: [{ type: "text", text: text() }] }))
      },
      {
        tool: { name: "reset", inputSchema: { type: "object" } },
        call: () => Effect.succeed({ content: [{ type: "text", text: "reset" }] })
      },
      { tool: { name: "hang", inputSchema: { type: "object" } }, call: () => Effect.never }
    ],
    resources: [{ resource: { uri: "mem://counter", name: "counter", mimeType: "text/plain" }, text: "" }],
    handlers: {
      "resources/read": (request) =>
        state.broken
          ? Effect.fail(new Peer.HandlerError({ code: -32603, message: "disk on fire" }))
          : Effect.sync(() => ({
            contents: [{ uri: String(request.params?.uri), mimeType: "text/plain", text: text() }]
          }))
    }
  }
  const spec = FakeServer.spec({ ...options, name })
  const requests = (method: string) => spec.current().requests.filter((request) => request.method === method)
  return { spec, state, requests }
}

const setup = (
  config: Policy.Config = {},
  options: McpManagementTools.Options = {},
  approve?: Policy.Approval["approve"]
) =>
  Effect.gen(function*() {
    const alpha = counterServer("alpha")
    const beta = counterServer("beta")
    const registry = yield* ServerRegistry.make({ servers: [alpha.spec, beta.spec] }).pipe(Effect.provide(Platform))
    yield* registry.awaitReady({ servers: ["alpha", "beta"], timeout: "1 second" })
    const policy = yield* Policy.make(config).pipe(
      approve === undefined ? (self) => self : Effect.provide(Policy.layerApproval(approve)),
      Effect.provideService(ServerRegistry.ServerRegistry, registry)
    )
    const scope = yield* Scope.make()
    const management = yield* McpManagementTools.make(options).pipe(
      Effect.provideService(ServerRegistry.ServerRegistry, registry),
      Effect.provideService(Policy.Policy, policy),
      Scope.extend(scope)
    )
    const events = yield* management.subscribeEvents
    return { alpha, beta, registry, management, events, scope }
  })

const structured = (result: McpSchema.CallToolResult) => result.structuredContent as Record<string, any>

describe("McpManagementTools", () => {
  it("defines seven tools, each with an object inputSchema and read-only hints", () => {
    expect(McpManagementTools.tools.map((tool) => tool.name)).toEqual([
      "ListMcpResources",
      "ReadMcpResource",
      "SubscribeMcpResource",
      "UnsubscribeMcpResource",
      "SubscribePolling",
      "UnsubscribePolling",
      "load_skill"
    ])
    for (const tool of McpManagementTools.tools) {
      expect(McpManagementTools.isManagementTool(tool.name)).toBe(true)
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    }
    expect(McpManagementTools.isManagementTool("__proto__")).toBe(false)
    expect(McpManagementTools.tools[4].inputSchema).toMatchObject({
      required: ["type", "server", "intervalMs"],
      properties: { intervalMs: { type: "integer", minimum: 1000 }, arguments: { type: "object" } }
    })
  })

  it.scoped("lists and reads resources, within the servers the caller may reach", () =>
    Effect.gen(function*() {
      const { management } = yield* setup()
      const all = structured(yield* management.call("ListMcpResources", {}))
      expect(all.resources).toEqual([
        { server: "alpha", uri: "mem://counter", name: "counter", mimeType: "text/plain" },
        { server: "beta", uri: "mem://counter", name: "counter", mimeType: "text/plain" }
      ])
      const onlyBeta = { server: (server: string) => server === "beta", tool: () => true }
      expect(structured(yield* management.call("ListMcpResources", {}, onlyBeta)).resources).toHaveLength(1)
      const hidden = failure(yield* Effect.exit(management.call("ListMcpResources", { server: "alpha" }, onlyBeta)))
      expect(reasonOf(hidden, "NotFound").suggestions).toEqual([])
      const typo = failure(yield* Effect.exit(management.call("ReadMcpResource", { server: "alhpa", uri: "x" })))
      expect(typo.message).toBe("there is no server 'alhpa'; did you mean 'alpha'?")
      const read = yield* management.call("ReadMcpResource", { server: "alpha", uri: "mem://counter" })
      expect(read.content).toEqual([
        { type: "resource", resource: { uri: "mem://counter", mimeType: "text/plain", text: "count 1" } }
      ])
      const bad = failure(yield* Effect.exit(management.call("ReadMcpResource", { server: "alpha" })))
      expect(reasonOf(bad, "Validation").method).toBe("ReadMcpResource")
      expect(bad.message).toContain("uri")
      expect(reasonOf(failure(yield* Effect.exit(management.call("ListMcpResource", {}))), "NotFound").suggestions)
        .toContain("ListMcpResources")
    }))

  it.scoped("subscriptions: once per resource, updates published, bounded, listed, ended with the Scope", () =>
    Effect.gen(function*() {
      const { alpha, beta, events, management, scope } = yield* setup({}, { maxSubscriptions: 2 })
      const first = structured(
        yield* management.call("SubscribeMcpResource", { server: "alpha", uri: "mem://counter" })
      )
      expect(first).toEqual({ subscriptionId: "sub-1", server: "alpha", uri: "mem://counter" })
      const again = structured(
        yield* management.call("SubscribeMcpResource", { server: "alpha", uri: "mem://counter" })
      )
      expect(again.subscriptionId).toBe("sub-1")
      expect(alpha.requests("resources/subscribe")).toHaveLength(1)

      yield* alpha.spec.current().peer.notify("notifications/resources/updated", { uri: "mem://counter" })
      expect(yield* Queue.take(events)).toMatchObject({
        _tag: "ResourceUpdated",
        subscription: { id: "sub-1", server: "alpha", uri: "mem://counter" }
      })

      yield* management.call("SubscribeMcpResource", { server: "beta", uri: "mem://counter" })
      const over = failure(yield* Effect.exit(management.call("SubscribeMcpResource", { server: "beta", uri: "x" })))
      expect(over.message).toBe("the number of resource subscriptions exceeds the limit of 2")
      expect((yield* management.status).subscriptions.map((subscription) => subscription.id)).toEqual([
        "sub-1",
        "sub-2"
      ])

      yield* management.call("UnsubscribeMcpResource", { server: "alpha", uri: "mem://counter" })
      expect(alpha.requests("resources/unsubscribe")).toHaveLength(1)
      const unknown = failure(
        yield* Effect.exit(management.call("UnsubscribeMcpResource", { subscriptionId: "sub-1" }))
      )
      expect(unknown.message).toBe("UnsubscribeMcpResource: no such subscription; those in force: sub-2")
      reasonOf(failure(yield* Effect.exit(management.call("UnsubscribeMcpResource", {}))), "Validation")

      yield* Scope.close(scope, Exit.void)
      expect(beta.requests("resources/unsubscribe")).toHaveLength(1)
    }))

  it.scoped("a poll publishes a PollResult once per change of what it returns", () =>
    Effect.gen(function*() {
      const { alpha, events, management } = yield* setup()
      const clock = yield* pollClock(1000)
      const started = structured(
        yield* management.call("SubscribePolling", {
          type: "tool",
          server: "alpha",
          toolName: "counter",
          intervalMs: 1000
        })
      )
      expect(started).toMatchObject({
        pollId: "poll-1",
        type: "tool",
        server: "alpha",
        target: "counter",
        intervalMs: 1000,
        current: { content: [{ type: "text", text: "count 1" }] }
      })
      yield* clock.tick
      expect(alpha.requests("tools/call")).toHaveLength(2)
      expect(yield* Queue.size(events)).toBe(0)

      alpha.state.value = 2
      yield* clock.tick
      expect(yield* Queue.take(events)).toMatchObject({
        _tag: "PollResult",
        poll: { id: "poll-1", server: "alpha", target: "counter" },
        result: { content: [{ type: "text", text: "count 2" }] },
        error: undefined
      })
      yield* clock.tick
      yield* clock.tick
      expect(alpha.requests("tools/call")).toHaveLength(5)
      expect(yield* Queue.size(events)).toBe(0)

      yield* management.call("UnsubscribePolling", { pollId: "poll-1" })
      expect((yield* management.status).polls).toEqual([])
      yield* TestClock.adjust("5 seconds")
      expect(alpha.requests("tools/call")).toHaveLength(5)
      const again = failure(yield* Effect.exit(management.call("UnsubscribePolling", { pollId: "poll-1" })))
      expect(again.message).toBe("UnsubscribePolling: no such poll; those in force: none")
    }))

  it.scoped("a resource poll; a failing fetch is a change too, published once with its error", () =>
    Effect.gen(function*() {
      const { alpha, events, management } = yield* setup()
      const clock = yield* pollClock(2000)
      yield* management.call("SubscribePolling", {
        type: "resource",
        server: "alpha",
        uri: "mem://counter",
        intervalMs: 2000
      })
      expect((yield* management.status).polls).toEqual([
        {
          id: "poll-1",
          type: "resource",
          server: "alpha",
          target: "mem://counter",
          arguments: undefined,
          intervalMs: 2000
        }
      ])
      alpha.state.broken = true
      yield* clock.tick
      const failed = yield* Queue.take(events)
      expect(failed._tag === "PollResult" && failed.result).toBe(undefined)
      expect(failed._tag === "PollResult" && failed.error?.message).toBe(
        "server 'alpha' answered resources/read with error -32603: disk on fire"
      )
      yield* clock.tick
      expect(yield* Queue.size(events)).toBe(0)
      alpha.state.broken = false
      alpha.state.value = 7
      yield* clock.tick
      expect(yield* Queue.take(events)).toMatchObject({
        _tag: "PollResult",
        result: { contents: [{ uri: "mem://counter", text: "count 7" }] },
        error: undefined
      })
    }))

  it.scoped("polls: checked arguments, bounded, stopped with the Scope", () =>
    Effect.gen(function*() {
      const { alpha, management, scope } = yield* setup({}, { maxPolls: 1 })
      const fast = failure(
        yield* Effect.exit(
          management.call("SubscribePolling", { type: "tool", server: "alpha", toolName: "counter", intervalMs: 500 })
        )
      )
      expect(fast.message).toContain("intervalMs")
      const noTool = failure(
        yield* Effect.exit(
          management.call("SubscribePolling", { type: "tool", server: "alpha", intervalMs: 1000 })
        )
      )
      expect(noTool.message).toBe("SubscribePolling: a poll of type tool needs a toolName")
      const typo = failure(
        yield* Effect.exit(
          management.call("SubscribePolling", { type: "tool", server: "alpha", toolName: "countr", intervalMs: 1000 })
        )
      )
      expect(typo.message).toBe("server 'alpha' has no tool 'countr'; did you mean 'counter'?")
      // A start given up during its first fetch gives its place back.
      const hanging = yield* Effect.fork(
        management.call("SubscribePolling", { type: "tool", server: "alpha", toolName: "hang", intervalMs: 1000 })
      )
      yield* Effect.yieldNow().pipe(Effect.repeat({ until: () => alpha.requests("tools/call").length === 1 }))
      expect((yield* management.status).polls.map((poll) => poll.target)).toEqual(["hang"])
      yield* Fiber.interrupt(hanging)
      expect((yield* management.status).polls).toEqual([])

      yield* management.call("SubscribePolling", {
        type: "tool",
        server: "alpha",
        toolName: "mcp__alpha__counter",
        intervalMs: 1000
      })
      const over = failure(
        yield* Effect.exit(
          management.call("SubscribePolling", {
            type: "resource",
            server: "alpha",
            uri: "mem://counter",
            intervalMs: 1000
          })
        )
      )
      expect(over.message).toBe("the number of polls exceeds the limit of 1")
      yield* Scope.close(scope, Exit.void)
      const calls = alpha.requests("tools/call").length
      yield* TestClock.adjust("5 seconds")
      expect(alpha.requests("tools/call")).toHaveLength(calls)
    }))

  it.scoped("a poll's tool is under the policy: denied and ask tools cannot be polled", () =>
    Effect.gen(function*() {
      const { alpha, management } = yield* setup(
        { deny: ["mcp__alpha__reset"], servers: { beta: { ask: ["counter"] } } },
        {},
        () => Effect.succeed({ decision: "allow" })
      )
      const denied = failure(
        yield* Effect.exit(
          management.call("SubscribePolling", { type: "tool", server: "alpha", toolName: "reset", intervalMs: 1000 })
        )
      )
      expect(denied.message).toBe(
        `server 'alpha': tool 'mcp__alpha__reset' was denied by policy: rule deny "mcp__alpha__reset" (global)`
      )
      const ask = failure(
        yield* Effect.exit(
          management.call("SubscribePolling", { type: "tool", server: "beta", toolName: "counter", intervalMs: 1000 })
        )
      )
      expect(reasonOf(ask, "Denied").rule).toBe(`ask "counter" (server 'beta')`)
      expect(ask.message).toContain("needs approval, which a poll cannot ask for on each call")
      expect(alpha.requests("tools/call")).toHaveLength(0)
      // A caller restricted to other tools cannot poll this one.
      const restricted: McpManagementTools.Reach = { server: () => true, tool: (entry) => entry.name.endsWith("x") }
      const hidden = failure(
        yield* Effect.exit(
          management.call(
            "SubscribePolling",
            { type: "tool", server: "alpha", toolName: "counter", intervalMs: 1000 },
            restricted
          )
        )
      )
      expect(reasonOf(hidden, "NotFound").suggestions).toEqual([])
    }))
})
