// The fault suite: servers that misbehave on purpose, as real child processes
// (test/fixtures/faulty.mjs) and real HTTP servers on 127.0.0.1 — a crash in flight, a hang,
// a flood, an oversize message, a broken answer, stalled HTTP bodies, and names of
// Object.prototype members from a server and from a gateway client — each with the bound it
// must keep asserted. The decoder fuzz is in fuzz.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as Queue from "effect/Queue"
import { fileURLToPath } from "node:url"
import type * as McpSchema from "../src/McpSchema.js"
import type { RegistryEvent } from "../src/RegistryEvent.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import type * as ServerSpec from "../src/ServerSpec.js"
import * as Stdio from "../src/Stdio.js"
import { stateOf, until as untilEvent } from "./support/events.js"
import { Platform } from "./support/platform.js"
import { survivors } from "./support/processes.js"
import { failure, firstText } from "./support/results.js"

const FAULTY = fileURLToPath(new URL("./fixtures/faulty.mjs", import.meta.url))
const PROTOTYPE_NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty"] as const

// Every child inherits this, so survivors can be found in /proc.
const MARKER = "MCP_FLEET_FAULTS_TEST_RUN"
const RUN_ID = `${process.pid}-${Date.now()}`
process.env[MARKER] = RUN_ID

const faulty = (name: string, extra: Partial<ServerSpec.ServerSpec> = {}): ServerSpec.ServerSpec => ({
  name,
  transport: { type: "stdio", command: process.execPath, args: [FAULTY] },
  restart: { initialDelay: "100 millis", maxDelay: "1 second", jitter: 0 },
  ...extra
})

// Real processes: a wait that never ends fails the test instead of hanging it.
const until = <A extends RegistryEvent>(
  events: Queue.Dequeue<RegistryEvent>,
  match: (event: RegistryEvent) => event is A
) => untilEvent(events, match).pipe(Effect.timeout("20 seconds"))

// A fleet of `specs`, ready, with its events from then on.
const fleetOf = (...specs: ReadonlyArray<ServerSpec.ServerSpec>) =>
  Effect.gen(function*() {
    const fleet = yield* ServerRegistry.make()
    yield* fleet.reconcile(specs)
    yield* fleet.awaitReady({ servers: specs.map((spec) => spec.name), timeout: "20 seconds" })
    return { fleet, events: yield* fleet.subscribe }
  })

// Matches `server` leaving Ready (for the state it goes to after a failure).
const leftReady = (server: string) => (event: RegistryEvent): event is RegistryEvent =>
  event._tag === "ServerStateChanged" && event.server === server && event.state._tag !== "Ready"

const pidOf = (fleet: ServerRegistry.ServerRegistry, name: string) =>
  Effect.map(fleet.status, (all) => all.find((status) => status.name === name)?.connection?.pid as number)

const stateNow = (fleet: ServerRegistry.ServerRegistry, name: string) =>
  Effect.map(fleet.status, (all) => all.find((status) => status.name === name)?.state._tag)

// How long an effect took, in milliseconds, with its exit.
const timed = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.timed(Effect.exit(effect)), ([took, exit]) => ({ ms: Duration.toMillis(took), exit }))

const text = (result: McpSchema.CallToolResult) => firstText(result)

// The first log lines of a test: the faults below are logged, and kept out of the test output.
const logged: Array<string> = []
const keepLogs = Logger.make(({ message }) => {
  if (logged.length < 100) logged.push(Array.isArray(message) ? message.join(" ") : String(message))
})

// A test on the real platform, its log lines kept in `logged`.
const onPlatform = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    logged.length = 0
    return effect
  }).pipe(Effect.provide(Layer.merge(Platform, Logger.replace(Logger.defaultLogger, keepLogs))))

describe("faults of a stdio server", () => {
  it.scopedLive("a crash in flight fails the call with Closed within 1 s; the server is back within 2 s", () =>
    Effect.gen(function*() {
      const { events, fleet } = yield* fleetOf(faulty("crashy"))
      const pid = yield* pidOf(fleet, "crashy")
      const call = yield* timed(fleet.callTool("mcp__crashy__crash", {}, { timeout: "30 seconds" }))
      expect(failure(call.exit).reason).toMatchObject({ _tag: "Closed", exitCode: 3 })
      expect(failure(call.exit).message).toContain("fatal: crashed on purpose")
      expect(call.ms).toBeLessThan(1000)
      yield* until(events, stateOf("crashy", "Failed"))
      const back = yield* timed(until(events, stateOf("crashy", "Ready")))
      expect(back.ms).toBeLessThan(2000)
      expect(yield* pidOf(fleet, "crashy")).not.toBe(pid)
      expect(text(yield* fleet.callTool("mcp__crashy__echo", { text: "again" }))).toBe("again")
    }).pipe(onPlatform))

  it.scopedLive("a call that hangs times out at its deadline (within 250 ms after); the server stays Ready", () =>
    Effect.gen(function*() {
      const { fleet } = yield* fleetOf(faulty("hangs"))
      const call = yield* timed(fleet.callTool("mcp__hangs__hang", {}, { timeout: "300 millis" }))
      expect(failure(call.exit).reason).toMatchObject({ _tag: "Timeout", afterMs: 300, kind: "idle" })
      expect(call.ms).toBeGreaterThanOrEqual(300)
      expect(call.ms).toBeLessThan(550)
      expect(yield* stateNow(fleet, "hangs")).toBe("Ready")
      expect(text(yield* fleet.callTool("mcp__hangs__echo", { text: "still here" }))).toBe("still here")
    }).pipe(onPlatform))

  it.scopedLive("a server that stops answering is caught by its health check and restarted within 3 s", () =>
    Effect.gen(function*() {
      const { events, fleet } = yield* fleetOf(
        faulty("frozen", { health: { interval: "200 millis", timeout: "200 millis", failures: 2 } })
      )
      const pid = yield* pidOf(fleet, "frozen")
      const call = yield* timed(fleet.callTool("mcp__frozen__freeze", {}, { timeout: "300 millis" }))
      expect(failure(call.exit).reason._tag).toBe("Timeout")
      // Two failed pings (interval + timeout each), the restart delay, a new start.
      const back = yield* timed(
        Effect.zipRight(until(events, leftReady("frozen")), until(events, stateOf("frozen", "Ready")))
      )
      expect(back.ms).toBeLessThan(3000)
      expect(yield* pidOf(fleet, "frozen")).not.toBe(pid)
      expect(text(yield* fleet.callTool("mcp__frozen__echo", { text: "thawed" }))).toBe("thawed")
    }).pipe(onPlatform))

  it.scopedLive("a message over the limit fails the call with a Limit error within 1 s; the server is back", () =>
    Effect.gen(function*() {
      // The config has no size option: a custom transport sets Stdio's own.
      const { events, fleet } = yield* fleetOf(
        faulty("large", {
          transport: {
            type: "custom",
            key: "large",
            connect: Stdio.make({ name: "large", command: process.execPath, args: [FAULTY], maxMessageBytes: 1 << 20 })
          }
        })
      )
      const call = yield* timed(fleet.callTool("mcp__large__big", { size: 2 * 1024 * 1024 }))
      expect(failure(call.exit).reason).toMatchObject({ _tag: "Limit", limit: 1 << 20 })
      expect(call.ms).toBeLessThan(1000)
      yield* until(events, leftReady("large"))
      yield* until(events, stateOf("large", "Ready"))
      expect(text(yield* fleet.callTool("mcp__large__big", { size: 1000 }))).toHaveLength(1000)
    }).pipe(onPlatform))

  it.scopedLive("an answer with the right id and a broken envelope fails its call at once, quoting it", () =>
    Effect.gen(function*() {
      const { fleet } = yield* fleetOf(faulty("broken"))
      const call = yield* timed(fleet.callTool("mcp__broken__broken", {}, { timeout: "30 seconds" }))
      const error = failure(call.exit)
      expect(error.reason).toMatchObject({ _tag: "Protocol", method: "tools/call" })
      expect(error.message).toContain(`"result":1,"error":{}`)
      expect(call.ms).toBeLessThan(1000)
      expect(logged).toContainEqual(
        expect.stringMatching(/^server 'broken' wrote a line that is not a JSON-RPC message/)
      )
      expect(text(yield* fleet.callTool("mcp__broken__echo", { text: "next" }))).toBe("next")
    }).pipe(onPlatform))
})

describe("a flood", () => {
  // The heap in use after a full collection, in MiB.
  const heapMiB = Effect.promise(async () => {
    const v8 = await import("node:v8")
    const vm = await import("node:vm")
    v8.setFlagsFromString("--expose-gc")
    ;(vm.runInNewContext("gc") as () => void)()
    return process.memoryUsage().heapUsed / 2 ** 20
  })

  it.scopedLive("of notifications and junk lines starves no call (each under 500 ms) and holds no memory", () =>
    Effect.gen(function*() {
      const { events, fleet } = yield* fleetOf(faulty("noisy"))
      const before = yield* heapMiB
      yield* fleet.callTool("mcp__noisy__flood", { mib: 32 })
      const latencies: Array<number> = []
      for (let i = 0; i < 20; i++) {
        const call = yield* timed(fleet.callTool("mcp__noisy__echo", { text: String(i) }))
        expect(firstText(Exit.getOrElse(call.exit, () => ({ content: [] })) as McpSchema.CallToolResult)).toBe(
          String(i)
        )
        latencies.push(call.ms)
      }
      expect(Math.max(...latencies)).toBeLessThan(500)
      const done = yield* until(
        events,
        (event): event is Extract<RegistryEvent, { _tag: "LogMessage" }> =>
          event._tag === "LogMessage" && String(event.data).startsWith("flood done")
      )
      const [, lines, bytes] = /(\d+) lines, (\d+) bytes/.exec(String(done.data))!.map(Number)
      // Some 30,000 lines, 32 MiB: four times what the fleet may have kept when it is over.
      expect(lines).toBeGreaterThan(30_000)
      expect(bytes).toBeGreaterThanOrEqual(32 * 2 ** 20)
      expect((yield* heapMiB) - before).toBeLessThan(8)
      expect(yield* stateNow(fleet, "noisy")).toBe("Ready")
    }).pipe(onPlatform))
})

describe("names of Object.prototype members", () => {
  it.scopedLive("a server's tools so named are routed; its requests so named get -32601 and the session goes on", () =>
    Effect.gen(function*() {
      const { fleet } = yield* fleetOf(faulty("proto"))
      for (const name of PROTOTYPE_NAMES) {
        expect(text(yield* fleet.callTool(`mcp__proto__${name}`, {}))).toBe(name)
        expect(failure(yield* Effect.exit(fleet.callTool(name, {}))).reason._tag).toBe("NotFound")
      }
      const answers = JSON.parse(text(yield* fleet.callTool("mcp__proto__probe", {})))
      expect(answers).toEqual(PROTOTYPE_NAMES.map((method, i) => ({
        jsonrpc: "2.0",
        id: `probe-${i}`,
        error: { code: -32601, message: `Method not found: ${method}` }
      })))
      expect(yield* stateNow(fleet, "proto")).toBe("Ready")
      expect(text(yield* fleet.callTool("mcp__proto__echo", { text: "on" }))).toBe("on")
    }).pipe(onPlatform))
})

describe("leak check", () => {
  it.live("no process started by these tests is still running", () =>
    Effect.sync(() => expect(survivors(MARKER, RUN_ID)).toEqual([])))
})
