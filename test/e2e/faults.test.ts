// The fault suite: servers that misbehave on purpose, as real child processes
// (test/fixtures/faulty.mjs) and real HTTP servers on 127.0.0.1 — a crash in flight, a hang,
// a flood, an oversize message, a broken answer, stalled HTTP bodies, and names of
// Object.prototype members from a server and from a gateway client — each with the bound it
// must keep asserted. The decoder fuzz is in test/internal/transport/fuzz.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as Queue from "effect/Queue"
import * as http from "node:http"
import type * as net from "node:net"
import { fileURLToPath } from "node:url"
import * as McpClient from "../../src/McpClient.js"
import type * as McpError from "../../src/McpError.js"
import type * as McpSchema from "../../src/McpSchema.js"
import type { RegistryEvent } from "../../src/RegistryEvent.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import type * as ServerSpec from "../../src/ServerSpec.js"
import * as Stdio from "../../src/Stdio.js"
import * as StreamableHttp from "../../src/StreamableHttp.js"
import { failure, firstText } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import { MARK, start } from "../support/cli.js"
import { stateOf, until as untilEvent } from "../support/events.js"
import { eventually, httpGateway, tempConfig } from "../support/gateway.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"
import { margin, survivors } from "../support/processes.js"

const FAULTY = fileURLToPath(new URL("../fixtures/faulty.mjs", import.meta.url))
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
) => untilEvent(events, match).pipe(Effect.timeout(hangGuard(20_000)))

// A fleet of `specs`, ready, with its events from then on.
const fleetOf = (...specs: ReadonlyArray<ServerSpec.ServerSpec>) =>
  Effect.gen(function*() {
    const fleet = yield* ServerRegistry.make()
    yield* fleet.reconcile(specs)
    yield* fleet.awaitReady({ servers: specs.map((spec) => spec.name), timeout: hangGuard(20_000) })
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
  it.scopedLive("a crash in flight fails the call InDoubt within 1 s; the server is back within 2 s", () =>
    Effect.gen(function*() {
      const { events, fleet } = yield* fleetOf(faulty("crashy"))
      const pid = yield* pidOf(fleet, "crashy")
      const call = yield* timed(fleet.callTool("mcp__crashy__crash", {}, { timeout: "30 seconds" }))
      expect(failure(call.exit).reason).toMatchObject({ _tag: "InDoubt", tool: "crash" })
      expect((failure(call.exit).cause as McpError.McpError).reason).toMatchObject({ _tag: "Closed", exitCode: 3 })
      expect(failure(call.exit).message).toContain("fatal: crashed on purpose")
      expect(call.ms).toBeLessThan(yield* margin(1000))
      yield* until(events, stateOf("crashy", "Failed"))
      const back = yield* timed(until(events, stateOf("crashy", "Ready")))
      expect(back.ms).toBeLessThan(yield* margin(2000))
      expect(yield* pidOf(fleet, "crashy")).not.toBe(pid)
      expect(firstText(yield* fleet.callTool("mcp__crashy__echo", { text: "again" }))).toBe("again")
    }).pipe(onPlatform))

  it.scopedLive("a call that hangs times out at its deadline (within 250 ms after); the server stays Ready", () =>
    Effect.gen(function*() {
      const { fleet } = yield* fleetOf(faulty("hangs"))
      const call = yield* timed(fleet.callTool("mcp__hangs__hang", {}, { timeout: "300 millis" }))
      expect(failure(call.exit).reason).toMatchObject({ _tag: "Timeout", afterMs: 300, kind: "idle" })
      expect(call.ms).toBeGreaterThanOrEqual(300)
      expect(call.ms).toBeLessThan(yield* margin(550))
      expect(yield* stateNow(fleet, "hangs")).toBe("Ready")
      expect(firstText(yield* fleet.callTool("mcp__hangs__echo", { text: "still here" }))).toBe("still here")
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
      expect(back.ms).toBeLessThan(yield* margin(3000))
      expect(yield* pidOf(fleet, "frozen")).not.toBe(pid)
      expect(firstText(yield* fleet.callTool("mcp__frozen__echo", { text: "thawed" }))).toBe("thawed")
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
      expect(call.ms).toBeLessThan(yield* margin(1000))
      yield* until(events, leftReady("large"))
      yield* until(events, stateOf("large", "Ready"))
      expect(firstText(yield* fleet.callTool("mcp__large__big", { size: 1000 }))).toHaveLength(1000)
    }).pipe(onPlatform))

  it.scopedLive("an answer with the right id and a broken envelope fails its call at once, quoting it", () =>
    Effect.gen(function*() {
      const { fleet } = yield* fleetOf(faulty("broken"))
      const call = yield* timed(fleet.callTool("mcp__broken__broken", {}, { timeout: "30 seconds" }))
      const error = failure(call.exit)
      expect(error.reason).toMatchObject({ _tag: "Protocol", method: "tools/call" })
      expect(error.message).toContain(`"result":1,"error":{}`)
      expect(call.ms).toBeLessThan(yield* margin(1000))
      expect(logged).toContainEqual(
        expect.stringMatching(/^server 'broken' wrote a line that is not a JSON-RPC message/)
      )
      expect(firstText(yield* fleet.callTool("mcp__broken__echo", { text: "next" }))).toBe("next")
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
      expect(Math.max(...latencies)).toBeLessThan(yield* margin(500))
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
        expect(firstText(yield* fleet.callTool(`mcp__proto__${name}`, {}))).toBe(name)
        expect(failure(yield* Effect.exit(fleet.callTool(name, {}))).reason._tag).toBe("NotFound")
      }
      const answers = JSON.parse(firstText(yield* fleet.callTool("mcp__proto__probe", {})))
      expect(answers).toEqual(PROTOTYPE_NAMES.map((method, i) => ({
        jsonrpc: "2.0",
        id: `probe-${i}`,
        error: { code: -32601, message: `Method not found: ${method}` }
      })))
      expect(yield* stateNow(fleet, "proto")).toBe("Ready")
      expect(firstText(yield* fleet.callTool("mcp__proto__echo", { text: "on" }))).toBe("on")
    }).pipe(onPlatform))
})

// A Streamable HTTP server on 127.0.0.1 whose tools misbehave: `echo` answers; `stall-body`
// sends headers and half a body, `stall-events` opens an event stream, `stall-headers`
// sends nothing; `broken` and `broken-event` answer with a broken envelope; after `freeze`
// nothing is answered at all, notifications included; after `refuse-notifications` a
// notification gets HTTP 500 and half a body. `hungUp(tool)` completes when the socket of
// the last call of `tool` (or the last "notification") closes.
const stallingServer = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly hungUp: (tool: string) => Effect.Effect<void>; server: http.Server }>(
    (resume) => {
      const sockets = new Map<string, Deferred.Deferred<void>>()
      let frozen = false
      let refuseNotifications = false
      const track = (key: string, req: http.IncomingMessage) => {
        const closed = Deferred.unsafeMake<void>(FiberId.none)
        sockets.set(key, closed)
        req.socket.once("close", () => Deferred.unsafeDone(closed, Exit.void))
      }
      const answer = (id: unknown, method: string, params: any, res: http.ServerResponse) => {
        const json = (result: unknown) => {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ jsonrpc: "2.0", id, result }))
        }
        const broken = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":1,"error":{}}`
        switch (method === "tools/call" ? params.name : method) {
          case "initialize":
            return json({
              protocolVersion: params.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: "stalling", version: "1" }
            })
          case "tools/list":
            return json({
              tools: [
                "echo",
                "stall-body",
                "stall-events",
                "stall-headers",
                "broken",
                "broken-event",
                "freeze",
                "refuse-notifications"
              ].map((name) => ({ name, inputSchema: { type: "object" } }))
            })
          case "echo":
            return json({ content: [{ type: "text", text: "echo" }] })
          case "stall-body":
            res.writeHead(200, { "content-type": "application/json" })
            return void res.write(`{"jsonrpc":"2.0",`)
          case "stall-events":
            res.writeHead(200, { "content-type": "text/event-stream" })
            return void res.write(": open\n\n")
          case "broken":
            res.writeHead(200, { "content-type": "application/json" })
            return void res.end(broken)
          case "broken-event":
            res.writeHead(200, { "content-type": "text/event-stream" })
            return void res.end(`data: ${broken}\n\n`)
          case "freeze":
            frozen = true
            return
          case "refuse-notifications":
            refuseNotifications = true
            return json({ content: [] })
          case "stall-headers":
            return
          default:
            res.writeHead(200, { "content-type": "application/json" })
            return void res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: method } }))
        }
      }
      const server = http.createServer((req, res) => {
        if (req.method !== "POST") return void res.writeHead(405).end()
        let body = ""
        req.setEncoding("utf8").on("data", (chunk: string) => body += chunk).on("end", () => {
          if (frozen) return
          const message = JSON.parse(body)
          if (message.id === undefined && refuseNotifications) {
            track("notification", req)
            return void res.writeHead(500, { "content-type": "text/plain" }).write("refused: ")
          }
          if (message.id === undefined) return void res.writeHead(202).end()
          if (message.method === "tools/call") track(message.params.name, req)
          answer(message.id, message.method, message.params, res)
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/mcp`,
          hungUp: (tool) => Effect.suspend(() => Deferred.await(sockets.get(tool)!)),
          server
        })))
    }
  ),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

const remote = (url: string): ServerSpec.ServerSpec => ({ name: "remote", transport: { type: "http", url } })

describe("faults of an HTTP server", () => {
  for (const tool of ["stall-headers", "stall-body", "stall-events"] as const) {
    it.scopedLive(`${tool}: the call times out at its deadline (within 250 ms after) and hangs up within 1 s`, () =>
      Effect.gen(function*() {
        const { hungUp, url } = yield* stallingServer
        const { fleet } = yield* fleetOf(remote(url))
        const call = yield* timed(fleet.callTool(`mcp__remote__${tool}`, {}, { timeout: "300 millis" }))
        expect(failure(call.exit).reason).toMatchObject({ _tag: "Timeout", afterMs: 300 })
        expect(call.ms).toBeGreaterThanOrEqual(300)
        expect(call.ms).toBeLessThan(yield* margin(550))
        yield* hungUp(tool).pipe(Effect.timeout(yield* margin(1000)))
        expect(yield* stateNow(fleet, "remote")).toBe("Ready")
        expect(firstText(yield* fleet.callTool("mcp__remote__echo", {}))).toBe("echo")
      }).pipe(onPlatform))
  }

  // Cancelling a call is a POST the frozen server never accepts: neither the next deadline
  // nor a caller giving up waits for it.
  it.scopedLive("a server that answers nothing at all: each call still ends at its own deadline", () =>
    Effect.gen(function*() {
      const { url } = yield* stallingServer
      const { fleet } = yield* fleetOf(remote(url))
      const [first, second, givenUp] = yield* Effect.all([
        timed(fleet.callTool("mcp__remote__freeze", {}, { timeout: "300 millis" })),
        timed(fleet.callTool("mcp__remote__stall-headers", {}, { timeout: "600 millis" })),
        timed(Effect.timeout(fleet.callTool("mcp__remote__echo", {}), "450 millis"))
      ], { concurrency: "unbounded" })
      for (const [call, deadline] of [[first, 300], [second, 600]] as const) {
        expect(failure(call.exit).reason).toMatchObject({ _tag: "Timeout", afterMs: deadline })
        expect(call.ms).toBeGreaterThanOrEqual(deadline)
        expect(call.ms).toBeLessThan(yield* margin(deadline + 250))
      }
      expect(Exit.isFailure(givenUp.exit)).toBe(true)
      expect(givenUp.ms).toBeLessThan(yield* margin(450 + 250))
    }).pipe(onPlatform))

  it.scopedLive("a notification refused with a body that never ends fails by the HTTP timeout and hangs up", () =>
    Effect.gen(function*() {
      const { hungUp, url } = yield* stallingServer
      const transport = yield* StreamableHttp.make({ name: "remote", url, httpTimeout: "300 millis" })
      const client = yield* McpClient.make().pipe(Effect.provideService(Transport, transport))
      yield* client.callTool("refuse-notifications", {})
      const sent = yield* timed(transport.send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" }))
      expect(failure(sent.exit).message).toContain("answered notifications/roots/list_changed with HTTP 500: refused:")
      expect(sent.ms).toBeLessThan(yield* margin(300 + 250))
      yield* hungUp("notification").pipe(Effect.timeout(yield* margin(1000)))
    }).pipe(onPlatform))

  for (const tool of ["broken", "broken-event"] as const) {
    it.scopedLive(`${tool}: an answer with a broken envelope fails the call at once, quoting it`, () =>
      Effect.gen(function*() {
        const { url } = yield* stallingServer
        const { fleet } = yield* fleetOf(remote(url))
        const call = yield* timed(fleet.callTool(`mcp__remote__${tool}`, {}, { timeout: "30 seconds" }))
        expect(failure(call.exit).reason).toMatchObject({ _tag: "Protocol", method: "tools/call" })
        expect(failure(call.exit).message).toContain(`"result":1,"error":{}`)
        expect(call.ms).toBeLessThan(yield* margin(1000))
        expect(firstText(yield* fleet.callTool("mcp__remote__echo", {}))).toBe("echo")
      }).pipe(onPlatform))
  }
})

// What a gateway client gets asking `method`: the whole answer message.
type Ask = (method: string, params?: Record<string, unknown>) => Promise<any>

// The gateway, fronting the faulty server, asked with names of Object.prototype members as
// methods and as names of tools, prompts, resources and levels: each is refused cleanly,
// tools so named at the server are called, and the session goes on.
const askPrototypeNames = async (ask: Ask) => {
  for (const name of PROTOTYPE_NAMES) {
    expect((await ask(name, {})).error).toMatchObject({ code: -32601 })
    expect((await ask("tools/call", { name, arguments: {} })).error).toMatchObject({ code: -32602 })
    const called = await ask("tools/call", { name: `mcp__faulty__${name}`, arguments: {} })
    expect(called.result.content).toEqual([{ type: "text", text: name }])
    expect((await ask("prompts/get", { name })).error).toMatchObject({ code: -32602 })
    expect((await ask("resources/read", { uri: name })).error).toMatchObject({ code: -32002 })
    expect((await ask("resources/subscribe", { uri: name })).error).toMatchObject({ code: -32002 })
    expect((await ask("logging/setLevel", { level: name })).error).toMatchObject({ code: -32602 })
    const completion = await ask("completion/complete", {
      ref: { type: "ref/prompt", name },
      argument: { name, value: "" }
    })
    expect(completion.error).toMatchObject({ code: -32602 })
  }
  expect((await ask("ping")).result).toEqual({})
}

const INITIALIZE = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "faults", version: "1" }
}

// Asks until the gateway lists the faulty server's tools (its servers start in the background).
const untilListed = async (ask: Ask) => {
  const listed = await eventually(
    () => ask("tools/list"),
    (answer) => answer.result?.tools?.some((tool: { name: string }) => tool.name === "mcp__faulty__constructor"),
    20_000
  )
  expect(listed.result.tools.map((tool: { name: string }) => tool.name)).toContain("mcp__faulty__hasOwnProperty")
}

describe("names of Object.prototype members at the gateway", () => {
  it("over stdio (serve --stdio): refused cleanly, and the session goes on", async () => {
    const config = tempConfig({ faulty: { command: process.execPath, args: [FAULTY] } })
    const mark = `${RUN_ID}-stdio`
    const gateway = start(["serve", "--stdio", "--config", config.file], { cwd: config.dir, mark })
    try {
      let next = 0
      const ask: Ask = (method, params) => {
        const id = next++
        gateway.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
        return gateway.line((line) => line.startsWith("{") && JSON.parse(line).id === id, `the answer to ${method}`)
          .then(JSON.parse)
      }
      expect((await ask("initialize", INITIALIZE)).result.protocolVersion).toBe("2025-11-25")
      gateway.child.stdin.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}\n`)
      await untilListed(ask)
      await askPrototypeNames(ask)
      expect(gateway.child.exitCode).toBe(null)
      gateway.child.stdin.end()
      expect(await new Promise((resolve) => gateway.child.once("exit", resolve))).toBe(0)
    } finally {
      gateway.child.kill("SIGKILL")
      config.remove()
    }
    expect(survivors(MARK, mark)).toEqual([])
  }, hangGuard(30_000))

  it("over Streamable HTTP: refused cleanly, and the session goes on", async () => {
    const config = tempConfig({ faulty: { command: process.execPath, args: [FAULTY] } })
    const gateway = await httpGateway(config.file)
    try {
      let session: string | undefined
      let next = 0
      const ask: Ask = async (method, params) => {
        const id = next++
        const response = await fetch(gateway.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...(session === undefined ? {} : { "mcp-session-id": session })
          },
          body: JSON.stringify({ jsonrpc: "2.0", id, method, params })
        })
        session ??= response.headers.get("mcp-session-id") ?? undefined
        const body = await response.text()
        // A JSON answer, or the last event of an SSE stream.
        return response.headers.get("content-type")?.startsWith("text/event-stream")
          ? JSON.parse(body.split("\n").filter((line) => line.startsWith("data: ")).at(-1)!.slice(6))
          : JSON.parse(body)
      }
      expect((await ask("initialize", INITIALIZE)).result.protocolVersion).toBe("2025-11-25")
      await untilListed(ask)
      await askPrototypeNames(ask)
    } finally {
      await gateway.close()
      config.remove()
    }
  }, hangGuard(30_000))
})

describe("leak check", () => {
  it.live("no process started by these tests is still running", () =>
    Effect.sync(() => expect(survivors(MARKER, RUN_ID)).toEqual([])))
})
