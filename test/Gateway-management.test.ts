// The MCP management tools through the gateway: absent by default, and with the
// `managementTools` option listed after the fleet's tools, callable, their subscriptions
// counted with the session's, poll results sent as log messages, all ended with the session;
// a 2026-07-28 client, which has no session, gets those that work within one request.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Gateway from "../src/Gateway.js"
import * as McpClient from "../src/McpClient.js"
import * as McpManagementTools from "../src/McpManagementTools.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Memory from "../src/Memory.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure, firstText, text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { pollClock } from "./support/clock.js"
import { Platform } from "./support/platform.js"

// One server with a `count` tool reading `state.value` and a subscribable resource.
const counter = () => {
  const state = { value: 1 }
  const spec = FakeServer.spec({
    name: "alpha",
    tools: [{
      tool: { name: "count", inputSchema: { type: "object" } },
      call: () => Effect.sync(() => text(`count ${state.value}`))
    }],
    resources: [{ resource: { uri: "alpha://r", name: "r" }, text: "r" }]
  })
  const requests = (method: string) => spec.current().requests.filter((request) => request.method === method)
  return { spec, state, requests }
}

// A gateway session over a Memory pair, in its own Scope, and a client of it.
const session = (options: Gateway.Options, protocolVersion: McpSchema.Revision = "2025-11-25") =>
  Effect.gen(function*() {
    const alpha = counter()
    const registry = yield* ServerRegistry.make({ servers: [alpha.spec] }).pipe(Effect.provide(Platform))
    yield* registry.awaitReady({ servers: ["alpha"], timeout: "1 second" })
    const policy = yield* Policy.make({}).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
    const scope = yield* Scope.make()
    const [client, server] = yield* Memory.makePair({ server: "gateway", client: "client" }).pipe(Scope.extend(scope))
    yield* Gateway.serve(options).pipe(
      Effect.provideService(Transport, server),
      Effect.provideService(ServerRegistry.ServerRegistry, registry),
      Effect.provideService(Policy.Policy, policy),
      Effect.forkIn(scope)
    )
    // The management tools' polls and subscriptions belong to a session: a stateful client.
    const mcp = yield* McpClient.make({ requestTimeout: "10 seconds", protocolVersion }).pipe(
      Effect.provideService(Transport, client),
      Scope.extend(scope)
    )
    return { alpha, mcp, scope }
  })

const names = (tools: ReadonlyArray<McpSchema.Tool>) => tools.map((tool) => tool.name)

// The first notification of `method`, waited for in a fiber started now.
const next = (mcp: McpClient.McpClient, method: string) =>
  Effect.tap(
    mcp.notifications.pipe(Stream.filter((n) => n.method === method), Stream.runHead, Effect.fork),
    () => Effect.yieldNow()
  )

describe("Gateway: the management tools", () => {
  it.scoped("are not served by default", () =>
    Effect.gen(function*() {
      const { mcp } = yield* session({})
      expect(names(yield* mcp.listTools())).toEqual(["mcp__alpha__count"])
      const unknown = failure(yield* Effect.exit(mcp.callTool("ListMcpResources", {})))
      expect(unknown.message).toContain("there is no tool 'ListMcpResources'")
    }))

  it.scoped("with managementTools: listed, callable, failures as isError, poll results as log messages", () =>
    Effect.gen(function*() {
      const { alpha, mcp } = yield* session({ managementTools: true })
      expect(names(yield* mcp.listTools())).toEqual([
        "mcp__alpha__count",
        ...McpManagementTools.tools.map((tool) => tool.name)
      ])
      const listed = yield* mcp.callTool("ListMcpResources", {})
      expect(listed.structuredContent).toEqual({
        resources: [{ server: "alpha", uri: "alpha://r", name: "r" }],
        templates: []
      })
      const tooFast = yield* mcp.callTool("SubscribePolling", {
        type: "tool",
        server: "alpha",
        toolName: "count",
        intervalMs: 10
      })
      expect(tooFast.isError).toBe(true)
      expect(firstText(tooFast)).toContain("intervalMs")
      // The fleet's own tools still route as before.
      expect(firstText(yield* mcp.callTool("mcp__alpha__count", {}))).toBe("count 1")

      const clock = yield* pollClock(1000)
      yield* mcp.callTool("SubscribePolling", { type: "tool", server: "alpha", toolName: "count", intervalMs: 1000 })
      yield* clock.tick
      const message = yield* next(mcp, "notifications/message")
      alpha.state.value = 2
      yield* clock.tick
      const log = yield* Fiber.join(message)
      expect(log._tag === "Some" && log.value.params).toEqual({
        level: "info",
        logger: "mcp-fleet/poll",
        data: {
          pollId: "poll-1",
          type: "tool",
          server: "alpha",
          target: "count",
          result: { content: [{ type: "text", text: "count 2" }] }
        }
      })
    }))

  it.scoped("a subscription made with the tools is the session's: updates reach the client; released when it ends", () =>
    Effect.gen(function*() {
      const { alpha, mcp, scope } = yield* session({ managementTools: true })
      const made = yield* mcp.callTool("SubscribeMcpResource", { server: "alpha", uri: "alpha://r" })
      expect(made.structuredContent).toEqual({ subscriptionId: "sub-1", server: "alpha", uri: "alpha://r" })
      expect(alpha.requests("resources/subscribe")).toHaveLength(1)
      const updated = yield* next(mcp, "notifications/resources/updated")
      yield* alpha.spec.current().peer.notify("notifications/resources/updated", { uri: "alpha://r" })
      const update = yield* Fiber.join(updated)
      expect(update._tag === "Some" && update.value.params).toEqual({ uri: "alpha://r" })
      // The client's own subscribe to the same resource is the same subscription at the server.
      yield* mcp.subscribeResource("alpha://r")
      expect(alpha.requests("resources/subscribe")).toHaveLength(1)
      yield* Scope.close(scope, Exit.void)
      expect(alpha.requests("resources/unsubscribe")).toHaveLength(1)
    }))

  it.scoped("for a 2026-07-28 client: only those that work within one request; the others fail saying why", () =>
    Effect.gen(function*() {
      const { alpha, mcp } = yield* session({ managementTools: true }, "2026-07-28")
      expect(names(yield* mcp.listTools())).toEqual([
        "mcp__alpha__count",
        "ListMcpResources",
        "ReadMcpResource",
        "load_skill"
      ])
      const listed = yield* mcp.callTool("ListMcpResources", {})
      expect(listed.structuredContent).toEqual({
        resources: [{ server: "alpha", uri: "alpha://r", name: "r" }],
        templates: []
      })
      const read = yield* mcp.callTool("ReadMcpResource", { server: "alpha", uri: "alpha://r" })
      expect(read.isError).not.toBe(true)
      for (
        const [name, args] of [
          ["SubscribeMcpResource", { server: "alpha", uri: "alpha://r" }],
          ["SubscribePolling", { type: "tool", server: "alpha", toolName: "count", intervalMs: 1000 }],
          ["UnsubscribePolling", { pollId: "poll-1" }]
        ] as const
      ) {
        const refused = yield* mcp.callTool(name, args)
        expect(refused.isError).toBe(true)
        expect(firstText(refused)).toContain(`${name} keeps what it starts for the client's session`)
        expect(firstText(refused)).toContain("subscriptions/listen")
      }
      expect(alpha.requests("resources/subscribe")).toHaveLength(0)
      // The fleet's own tools still route as before.
      expect(firstText(yield* mcp.callTool("mcp__alpha__count", {}))).toBe("count 1")
    }))
})
