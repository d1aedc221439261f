import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import * as McpError from "../src/McpError.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Peer from "../src/Peer.js"
import type { RegistryEvent } from "../src/RegistryEvent.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import type * as ServerSpec from "../src/ServerSpec.js"
import type { ServerState } from "../src/ServerState.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure, text } from "../src/testing/Results.js"
import { stateOf, until } from "./support/events.js"
import { Platform } from "./support/platform.js"

const tool = (name: string, description = name): FakeServer.FakeTool => ({
  tool: { name, description, inputSchema: { type: "object" } },
  call: (args) => Effect.succeed(text(`${name}:${JSON.stringify(args)}`))
})

// A server of the fleet backed by a fake server (`current()` is the live fake, so a test
// can kill it), with the spec's other fields in `extra`.
const fake = (
  name: string,
  options: FakeServer.Options = { tools: [tool("echo")] },
  extra: Partial<ServerSpec.ServerSpec> = {},
  key = "v1"
) => ({ ...FakeServer.spec({ ...options, name, key }), ...extra })

// A server whose every connection is refused; `connects()` counts them.
const failing = (name: string, extra: Partial<ServerSpec.ServerSpec> = {}) => {
  let connects = 0
  return {
    name,
    transport: {
      type: "custom" as const,
      key: "failing",
      connect: Effect.suspend(() => {
        connects++
        return Effect.fail(McpError.transport(name, { message: "refused" }))
      })
    },
    ...extra,
    connects: () => connects
  }
}

const noJitter = {
  initialDelay: "100 millis",
  factor: 2,
  maxDelay: "1 second",
  jitter: 0,
  stableAfter: "10 seconds"
} as const

const registry = (options: ServerRegistry.Options = {}) =>
  ServerRegistry.make({ restart: noJitter, ...options }).pipe(Effect.provide(Platform))

// A registry whose events are subscribed to before `servers` start.
const started = (servers: ReadonlyArray<ServerSpec.ServerSpec>, options: ServerRegistry.Options = {}) =>
  Effect.gen(function*() {
    const fleet = yield* registry(options)
    const events = yield* fleet.subscribe
    yield* fleet.reconcile(servers)
    return { fleet, events }
  })

const statusOf = (fleet: ServerRegistry.ServerRegistry, name: string) =>
  Effect.map(fleet.status, (all) => all.find((status) => status.name === name)!)

const ready = (fleet: ServerRegistry.ServerRegistry, servers: ReadonlyArray<string>) =>
  fleet.awaitReady({ servers, timeout: "1 second" })

describe("ServerRegistry", () => {
  it.scoped("starts servers, names their tools and routes calls", () =>
    Effect.gen(function*() {
      const a = fake("alpha", { tools: [tool("echo"), tool("add")] })
      const b = fake("beta.server", { tools: [tool("echo")] })
      const fleet = yield* registry({ servers: [a, b] })
      yield* ready(fleet, ["alpha", "beta.server"])
      const catalog = yield* SubscriptionRef.get(fleet.catalog)
      expect(catalog.tools.map((entry) => entry.name).sort()).toEqual([
        "mcp__alpha__add",
        "mcp__alpha__echo",
        "mcp__beta_server__echo"
      ])
      const result = yield* fleet.callTool("mcp__beta_server__echo", { x: 1 })
      expect(result.content).toEqual([{ type: "text", text: "echo:{\"x\":1}" }])
      const status = yield* statusOf(fleet, "alpha")
      expect(status).toMatchObject({
        state: { _tag: "Ready", protocolVersion: "2025-11-25" },
        transport: "custom",
        serverInfo: { name: "alpha" },
        counts: { tools: 2, resources: 0, prompts: 0 }
      })
    }))

  it.scoped("an unknown tool fails with the closest names", () =>
    Effect.gen(function*() {
      const a = fake("memory", { tools: [tool("read_graph"), tool("create_entities")] })
      const fleet = yield* registry({ servers: [a] })
      yield* ready(fleet, ["memory"])
      const error = failure(yield* Effect.exit(fleet.callTool("mcp__memory__read_grph")))
      expect(error.reason).toMatchObject({ _tag: "NotFound", what: "tool", suggestions: ["mcp__memory__read_graph"] })
      expect(error.message).toBe("there is no tool 'mcp__memory__read_grph'; did you mean 'mcp__memory__read_graph'?")
      expect(error.server).toBeUndefined()
      const missing = failure(yield* Effect.exit(fleet.readResource("memroy", "x://y")))
      expect(missing.message).toBe("there is no server 'memroy'; did you mean 'memory'?")
    }))

  it.scoped("backs off exponentially up to the cap, on the Clock", () =>
    Effect.gen(function*() {
      const broken = failing("broken")
      const { events } = yield* started([broken])
      const retries: Array<number | undefined> = []
      for (let attempt = 1; attempt <= 6; attempt++) {
        const failed = yield* until(events, stateOf("broken", "Failed"))
        const state = failed.state as Extract<ServerState, { _tag: "Failed" }>
        expect(state.attempt).toBe(attempt)
        const now = yield* TestClock.currentTimeMillis
        retries.push(state.retryAt! - now)
        expect(state.error.message).toBe("server 'broken': refused")
        yield* TestClock.adjust(state.retryAt! - now)
      }
      expect(retries).toEqual([100, 200, 400, 800, 1000, 1000])
      expect(broken.connects()).toBe(7)
    }))

  it.scoped("jitter varies each delay within its bounds", () =>
    Effect.gen(function*() {
      const broken = failing("broken")
      const { events } = yield* started([broken], {
        restart: { ...noJitter, initialDelay: "1 second", maxDelay: "1 minute", jitter: 0.5 }
      })
      for (let attempt = 1; attempt <= 4; attempt++) {
        const failed = yield* until(events, stateOf("broken", "Failed"))
        const state = failed.state as Extract<ServerState, { _tag: "Failed" }>
        const delay = state.retryAt! - (yield* TestClock.currentTimeMillis)
        const base = 1000 * 2 ** (attempt - 1)
        expect(delay).toBeGreaterThanOrEqual(base * 0.5)
        expect(delay).toBeLessThanOrEqual(base * 1.5)
        yield* TestClock.adjust(delay)
      }
    }))

  it.scoped("stops retrying after the attempt limit", () =>
    Effect.gen(function*() {
      const broken = failing("broken", { restart: { maxAttempts: 3 } })
      const { events, fleet } = yield* started([broken])
      for (let attempt = 1; attempt <= 2; attempt++) {
        yield* until(events, stateOf("broken", "Failed"))
        yield* TestClock.adjust("1 second")
      }
      const last = yield* until(events, stateOf("broken", "Failed"))
      expect(last.state).toMatchObject({ attempt: 3, retryAt: undefined })
      yield* TestClock.adjust("1 hour")
      expect(broken.connects()).toBe(3)
      const error = failure(yield* Effect.exit(fleet.withClient("broken", () => Effect.void)))
      expect(error.reason).toMatchObject({ _tag: "Unavailable", state: "Failed" })
      expect(error.message).toBe(
        "server 'broken': failed after 3 attempts and is not retried: server 'broken': refused"
      )
      // A restart gives it a fresh set of attempts.
      yield* fleet.restart("broken")
      yield* until(events, stateOf("broken", "Connecting"))
      expect((yield* until(events, stateOf("broken", "Failed"))).state).toMatchObject({ attempt: 1 })
    }))

  it.scoped("forgets failures once a server has been up for the stable period", () =>
    Effect.gen(function*() {
      const flaky = fake("flaky")
      const { events } = yield* started([flaky])
      yield* until(events, stateOf("flaky", "Ready"))
      // Two quick crashes count up...
      for (const attempt of [1, 2]) {
        yield* flaky.current().close
        const failed = yield* until(events, stateOf("flaky", "Failed"))
        expect(failed.state).toMatchObject({ attempt })
        yield* TestClock.adjust("1 second")
        yield* until(events, stateOf("flaky", "Ready"))
      }
      // ...a crash after 10 s of uptime starts again from 1.
      yield* TestClock.adjust("10 seconds")
      yield* flaky.current().close
      expect((yield* until(events, stateOf("flaky", "Failed"))).state).toMatchObject({ attempt: 1 })
    }))

  it.scoped("restarts a server that stops answering pings", () =>
    Effect.gen(function*() {
      const mute = fake(
        "mute",
        { tools: [tool("echo")], handlers: { ping: () => Effect.never } },
        { health: { interval: "1 second", timeout: "500 millis", failures: 2 } }
      )
      const { events } = yield* started([mute])
      yield* until(events, stateOf("mute", "Ready"))
      yield* TestClock.adjust("1500 millis")
      expect(mute.connects()).toBe(1)
      yield* TestClock.adjust("1500 millis")
      const failed = yield* until(events, stateOf("mute", "Failed"))
      expect(failed.state).toMatchObject({ attempt: 1 })
      expect((failed.state as any).error.reason).toMatchObject({ _tag: "Timeout", method: "ping" })
      yield* TestClock.adjust("100 millis")
      yield* until(events, stateOf("mute", "Ready"))
      expect(mute.connects()).toBe(2)
    }))

  it.scoped("answered pings keep a server up", () =>
    Effect.gen(function*() {
      const fine = fake("fine", { tools: [tool("echo")], handlers: { ping: () => Effect.succeed({}) } }, {
        health: { interval: "1 second", failures: 1 }
      })
      const fleet = yield* registry({ servers: [fine] })
      yield* ready(fleet, ["fine"])
      yield* TestClock.adjust("1 minute")
      expect(fine.connects()).toBe(1)
      expect(fine.current().requests.filter((request) => request.method === "ping").length).toBe(60)
    }))

  it.scoped("re-lists once after a burst of list_changed and publishes the difference", () =>
    Effect.gen(function*() {
      let tools: Array<McpSchema.Tool> = [
        { name: "keep", inputSchema: { type: "object" } },
        { name: "drop", inputSchema: { type: "object" } },
        { name: "edit", description: "v1", inputSchema: { type: "object" } }
      ]
      const live = fake("live", {
        capabilities: { tools: { listChanged: true } },
        handlers: { "tools/list": () => Effect.sync(() => ({ tools })) }
      })
      const { events, fleet } = yield* started([live])
      const first = yield* until(events, (event) => event._tag === "ToolsChanged")
      expect(first.added.map((t) => t.name)).toEqual(["keep", "drop", "edit"])
      tools = [tools[0]!, { name: "edit", description: "v2", inputSchema: { type: "object" } }, {
        name: "new",
        inputSchema: { type: "object" }
      }]
      for (let i = 0; i < 3; i++) {
        yield* live.current().peer.notify("notifications/tools/list_changed")
        yield* TestClock.adjust("50 millis")
      }
      const listsBefore = live.current().requests.filter((request) => request.method === "tools/list").length
      yield* TestClock.adjust("200 millis")
      const changed = yield* until(events, (event) => event._tag === "ToolsChanged")
      expect(changed).toMatchObject({ server: "live" })
      expect(changed.added.map((t) => t.name)).toEqual(["new"])
      expect(changed.removed.map((t) => t.name)).toEqual(["drop"])
      expect(changed.changed.map((t) => t.description)).toEqual(["v2"])
      expect(live.current().requests.filter((request) => request.method === "tools/list").length).toBe(
        listsBefore + 1
      )
      const catalog = yield* SubscriptionRef.get(fleet.catalog)
      expect(catalog.tools.map((entry) => entry.tool.name).sort()).toEqual(["edit", "keep", "new"])
    }))

  it.scoped("a failed re-list keeps the last good list and reports the error", () =>
    Effect.gen(function*() {
      let fail = false
      const live = fake("live", {
        capabilities: { tools: { listChanged: true } },
        handlers: {
          "tools/list": () =>
            fail
              ? Effect.fail(new Peer.HandlerError({ code: -32603, message: "database down" }))
              : Effect.succeed({ tools: [{ name: "a", inputSchema: { type: "object" } }] })
        }
      })
      const { events, fleet } = yield* started([live])
      yield* until(events, stateOf("live", "Ready"))
      fail = true
      yield* live.current().peer.notify("notifications/tools/list_changed")
      yield* TestClock.adjust("1 second")
      const failed = yield* until(events, (event) => event._tag === "RefreshFailed")
      expect(failed.error.message).toBe("server 'live' answered tools/list with error -32603: database down")
      const catalog = yield* SubscriptionRef.get(fleet.catalog)
      expect(catalog.tools.map((entry) => entry.name)).toEqual(["mcp__live__a"])
      expect((yield* statusOf(fleet, "live")).state._tag).toBe("Ready")
    }))

  it.scoped("a call made while the server restarts waits for it and is never sent to the dead connection", () =>
    Effect.gen(function*() {
      const flaky = fake("flaky")
      const { events, fleet } = yield* started([flaky])
      yield* until(events, stateOf("flaky", "Ready"))
      const dead = flaky.current()
      yield* dead.close
      yield* until(events, stateOf("flaky", "Failed"))
      const call = yield* Effect.fork(fleet.callTool("mcp__flaky__echo", { n: 1 }))
      yield* TestClock.adjust("100 millis")
      const result = yield* Fiber.join(call)
      expect(result.content).toEqual([{ type: "text", text: "echo:{\"n\":1}" }])
      expect(dead.requests.some((request) => request.method === "tools/call")).toBe(false)
      expect(flaky.current().requests.filter((request) => request.method === "tools/call").length).toBe(1)
    }))

  it.scoped("leaves Ready in the very step its connection is seen closed; a call made then waits for the restart", () =>
    Effect.gen(function*() {
      const flaky = fake("flaky")
      const { events, fleet } = yield* started([flaky])
      yield* until(events, stateOf("flaky", "Ready"))
      const connection = yield* fleet.withClient("flaky", Effect.succeed)
      const dead = flaky.current()
      yield* dead.close
      // Resumed by the connection's end, like anything else that watches it.
      yield* connection.closed
      expect((yield* statusOf(fleet, "flaky")).state).toMatchObject({ _tag: "Failed", attempt: 1 })
      const call = yield* Effect.fork(fleet.callTool("mcp__flaky__echo", { n: 1 }))
      yield* TestClock.adjust("100 millis")
      expect((yield* Fiber.join(call)).content).toEqual([{ type: "text", text: "echo:{\"n\":1}" }])
      expect(dead.requests.some((request) => request.method === "tools/call")).toBe(false)
    }))

  it.scoped("a call refused because its connection had closed before it was sent waits for the restart", () =>
    Effect.gen(function*() {
      const flaky = fake("flaky")
      const { events, fleet } = yield* started([flaky])
      yield* until(events, stateOf("flaky", "Ready"))
      const dead = flaky.current()
      // Hung up, and called at once: the transport refuses the call before the fleet has
      // heard of the end.
      const call = yield* Effect.fork(Effect.zipRight(dead.close, fleet.callTool("mcp__flaky__echo", { n: 2 })))
      yield* TestClock.adjust("100 millis")
      expect((yield* Fiber.join(call)).content).toEqual([{ type: "text", text: "echo:{\"n\":2}" }])
      expect(dead.requests.some((request) => request.method === "tools/call")).toBe(false)
      expect(flaky.connects()).toBe(2)
    }))

  it.scoped("a call waiting on a server whose config changes goes on to the new one", () =>
    Effect.gen(function*() {
      const broken = failing("svc")
      const { events, fleet } = yield* started([broken])
      yield* until(events, stateOf("svc", "Failed"))
      const call = yield* Effect.fork(fleet.withClient("svc", (client) => Effect.succeed(client.serverInfo.name)))
      yield* Effect.yieldNow()
      const fixed = fake("svc", { tools: [tool("echo")] }, {}, "fixed")
      expect((yield* fleet.reconcile([fixed])).restarted).toEqual(["svc"])
      expect(yield* Fiber.join(call)).toBe("svc")
      expect(fixed.connects()).toBe(1)
    }))

  it.scoped("a call gives up waiting after the ready timeout", () =>
    Effect.gen(function*() {
      const broken = failing("broken", { readyTimeout: "2 seconds" })
      const fleet = yield* registry({ servers: [broken] })
      const call = yield* Effect.fork(Effect.exit(fleet.withClient("broken", () => Effect.void)))
      yield* TestClock.adjust("2 seconds")
      const error = failure(yield* Fiber.join(call))
      expect(error.reason._tag).toBe("Unavailable")
      expect(error.message).toContain(
        "server 'broken': was not ready within 2000 ms (last error: server 'broken': refused)"
      )
    }))

  it.scoped("a call in flight when the server dies fails with a clear error", () =>
    Effect.gen(function*() {
      const slow = fake("slow", {
        tools: [{ tool: { name: "wait", inputSchema: { type: "object" } }, call: () => Effect.never }]
      })
      const fleet = yield* registry({ servers: [slow] })
      yield* ready(fleet, ["slow"])
      const call = yield* Effect.fork(Effect.exit(fleet.callTool("mcp__slow__wait")))
      yield* Effect.yieldNow()
      yield* TestClock.adjust("10 millis")
      yield* slow.current().close
      const error = failure(yield* Fiber.join(call))
      // It may have run, and `wait` has no annotation that allows sending it again.
      expect(error.reason).toMatchObject({ _tag: "InDoubt", tool: "wait" })
      expect((error.cause as McpError.McpError).reason).toMatchObject({ _tag: "Closed", method: "tools/call" })
    }))

  it.scoped("reconcile adds, removes, restarts changed and leaves identical servers untouched", () =>
    Effect.gen(function*() {
      const keep = fake("keep")
      const change = fake("change")
      const remove = fake("remove")
      const fleet = yield* registry({ servers: [keep, change, remove] })
      yield* ready(fleet, ["keep", "change", "remove"])
      const events = yield* fleet.subscribe
      const keptConnection = keep.current()
      const changed = fake("change", { tools: [tool("echo"), tool("more")] }, {}, "v2")
      const add1 = fake("add1")
      const add2 = fake("add2")
      const result = yield* fleet.reconcile([keep, changed, add1, add2])
      expect(result).toEqual({
        added: ["add1", "add2"],
        removed: ["remove"],
        restarted: ["change"],
        unchanged: ["keep"]
      })
      yield* ready(fleet, ["keep", "change", "add1", "add2"])
      expect(keep.connects()).toBe(1)
      expect(keep.current()).toBe(keptConnection)
      expect(change.connects()).toBe(1)
      expect(changed.connects()).toBe(1)
      const toolEvents: Array<RegistryEvent> = []
      while (!(yield* Queue.isEmpty(events))) toolEvents.push(yield* Queue.take(events))
      const byServer = toolEvents.filter((event) => event._tag === "ToolsChanged").map((event: any) => ({
        server: event.server,
        added: event.added.map((t: McpSchema.Tool) => t.name),
        removed: event.removed.map((t: McpSchema.Tool) => t.name)
      }))
      // The changed server keeps "echo" without a remove/add flicker: only "more" is new.
      expect(byServer).toContainEqual({ server: "change", added: ["more"], removed: [] })
      expect(byServer).toContainEqual({ server: "remove", added: [], removed: ["echo"] })
      expect(toolEvents.some((event) => event._tag === "ServerStateChanged" && event.server === "keep")).toBe(false)
      const names = (yield* fleet.status).map((status) => status.name)
      expect(names).toEqual(["keep", "change", "add1", "add2"])
      const catalog = yield* SubscriptionRef.get(fleet.catalog)
      expect(catalog.tools.some((entry) => entry.server === "remove")).toBe(false)
    }))

  it.scoped("reconciling 100 servers with one change touches exactly one", () =>
    Effect.gen(function*() {
      const servers = Array.from({ length: 100 }, (_, i) => fake(`s${i}`))
      const fleet = yield* registry({ servers: servers.map((server) => server) })
      yield* fleet.awaitReady({ servers: servers.map((server) => server.name) })
      const events = yield* fleet.subscribe
      const changed = fake("s42", { tools: [tool("echo")] }, {}, "v2")
      const desired = servers.map((server, i) => i === 42 ? changed : server)
      const result = yield* fleet.reconcile(desired)
      expect(result.restarted).toEqual(["s42"])
      expect(result.unchanged.length).toBe(99)
      const touched = new Set<string>()
      const s42Ready = stateOf("s42", "Ready")
      for (let event = yield* Queue.take(events); !s42Ready(event); event = yield* Queue.take(events)) {
        if ("server" in event) touched.add(event.server)
      }
      expect(servers.every((server, i) => server.connects() === 1 && (i !== 42 || changed.connects() === 1)))
        .toBe(
          true
        )
      for (const event of yield* Queue.takeAll(events)) if ("server" in event) touched.add(event.server)
      expect([...touched]).toEqual(["s42"])
    }))

  it.scoped("disable stops a server and removes its tools; enable brings both back", () =>
    Effect.gen(function*() {
      const a = fake("a")
      const fleet = yield* registry({ servers: [a] })
      yield* ready(fleet, ["a"])
      const events = yield* fleet.subscribe
      yield* fleet.disable("a")
      yield* until(events, stateOf("a", "Disabled"))
      expect((yield* SubscriptionRef.get(fleet.catalog)).tools).toEqual([])
      const error = failure(yield* Effect.exit(fleet.callTool("mcp__a__echo")))
      expect(error.reason._tag).toBe("NotFound")
      yield* fleet.enable("a")
      yield* until(events, stateOf("a", "Ready"))
      expect((yield* SubscriptionRef.get(fleet.catalog)).tools.map((entry) => entry.name)).toEqual(["mcp__a__echo"])
      expect(a.connects()).toBe(2)
    }))

  it.scoped("a disabled server in the config is known but never started", () =>
    Effect.gen(function*() {
      const off = fake("off", undefined, { disabled: true })
      const { events, fleet } = yield* started([off])
      yield* until(events, stateOf("off", "Disabled"))
      yield* TestClock.adjust("1 minute")
      expect((yield* statusOf(fleet, "off")).state._tag).toBe("Disabled")
      expect(off.connects()).toBe(0)
    }))

  it.scoped("an idle server stops after its idle timeout and starts again on the next call", () =>
    Effect.gen(function*() {
      const lazy = fake("lazy", { tools: [tool("echo")] }, { idleTimeout: "5 minutes" })
      const { events, fleet } = yield* started([lazy])
      yield* until(events, stateOf("lazy", "Ready"))
      yield* TestClock.adjust("4 minutes")
      yield* fleet.callTool("mcp__lazy__echo")
      yield* TestClock.adjust("4 minutes")
      expect((yield* statusOf(fleet, "lazy")).state._tag).toBe("Ready")
      yield* TestClock.adjust("1 minute")
      yield* until(events, stateOf("lazy", "Idle"))
      // Its tools stay in the catalog while it sleeps.
      expect((yield* SubscriptionRef.get(fleet.catalog)).tools.map((entry) => entry.name)).toEqual(["mcp__lazy__echo"])
      const result = yield* fleet.callTool("mcp__lazy__echo", { again: true })
      expect(result.content).toEqual([{ type: "text", text: "echo:{\"again\":true}" }])
      expect(lazy.connects()).toBe(2)
    }))

  it.scoped("awaitReady fails at once when a required server fails for good, and lists laggards on timeout", () =>
    Effect.gen(function*() {
      const broken = failing("broken", { required: true, restart: { maxAttempts: 1 } })
      const fleet = yield* registry({ servers: [broken, fake("ok")] })
      const error = failure(yield* Effect.exit(fleet.awaitReady()))
      expect(error.message).toBe(
        "server 'broken': cannot become ready: Failed after 1 attempt: server 'broken': refused"
      )
      const retrying = failing("retrying", { required: true })
      yield* fleet.reconcile([retrying])
      const waiting = yield* Effect.fork(Effect.exit(fleet.awaitReady({ timeout: "3 seconds" })))
      yield* TestClock.adjust("3 seconds")
      const late = failure(yield* Fiber.join(waiting))
      expect(late.server).toBe("retrying")
      expect(late.message).toMatch(
        /^server 'retrying': not ready in time: 'retrying' is Failed \(attempt \d+, retry in \d+ ms\): server 'retrying': refused$/
      )
      // The wait left is counted from now: never more than the 1 s cap.
      expect(Number(/retry in (\d+) ms/.exec(late.message)![1])).toBeLessThanOrEqual(1000)
      // Several laggards are the fleet's failure: no server, each one named in the message.
      const other = failing("other", { required: true })
      yield* fleet.reconcile([retrying, other])
      const both = yield* Effect.fork(Effect.exit(fleet.awaitReady({ timeout: "3 seconds" })))
      yield* TestClock.adjust("3 seconds")
      const many = failure(yield* Fiber.join(both))
      expect(many.server).toBeUndefined()
      expect(many.reason).toMatchObject({ _tag: "Unavailable", state: "NotReady" })
      expect(many.message).toMatch(
        /^not ready in time: 'retrying' is Failed \([^)]*\): server 'retrying': refused; 'other' is Failed \([^)]*\): server 'other': refused$/
      )
    }))

  it.scoped("a subscriber that never reads does not hold the fleet up", () =>
    Effect.gen(function*() {
      const live = fake("live", {
        capabilities: { tools: { listChanged: true }, logging: {} },
        handlers: { "tools/list": () => Effect.succeed({ tools: [] }) }
      })
      const fleet = yield* registry({ servers: [live], eventBuffer: 16 })
      const stuck = yield* fleet.subscribe
      yield* ready(fleet, ["live"])
      const fresh = yield* fleet.subscribe
      for (let i = 0; i < 100; i++) {
        yield* live.current().peer.notify("notifications/message", { level: "info", data: i })
      }
      const last = yield* until(fresh, (event): event is any => event._tag === "LogMessage" && event.data === 99)
      expect(last).toMatchObject({ server: "live", level: "info" })
      expect(yield* Queue.size(stuck)).toBeLessThanOrEqual(16)
    }))

  it.scoped("closing the registry stops every server", () =>
    Effect.gen(function*() {
      const a = fake("a")
      const b = fake("b")
      yield* Effect.scoped(Effect.gen(function*() {
        const fleet = yield* registry({ servers: [a, b] })
        yield* ready(fleet, ["a", "b"])
      }))
      for (const server of [a, b]) {
        const why = yield* server.current().peer.closed
        expect(why.reason._tag).toBe("Closed")
      }
    }))

  describe("tasks", () => {
    // A server whose `long` tool runs as a task: it says "halfway", then waits for `release`.
    const tasking = (release: Deferred.Deferred<void>) =>
      fake("jobs", {
        notifyTaskStatus: true,
        taskPollInterval: 45_000,
        tools: [{
          tool: { name: "long", inputSchema: { type: "object" }, execution: { taskSupport: "required" } },
          call: (_, context) =>
            Effect.zipRight(
              Effect.zipRight(context.status("halfway"), Deferred.await(release)),
              Effect.succeed(text("done"))
            )
        }]
      })
    const taskEvent =
      (status: string, statusMessage?: string) =>
      (event: RegistryEvent): event is Extract<RegistryEvent, { _tag: "TaskStatusChanged" }> =>
        event._tag === "TaskStatusChanged" && event.status === status &&
        (statusMessage === undefined || event.statusMessage === statusMessage)

    it.scoped("a routed call that runs as a task shows in the server's status and events until it is done", () =>
      Effect.gen(function*() {
        const release = yield* Deferred.make<void>()
        const { events, fleet } = yield* started([tasking(release)])
        yield* ready(fleet, ["jobs"])
        const call = yield* Effect.fork(fleet.callTool("mcp__jobs__long", {}))
        const halfway = yield* until(events, taskEvent("working", "halfway"))
        expect(halfway).toMatchObject({ server: "jobs", tool: "long" })
        expect((yield* statusOf(fleet, "jobs")).tasks).toEqual([{
          id: halfway.taskId,
          tool: "long",
          status: "working",
          statusMessage: "halfway",
          createdAt: "1970-01-01T00:00:00.000Z"
        }])
        yield* Deferred.succeed(release, undefined)
        yield* until(events, taskEvent("completed"))
        expect((yield* Fiber.join(call)).content).toEqual([{ type: "text", text: "done" }])
        expect((yield* statusOf(fleet, "jobs")).tasks).toEqual([])
      }))

    it.scoped("interrupting a routed call cancels its task, published as cancelled", () =>
      Effect.gen(function*() {
        const release = yield* Deferred.make<void>()
        const server = tasking(release)
        const { events, fleet } = yield* started([server])
        yield* ready(fleet, ["jobs"])
        const call = yield* Effect.fork(fleet.callTool("mcp__jobs__long", {}))
        const { taskId } = yield* until(events, taskEvent("working", "halfway"))
        yield* Fiber.interrupt(call)
        yield* until(events, taskEvent("cancelled"))
        expect(server.current().requests.find((request) => request.method === "tasks/cancel")?.params)
          .toEqual({ taskId })
        expect((yield* statusOf(fleet, "jobs")).tasks).toEqual([])
      }))
  })
})
