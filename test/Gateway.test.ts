// The gateway's MCP side in memory: a fleet of fake servers, one gateway session on a
// linked Memory pair, and our own client (or a bare Peer, for raw messages) on the other end.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { PassThrough } from "node:stream"
import type * as Catalog from "../src/Catalog.js"
import * as Gateway from "../src/Gateway.js"
import { type GatewayPolicy, make as makeFleetHub, resolveOptions } from "../src/internal/gateway/fleetHub.js"
import { makeServer } from "../src/internal/gateway/session.js"
import * as McpClient from "../src/McpClient.js"
import * as McpError from "../src/McpError.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "../src/McpServer.js"
import * as Memory from "../src/Memory.js"
import * as NodeGateway from "../src/NodeGateway.js"
import * as Peer from "../src/Peer.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import type * as ServerSpec from "../src/ServerSpec.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure, firstText, text } from "../src/testing/Results.js"
import { Transport } from "../src/Transport.js"
import { Platform } from "./support/platform.js"

const tool = (name: string, call?: FakeServer.FakeTool["call"]): FakeServer.FakeTool => ({
  tool: {
    name,
    description: `the ${name} tool`,
    inputSchema: { type: "object" },
    "x-extra": { kept: true }
  } as McpSchema.Tool,
  call: call ?? ((args) => Effect.succeed({ ...text(`${name}:${JSON.stringify(args)}`), "x-result": 1 }))
})

// The policy the gateway sees: no rules, unless a test replaces callTool.
const openPolicy = (registry: ServerRegistry.ServerRegistry, callTool?: GatewayPolicy["callTool"]): GatewayPolicy => ({
  filter: (catalog: Catalog.Catalog) => catalog,
  callTool: callTool ?? registry.callTool
})

interface Setup {
  readonly registry: ServerRegistry.ServerRegistry
  /** The client's end of a new gateway session. */
  readonly connect: Effect.Effect<Memory.MemoryTransport, never, Scope.Scope>
}

const setup = (
  servers: ReadonlyArray<ServerSpec.ServerSpec>,
  options: {
    readonly pageSize?: number
    readonly callTool?: GatewayPolicy["callTool"]
    readonly naming?: "qualified" | "plain"
  } = {}
) =>
  Effect.gen(function*() {
    const registry = yield* ServerRegistry.make({ servers }).pipe(Effect.provide(Platform))
    yield* registry.awaitReady({ servers: "settled" })
    const fleet = yield* makeFleetHub(
      registry,
      openPolicy(registry, options.callTool),
      resolveOptions({ pageSize: options.pageSize, listChangedDebounce: "20 millis", naming: options.naming })
    )
    const server = yield* makeServer(fleet)
    const connect = Effect.gen(function*() {
      const [client, end] = yield* Memory.makePair({ server: "gateway", client: "client" })
      yield* server.serve.pipe(Effect.provideService(Transport, end), Effect.forkScoped)
      return client
    })
    return { registry, connect } satisfies Setup
  })

const clientOf = (transport: Memory.MemoryTransport) =>
  McpClient.make({ requestTimeout: "10 seconds" }).pipe(Effect.provideService(Transport, transport))

const peerOf = (transport: Memory.MemoryTransport) => Peer.make().pipe(Effect.provideService(Transport, transport))

// A bare Peer on a session it initialized (McpServer refuses other requests before).
const initializedPeer = (transport: Memory.MemoryTransport) =>
  Effect.tap(peerOf(transport), (peer) =>
    peer.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" }
    }))

const twoServers = [
  FakeServer.spec({
    name: "alpha",
    tools: [
      tool("echo"),
      tool("add"),
      tool("fail", () => Effect.fail(new Peer.HandlerError({ code: -32050, message: "alpha broke", data: { why: 1 } })))
    ],
    prompts: [{
      prompt: { name: "greet", arguments: [{ name: "who" }] },
      get: (args) => ({ messages: [{ role: "user", content: { type: "text", text: `hi ${args.who}` } }] })
    }],
    resources: [{ resource: { uri: "alpha://doc", name: "doc" }, text: "alpha doc" }]
  }),
  FakeServer.spec({ name: "beta", tools: [tool("echo"), tool("multiply")] })
]

// A gateway (settle window 3 s) over `alpha`, ready at once, and `late`, whose initialize
// takes `delay`; a raw Peer on it, initialized, and its notifications.
const withLateServer = (delay: Duration.DurationInput) =>
  Effect.gen(function*() {
    const late = FakeServer.spec({
      name: "late",
      tools: [tool("later", () => Effect.succeed(text("later:{}")))],
      handlers: {
        initialize: (request) =>
          Effect.as(Effect.sleep(delay), {
            protocolVersion: request.params?.protocolVersion,
            capabilities: { tools: { listChanged: true } },
            serverInfo: { name: "late", version: "1.0.0" }
          })
      }
    })
    const registry = yield* ServerRegistry.make({
      servers: [FakeServer.spec({ name: "alpha", tools: [tool("echo")] }), late]
    }).pipe(
      Effect.provide(Platform)
    )
    const fleet = yield* makeFleetHub(
      registry,
      openPolicy(registry),
      resolveOptions({ settle: "3 seconds", listChangedDebounce: "20 millis" })
    )
    const [client, end] = yield* Memory.makePair({ server: "gateway", client: "client" })
    const server = yield* makeServer(fleet)
    yield* server.serve.pipe(Effect.provideService(Transport, end), Effect.forkScoped)
    const peer = yield* peerOf(client)
    const seen = yield* peer.subscribe
    // Answered with the clock standing still: initialize waits for no server.
    const initialized = yield* peer.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" }
    })
    expect(initialized.protocolVersion).toBe("2025-11-25")
    return { peer, seen }
  })

const toolNames = (listed: Record<string, unknown>) => (listed.tools as Array<{ name: string }>).map((t) => t.name)

describe("Gateway (in memory)", () => {
  it.scopedLive("initialize: capabilities, serverInfo and revision negotiation", () =>
    Effect.gen(function*() {
      const { connect } = yield* setup(twoServers)
      // A new session asking for `protocolVersion`.
      const initialize = (protocolVersion: string) =>
        Effect.flatMap(Effect.flatMap(connect, peerOf), (peer) =>
          peer.request("initialize", { protocolVersion, capabilities: {}, clientInfo: { name: "t", version: "1" } }))
      const asked = yield* initialize("2025-06-18")
      expect(asked.protocolVersion).toBe("2025-06-18")
      expect(asked.serverInfo).toMatchObject({ name: "mcp-fleet" })
      expect(asked.capabilities).toEqual({
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        completions: {},
        logging: {},
        extensions: { "io.modelcontextprotocol/skills": {} }
      })
      const unknown = yield* initialize("1999-01-01")
      expect(unknown.protocolVersion).toBe("2025-11-25")
    }))

  it.scopedLive("lists the catalog with qualified names, unknown fields kept, and routes calls", () =>
    Effect.gen(function*() {
      const { connect } = yield* setup(twoServers)
      const client = yield* clientOf(yield* connect)
      const tools = yield* client.listTools()
      expect(tools.map((t) => t.name).sort()).toEqual([
        "mcp__alpha__add",
        "mcp__alpha__echo",
        "mcp__alpha__fail",
        "mcp__beta__echo",
        "mcp__beta__multiply"
      ])
      const echo = tools.find((t) => t.name === "mcp__beta__echo")!
      expect(echo).toEqual({
        name: "mcp__beta__echo",
        description: "the echo tool",
        inputSchema: { type: "object" },
        "x-extra": { kept: true }
      })

      const result = yield* client.callTool("mcp__beta__echo", { text: "hi" })
      expect(result).toEqual({ content: [{ type: "text", text: `echo:{"text":"hi"}` }], "x-result": 1 })

      const prompts = yield* client.listPrompts()
      expect(prompts.map((p) => p.name)).toEqual(["mcp__alpha__greet"])
      const prompt = yield* client.getPrompt("mcp__alpha__greet", { who: "you" })
      expect(prompt.messages[0]!.content).toEqual({ type: "text", text: "hi you" })

      const resources = yield* client.listResources()
      expect(resources).toEqual([{ uri: "alpha://doc", name: "doc" }])
      const read = yield* client.readResource("alpha://doc")
      expect(read.contents).toEqual([{ uri: "alpha://doc", text: "alpha doc" }])
      const missing = failure(yield* Effect.exit(client.readResource("nowhere://x")))
      // The client speaks 2026-07-28 to the gateway: a resource nothing serves is -32602 (SEP-2164).
      expect(client.protocolVersion).toBe("2026-07-28")
      expect(missing.reason).toMatchObject({ _tag: "Protocol", code: -32602, data: { uri: "nowhere://x" } })
    }))

  it.scopedLive("unknown tools and prompts are -32602 with the closest names; a server's own error passes through", () =>
    Effect.gen(function*() {
      const { connect } = yield* setup(twoServers)
      const client = yield* clientOf(yield* connect)
      const unknown = failure(yield* Effect.exit(client.callTool("mcp__beta__multiplyy", {})))
      expect(unknown.reason).toMatchObject({ _tag: "Protocol", code: -32602 })
      expect((unknown.reason as McpError.ProtocolReason).message).toContain("did you mean 'mcp__beta__multiply'")
      const prompt = failure(yield* Effect.exit(client.getPrompt("mcp__alpha__gret")))
      expect((prompt.reason as McpError.ProtocolReason).message).toContain("'mcp__alpha__greet'")
      const own = failure(yield* Effect.exit(client.callTool("mcp__alpha__fail", {})))
      expect(own.reason).toMatchObject({ _tag: "Protocol", code: -32050, message: "alpha broke", data: { why: 1 } })
    }))

  it.scopedLive("methods and names named after Object.prototype members are unknown, and the session goes on", () =>
    Effect.gen(function*() {
      const { connect } = yield* setup(twoServers)
      const peer = yield* initializedPeer(yield* connect)
      for (const method of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
        const refused = failure(yield* Effect.exit(peer.request(method, {})))
        expect(refused.reason).toMatchObject({ _tag: "Protocol", code: -32601 })
        const tool = failure(yield* Effect.exit(peer.request("tools/call", { name: method, arguments: {} })))
        expect(tool.reason).toMatchObject({ _tag: "Protocol", code: -32602 })
        const prompt = failure(yield* Effect.exit(peer.request("prompts/get", { name: method })))
        expect(prompt.reason).toMatchObject({ _tag: "Protocol", code: -32602 })
        const level = failure(yield* Effect.exit(peer.request("logging/setLevel", { level: method })))
        expect(level.reason).toMatchObject({ _tag: "Protocol", code: -32602 })
      }
      expect(yield* peer.request("ping")).toEqual({})
      const listed = yield* peer.request("tools/list")
      expect((listed.tools as Array<unknown>).length).toBe(5)
    }))

  it.scopedLive("a call the fleet cannot carry out is a tool result with isError", () =>
    Effect.gen(function*() {
      const { connect } = yield* setup(twoServers, {
        callTool: (name) =>
          Effect.fail(
            McpError.timeout("beta", { method: `tools/call ${name}`, afterMs: 5, kind: "idle" })
          )
      })
      const client = yield* clientOf(yield* connect)
      const result = yield* client.callTool("mcp__beta__echo", {})
      expect(result.isError).toBe(true)
      expect(firstText(result)).toContain("did not answer")
    }))

  it.scopedLive("paginates with an opaque cursor and refuses a bad one", () =>
    Effect.gen(function*() {
      const { connect } = yield* setup(twoServers, { pageSize: 2 })
      const peer = yield* initializedPeer(yield* connect)
      const names: Array<string> = []
      let cursor: unknown = undefined
      let pages = 0
      do {
        const result: Record<string, any> = yield* peer.request("tools/list", cursor === undefined ? {} : { cursor })
        for (const tool of result.tools as ReadonlyArray<McpSchema.Tool>) names.push(tool.name)
        cursor = result.nextCursor
        pages++
      } while (cursor !== undefined)
      expect(pages).toBe(3)
      expect(names).toHaveLength(5)
      expect(new Set(names).size).toBe(5)
      const bad = failure(yield* Effect.exit(peer.request("tools/list", { cursor: "not-a-cursor" })))
      expect(bad.reason).toMatchObject({ _tag: "Protocol", code: -32602 })
      // Our own client follows every page.
      const client = yield* clientOf(yield* connect)
      expect(yield* client.listTools()).toHaveLength(5)
    }))

  it.scopedLive("fleet changes become one list_changed per list", () =>
    Effect.gen(function*() {
      const { connect, registry } = yield* setup(twoServers)
      const client = yield* clientOf(yield* connect)
      const seen = yield* client.subscribe
      yield* registry.reconcile([...twoServers, FakeServer.spec({ name: "gamma", tools: [tool("new")] })])
      const first = yield* Queue.take(seen)
      expect(first.method).toBe("notifications/tools/list_changed")
      expect(yield* client.listTools()).toHaveLength(6)
      // Removing beta and gamma at once is one burst: one notification.
      yield* registry.reconcile([twoServers[0]!])
      const second = yield* Queue.take(seen)
      expect(second.method).toBe("notifications/tools/list_changed")
      expect(yield* client.listTools()).toHaveLength(3)
      expect(yield* Queue.size(seen)).toBe(0)
    }))

  it.scoped("answers initialize at once; the first lists wait for a hung server only for the settle window", () =>
    Effect.gen(function*() {
      const { peer, seen } = yield* withLateServer("10 seconds")
      const first = yield* Effect.fork(peer.request("tools/list"))
      yield* TestClock.adjust("2 seconds")
      expect(first.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      expect(toolNames(yield* Fiber.join(first))).toEqual(["mcp__alpha__echo"])
      // The late server joins at 10 s, and is announced.
      yield* TestClock.adjust("7 seconds")
      yield* TestClock.adjust("20 millis")
      expect((yield* Queue.take(seen)).method).toBe("notifications/tools/list_changed")
      expect(toolNames(yield* peer.request("tools/list"))).toEqual(["mcp__alpha__echo", "mcp__late__later"])
    }))

  it.scoped("a call to a tool of a server still connecting waits for it within the settle window", () =>
    Effect.gen(function*() {
      const { peer } = yield* withLateServer("2 seconds")
      const call = yield* Effect.fork(peer.request("tools/call", { name: "mcp__late__later", arguments: {} }))
      // A name no server has is refused once the fleet has settled.
      const typo = yield* Effect.fork(Effect.exit(peer.request("tools/call", { name: "mcp__late__latr" })))
      yield* TestClock.adjust("1 second")
      expect(call.unsafePoll()).toBeNull()
      expect(typo.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(call)).content).toEqual([{ type: "text", text: "later:{}" }])
      const refused = failure(yield* Fiber.join(typo))
      expect(refused.reason).toMatchObject({ _tag: "Protocol", code: -32602 })
      expect(refused.message).toContain("did you mean 'mcp__late__later'?")
    }))

  it.scopedLive("progress goes to the caller with its own token; cancelling cancels the call at the server", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const slow = tool("slow", (_, context) =>
        Effect.gen(function*() {
          yield* context.progress(1, 3, "one")
          yield* context.progress(2, 3, "two")
          yield* Deferred.succeed(started, undefined)
          return yield* Effect.never
        }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))))
      const { connect } = yield* setup([FakeServer.spec({ name: "slowpoke", tools: [slow] })])
      const client = yield* clientOf(yield* connect)
      const progress: Array<Peer.Progress> = []
      const call = yield* client.callTool("mcp__slowpoke__slow", {}, {
        onProgress: (p) => Effect.sync(() => progress.push(p))
      }).pipe(Effect.fork)
      yield* Deferred.await(started)
      // Progress arrives before the server's handler goes quiet.
      yield* Effect.repeat(Effect.sync(() => progress.length), {
        until: (n) => n === 2,
        schedule: Schedule.spaced("10 millis")
      })
      expect(progress).toEqual([{ progress: 1, total: 3, message: "one" }, { progress: 2, total: 3, message: "two" }])
      yield* Fiber.interrupt(call)
      yield* Deferred.await(interrupted)
    }))

  it.scopedLive("progress sent just before the answer reaches the caller before the answer", () =>
    Effect.gen(function*() {
      const quick = tool("quick", (_, context) =>
        Effect.zipRight(
          Effect.forEach([1, 2, 3], (n) => context.progress(n, 3), { discard: true }),
          Effect.succeed(text("done"))
        ))
      const { connect } = yield* setup([FakeServer.spec({ name: "quick", tools: [quick] })])
      const client = yield* clientOf(yield* connect)
      for (let round = 0; round < 20; round++) {
        const progress: Array<number> = []
        yield* client.callTool("mcp__quick__quick", {}, {
          onProgress: (p) => Effect.sync(() => progress.push(p.progress))
        })
        expect(progress).toEqual([1, 2, 3])
      }
    }))

  it.scopedLive("plain naming: servers' own names where unique, qualified where shared; calls, prompts and completion follow", () =>
    Effect.gen(function*() {
      const completing = FakeServer.spec({
        name: "gamma",
        capabilities: { prompts: {}, completions: {} },
        prompts: [{ prompt: { name: "greet" }, get: () => ({ messages: [] }) }, {
          prompt: { name: "farewell" },
          get: () => ({ messages: [] })
        }],
        handlers: {
          "completion/complete": (request) =>
            Effect.succeed({ completion: { values: [`gamma:${(request.params as any).ref.name}`] } })
        }
      })
      const { connect } = yield* setup([...twoServers, completing], { naming: "plain" })
      const client = yield* clientOf(yield* connect)
      expect((yield* client.listTools()).map((t) => t.name).sort()).toEqual([
        "add",
        "fail",
        "mcp__alpha__echo",
        "mcp__beta__echo",
        "multiply"
      ])
      expect(yield* client.callTool("multiply", { x: 1 })).toMatchObject({ content: [{ text: `multiply:{"x":1}` }] })
      expect(yield* client.callTool("mcp__beta__echo", {})).toMatchObject({ content: [{ text: "echo:{}" }] })
      // A qualified name is accepted even where the plain one is listed.
      expect(yield* client.callTool("mcp__alpha__add", {})).toMatchObject({ content: [{ text: "add:{}" }] })
      // A shared name is no one's: refused, with the qualified names to choose from.
      const shared = failure(yield* Effect.exit(client.callTool("echo", {})))
      expect(shared.reason).toMatchObject({ _tag: "Protocol", code: -32602 })
      expect((shared.reason as McpError.ProtocolReason).message).toContain("mcp__alpha__echo")

      expect((yield* client.listPrompts()).map((p) => p.name).sort()).toEqual([
        "farewell",
        "mcp__alpha__greet",
        "mcp__gamma__greet"
      ])
      expect(yield* client.getPrompt("mcp__alpha__greet", { who: "you" })).toMatchObject({
        messages: [{ content: { text: "hi you" } }]
      })
      // Completion refs name prompts as the client sees them; the server gets its own name.
      const completion = yield* client.complete({ type: "ref/prompt", name: "farewell" }, { name: "a", value: "" })
      expect(completion.completion.values).toEqual(["gamma:farewell"])
    }))

  it.scopedLive("plain naming: a server joining with a name served plainly makes both qualified, with list_changed", () =>
    Effect.gen(function*() {
      const alpha = FakeServer.spec({ name: "alpha", tools: [tool("echo")] })
      const { connect, registry } = yield* setup([alpha], { naming: "plain" })
      const client = yield* clientOf(yield* connect)
      const seen = yield* client.subscribe
      expect((yield* client.listTools()).map((t) => t.name)).toEqual(["echo"])
      expect(yield* client.callTool("echo", { n: 1 })).toMatchObject({ content: [{ text: `echo:{"n":1}` }] })

      yield* registry.reconcile([alpha, FakeServer.spec({ name: "beta", tools: [tool("echo")] })])
      expect((yield* Queue.take(seen)).method).toBe("notifications/tools/list_changed")
      expect((yield* client.listTools()).map((t) => t.name).sort()).toEqual(["mcp__alpha__echo", "mcp__beta__echo"])
      // The plain name is not re-routed to either server.
      const moved = failure(yield* Effect.exit(client.callTool("echo", {})))
      expect(moved.reason).toMatchObject({ _tag: "Protocol", code: -32602 })

      yield* registry.reconcile([alpha])
      expect((yield* Queue.take(seen)).method).toBe("notifications/tools/list_changed")
      expect((yield* client.listTools()).map((t) => t.name)).toEqual(["echo"])
      expect(yield* client.callTool("echo", {})).toMatchObject({ content: [{ text: "echo:{}" }] })
    }))

  it.scopedLive("log messages of a routed call go to its caller; completion and subscriptions are routed", () =>
    Effect.gen(function*() {
      const loud = tool("loud", (_, context) =>
        Effect.gen(function*() {
          const peer = loudServer.current().peer
          yield* Effect.ignore(
            peer.notify("notifications/message", { level: "warning", logger: "loud", data: "careful" })
          )
          // Let the log message through the fleet before the answer.
          yield* Effect.sleep("50 millis")
          return text(String(context.request.id))
        }))
      const loudServer = FakeServer.spec({
        name: "loud",
        tools: [loud],
        resources: [{ resource: { uri: "loud://r", name: "r" }, text: "r" }],
        capabilities: { tools: {}, resources: { subscribe: true }, prompts: {}, logging: {}, completions: {} },
        handlers: {
          "completion/complete": (request) =>
            Effect.succeed({
              completion: {
                values: [`${(request.params as any).ref.name}:${(request.params as any).argument.value}!`]
              }
            })
        },
        prompts: [{ prompt: { name: "p" }, get: () => ({ messages: [] }) }]
      })
      const spec = loudServer
      const { connect } = yield* setup([spec])
      // A session's log messages: a stateful client (a 2026-07-28 one gets a call's through
      // CallToolOptions.onLog; its subscriptions are the next test's).
      const client = yield* McpClient.make({ requestTimeout: "10 seconds", protocolVersion: "2025-11-25" }).pipe(
        Effect.provideService(Transport, yield* connect)
      )
      const logs = yield* client.notifications.pipe(
        Stream.filter((n) => n.method === "notifications/message"),
        Stream.runHead,
        Effect.fork
      )
      yield* Effect.yieldNow()
      yield* client.callTool("mcp__loud__loud", {})
      const log = yield* Fiber.join(logs)
      expect(log._tag === "Some" && log.value.params).toMatchObject({
        level: "warning",
        logger: "loud",
        data: "careful"
      })

      const completion = yield* client.complete({ type: "ref/prompt", name: "mcp__loud__p" }, { name: "a", value: "x" })
      expect(completion.completion.values).toEqual(["p:x!"])

      yield* client.subscribeResource("loud://r")
      expect(loudServer.current().requests.map((r) => r.method)).toContain("resources/subscribe")
      const updated = yield* client.notifications.pipe(
        Stream.filter((n) => n.method === "notifications/resources/updated"),
        Stream.runHead,
        Effect.fork
      )
      yield* Effect.yieldNow()
      yield* Effect.ignore(loudServer.current().peer.notify("notifications/resources/updated", { uri: "loud://r" }))
      const update = yield* Fiber.join(updated)
      expect(update._tag === "Some" && update.value.params).toEqual({ uri: "loud://r" })
      yield* client.unsubscribeResource("loud://r")
      expect(loudServer.current().requests.map((r) => r.method)).toContain("resources/unsubscribe")
    }))

  it.scopedLive("a 2026-07-28 client's resource subscription is a listen stream, subscribed at the server behind", () =>
    Effect.gen(function*() {
      const loudServer = FakeServer.spec({
        name: "loud",
        resources: [{ resource: { uri: "loud://r", name: "r" }, text: "r" }]
      })
      const spec = loudServer
      const { connect } = yield* setup([spec])
      const client = yield* clientOf(yield* connect)
      expect(client.protocolVersion).toBe("2026-07-28")
      const updates = yield* client.subscribe
      yield* client.subscribeResource("loud://r")
      expect(loudServer.current().requests.map((r) => r.method)).toContain("resources/subscribe")
      yield* Effect.ignore(loudServer.current().peer.notify("notifications/resources/updated", { uri: "loud://r" }))
      const update = yield* Effect.repeat(Queue.take(updates), {
        until: (n) => n.method === "notifications/resources/updated"
      })
      expect(update.params).toEqual({ uri: "loud://r" })
      yield* client.unsubscribeResource("loud://r")
      yield* Effect.repeat(Effect.sync(() => loudServer.current().requests.map((r) => r.method)), {
        until: (methods) => methods.includes("resources/unsubscribe"),
        schedule: Schedule.spaced("10 millis")
      })
    }))

  it.scopedLive("a stateful server's log message during a 2026-07-28 call goes to that call, and to no other request", () =>
    Effect.gen(function*() {
      const loud = tool("loud", () =>
        Effect.gen(function*() {
          yield* Effect.ignore(
            loudServer.current().peer.notify("notifications/message", {
              level: "warning",
              logger: "loud",
              data: "careful"
            })
          )
          // Let the log message through the fleet before the answer.
          yield* Effect.sleep("50 millis")
          return text("done")
        }))
      const loudServer = FakeServer.spec({
        name: "loud",
        tools: [loud],
        capabilities: { tools: {}, logging: {} }
      })
      const { connect } = yield* setup([loudServer])
      const meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
      }
      // Two bare Peers: one calls, the other only lists (no call in flight: told nothing).
      const caller = yield* peerOf(yield* connect)
      const bystander = yield* peerOf(yield* connect)
      const told = yield* caller.subscribe
      const untold = yield* bystander.subscribe
      yield* bystander.request("tools/list", { _meta: meta })
      const result = yield* caller.request("tools/call", { name: "mcp__loud__loud", arguments: {}, _meta: meta })
      expect(result.content).toEqual([{ type: "text", text: "done" }])
      const log = yield* Queue.take(told)
      expect(log).toMatchObject({
        method: "notifications/message",
        params: { level: "warning", logger: "loud", data: "careful" }
      })
      expect(yield* Queue.size(untold)).toBe(0)
    }))

  it.scoped("a 2026-07-28 call's _meta goes on to the server but for its progress token and the keys the gateway's own replace", () =>
    Effect.gen(function*() {
      const echoServer = FakeServer.spec({ name: "echo", tools: [tool("echo")] })
      const { connect } = yield* setup([echoServer])
      const caller = yield* peerOf(yield* connect)
      yield* caller.request("tools/call", {
        name: "mcp__echo__echo",
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": { sampling: {} },
          "io.modelcontextprotocol/clientInfo": { name: "modern-client", version: "1" },
          "io.modelcontextprotocol/logLevel": "debug",
          progressToken: "p1",
          "example.com/trace": "t1"
        }
      })
      const call = echoServer.current().requests.find((r) => r.method === "tools/call")
      const meta = call?.params?._meta as Record<string, unknown>
      expect(meta["example.com/trace"]).toBe("t1")
      expect(meta["io.modelcontextprotocol/clientCapabilities"]).toEqual({ sampling: {} })
      expect(meta["io.modelcontextprotocol/clientInfo"]).toBeUndefined()
      expect(meta["io.modelcontextprotocol/logLevel"]).toBeUndefined()
      expect(meta["io.modelcontextprotocol/protocolVersion"]).toBeUndefined()
      expect(meta.progressToken).not.toBe("p1")
    }))

  it.scopedLive("a fleet's resource update reaches a 2026-07-28 listen stream tagged with its subscriptionId", () =>
    Effect.gen(function*() {
      const loudServer = FakeServer.spec({
        name: "loud",
        resources: [{ resource: { uri: "loud://r", name: "r" }, text: "r" }]
      })
      const { connect } = yield* setup([loudServer])
      // A bare Peer sees the stream's notifications as sent (McpClient takes the id off).
      const peer = yield* peerOf(yield* connect)
      const notifications = yield* peer.subscribe
      yield* peer.request("subscriptions/listen", {
        notifications: { resourceSubscriptions: ["loud://r"] },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }).pipe(Effect.forkScoped)
      const acknowledged = yield* Effect.repeat(Queue.take(notifications), {
        until: (n) => n.method === "notifications/subscriptions/acknowledged"
      })
      const id = (acknowledged.params?._meta as Record<string, unknown>)["io.modelcontextprotocol/subscriptionId"]
      expect(id).toBeDefined()
      yield* Effect.ignore(loudServer.current().peer.notify("notifications/resources/updated", { uri: "loud://r" }))
      const update = yield* Effect.repeat(Queue.take(notifications), {
        until: (n) => n.method === "notifications/resources/updated"
      })
      expect(update.params).toEqual({ uri: "loud://r", _meta: { "io.modelcontextprotocol/subscriptionId": id } })
    }))

  it.scopedLive("serveStdio: NDJSON both ways, garbage answered with a parse error, returns when the input ends", () =>
    Effect.gen(function*() {
      const input = new PassThrough()
      const output = new PassThrough()
      const lines: Array<any> = []
      output.on("data", (chunk: Buffer) => {
        for (const line of chunk.toString("utf8").split("\n")) if (line !== "") lines.push(JSON.parse(line))
      })
      const served = yield* NodeGateway.serveStdio({ input, output }).pipe(
        Effect.provide(
          Policy.layer({}).pipe(
            Layer.provideMerge(ServerRegistry.layer({ servers: twoServers })),
            Layer.provide(Platform)
          )
        ),
        Effect.fork
      )
      input.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) + "\n{oops\n")
      input.write(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "initialize",
          params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "t", version: "1" } }
        }) + "\n"
      )
      yield* Effect.repeat(Effect.sync(() => lines.length), {
        until: (n) => n >= 3,
        schedule: Schedule.spaced("10 millis")
      })
      expect(lines).toContainEqual({ jsonrpc: "2.0", id: 1, result: {} })
      expect(lines).toContainEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "not JSON" } })
      expect(lines.find((line) => line.id === 2).result.protocolVersion).toBe("2024-11-05")
      input.end()
      yield* Fiber.join(served)
    }))

  it.scopedLive("layerStdio serves in the background for as long as the layer lives", () =>
    Effect.gen(function*() {
      const input = new PassThrough()
      const output = new PassThrough()
      const lines: Array<any> = []
      output.on("data", (chunk: Buffer) => {
        for (const line of chunk.toString("utf8").split("\n")) if (line !== "") lines.push(JSON.parse(line))
      })
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(
        NodeGateway.layerStdio({ input, output }).pipe(
          Layer.provide(
            Policy.layer({}).pipe(
              Layer.provideMerge(ServerRegistry.layer({ servers: twoServers })),
              Layer.provide(Platform)
            )
          )
        ),
        scope
      )
      input.write(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
        }) + "\n"
      )
      input.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) + "\n")
      yield* Effect.repeat(Effect.sync(() => lines.length), {
        until: (n) => n >= 2,
        schedule: Schedule.spaced("10 millis")
      })
      expect(lines[1]).toMatchObject({ id: 1, result: { tools: expect.any(Array) } })
      yield* Scope.close(scope, Exit.void)
      // Closed, it reads no more.
      input.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }) + "\n")
      yield* Effect.sleep("100 millis")
      expect(lines).toHaveLength(2)
    }))

  it.scopedLive("Gateway.serve with the Policy: denied tools are hidden and unknown; a policy change is a list_changed", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(
        Policy.layer({ deny: ["mcp__beta__*"] }).pipe(
          Layer.provideMerge(ServerRegistry.layer({ servers: twoServers })),
          Layer.provide(Platform)
        )
      )
      const registry = yield* Effect.provide(ServerRegistry.ServerRegistry, context)
      const policy = yield* Effect.provide(Policy.Policy, context)
      yield* registry.awaitReady({ servers: "settled" })
      const [end, server] = yield* Memory.makePair({ server: "gateway", client: "client" })
      yield* Gateway.serve({ listChangedDebounce: "20 millis" }).pipe(
        Effect.provideService(Transport, server),
        Effect.provide(context),
        Effect.forkScoped
      )
      const client = yield* clientOf(end)
      const seen = yield* client.subscribe
      expect((yield* client.listTools()).map((t) => t.name).sort()).toEqual([
        "mcp__alpha__add",
        "mcp__alpha__echo",
        "mcp__alpha__fail"
      ])
      const hidden = failure(yield* Effect.exit(client.callTool("mcp__beta__echo", {})))
      expect(hidden.reason).toMatchObject({ _tag: "Protocol", code: -32602 })
      // Hidden tools are not suggested either.
      expect((hidden.reason as McpError.ProtocolReason).message).toBe("there is no tool 'mcp__beta__echo'")
      expect(firstText(yield* client.callTool("mcp__alpha__echo", { a: 1 }))).toBe(`echo:{"a":1}`)

      yield* policy.update({ deny: ["mcp__alpha__fail"] })
      expect((yield* Queue.take(seen)).method).toBe("notifications/tools/list_changed")
      expect(yield* client.listTools()).toHaveLength(4)
    }))

  it.scopedLive("the app's own tools: listed first under their names, called in the app past the Policy; a server's tool of the same name is qualified", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(
        Policy.layer({ deny: ["add"] }).pipe(
          Layer.provideMerge(ServerRegistry.layer({ servers: twoServers })),
          Layer.provide(Platform)
        )
      )
      yield* Effect.flatMap(ServerRegistry.ServerRegistry, (registry) => registry.awaitReady({ servers: "settled" }))
        .pipe(Effect.provide(context))
      const add = McpServer.tool({
        name: "add",
        description: "the app's add",
        parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
        handler: ({ a, b }) => Effect.succeed(text(String(a + b)))
      })
      const served = (tools: ReadonlyArray<McpServer.ToolItem>) =>
        Effect.gen(function*() {
          const [end, server] = yield* Memory.makePair({ server: "gateway", client: "client" })
          yield* Gateway.serve({ naming: "plain", tools }).pipe(
            Effect.provideService(Transport, server),
            Effect.provide(context),
            Effect.forkScoped
          )
          return end
        })
      const client = yield* clientOf(yield* served([add]))
      const [first, ...fleet] = (yield* client.listTools()).map((t) => t.name)
      expect(first).toBe("add")
      expect(fleet.sort()).toEqual(["fail", "mcp__alpha__add", "mcp__alpha__echo", "mcp__beta__echo", "multiply"])
      // The Policy's `deny: add` names no fleet tool listed as `add`: the app's tool runs.
      expect(firstText(yield* client.callTool("add", { a: 1, b: 2 }))).toBe("3")
      expect(firstText(yield* client.callTool("mcp__alpha__add", { x: 1 }))).toBe(`add:{"x":1}`)
      // A name of a server's qualified form is refused at start.
      const shadowing = McpServer.tool({ name: "mcp__alpha__echo", handler: () => Effect.succeed(text("mine")) })
      const [, end] = yield* Memory.makePair({ server: "gateway", client: "client" })
      const refused = yield* Effect.exit(
        Gateway.serve({ tools: [shadowing] }).pipe(Effect.provideService(Transport, end), Effect.provide(context))
      )
      expect(Exit.isFailure(refused) && String(refused.cause)).toContain("has the form of a server's qualified name")
    }))
})
