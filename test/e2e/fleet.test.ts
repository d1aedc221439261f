// The fleet with real child processes: servers from the npm registry and fixture servers.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as FleetConfig from "../../src/FleetConfig.js"
import type { RegistryEvent } from "../../src/RegistryEvent.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import type * as ServerSpec from "../../src/ServerSpec.js"
import * as Stdio from "../../src/Stdio.js"
import { fixtureSpec } from "../../src/testing/node.js"
import { firstText } from "../../src/testing/Results.js"
import { stateOf, until as untilEvent } from "../support/events.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"
import { procState, survivors, waitGone } from "../support/processes.js"

const require = createRequire(import.meta.url)
const packageEntry = (name: string) =>
  path.join(path.dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), "dist", "index.js")
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))

// Every server is given this (and its children inherit it), so survivors can be found in /proc.
const MARKER = "MCP_FLEET_FLEET_TEST_RUN"
const RUN_ID = `${process.pid}-${Date.now()}`
const marked = { [MARKER]: RUN_ID }

const node = (name: string, script: string, extra: Partial<ServerSpec.ServerSpec> = {}): ServerSpec.ServerSpec => ({
  ...fixtureSpec(name, script, { env: marked }),
  ...extra
})

const fast = { initialDelay: "100 millis", maxDelay: "1 second", jitter: 0 } as const

// Real processes: a wait that never ends fails the test instead of hanging it.
const until = <A extends RegistryEvent>(
  events: Queue.Dequeue<RegistryEvent>,
  match: (event: RegistryEvent) => event is A
) => untilEvent(events, match).pipe(Effect.timeout(hangGuard(20_000)))

// Whether every thread of the process has exited, its files closed. A killed process's main
// thread can be a zombie while its other threads are still exiting, holding its pipes.
const exited = (pid: number): boolean => {
  try {
    return procState(pid) !== "alive" && fs.readdirSync(`/proc/${pid}/task`).length <= 1
  } catch {
    return true
  }
}

// Spins on /proc until the process has exited: nothing else runs on this thread meanwhile.
const blockUntilDead = (pid: number) => {
  const deadline = performance.now() + 5000
  while (!exited(pid)) {
    if (performance.now() > deadline) throw new Error(`process ${pid} survived SIGKILL for 5 s`)
  }
}

const pidOf = (fleet: ServerRegistry.ServerRegistry, name: string) =>
  Effect.map(fleet.status, (all) => all.find((status) => status.name === name)?.connection?.pid as number)

describe("fleet with real processes", () => {
  it.scopedLive("a stdio server killed with SIGKILL comes back with its tools", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-memory-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const fleet = yield* ServerRegistry.make({ restart: fast })
      const events = yield* fleet.subscribe
      yield* fleet.reconcile([node("memory", packageEntry("server-memory"), {
        transport: {
          type: "stdio",
          command: process.execPath,
          args: [packageEntry("server-memory")],
          env: { ...marked, MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") }
        }
      })])
      yield* fleet.awaitReady({ servers: ["memory"], timeout: hangGuard(20_000) })
      const before = (yield* SubscriptionRef.get(fleet.catalog)).tools.map((entry) => entry.name).sort()
      expect(before).toContain("mcp__memory__read_graph")
      const pid = yield* pidOf(fleet, "memory")
      process.kill(pid, "SIGKILL")
      const failed = yield* until(events, stateOf("memory", "Failed"))
      expect(failed.state).toMatchObject({ attempt: 1 })
      expect((failed.state as any).error.reason).toMatchObject({ _tag: "Closed", signal: "SIGKILL" })
      expect((failed.state as any).error.message).toMatch(/^server 'memory' was killed by SIGKILL/)
      yield* until(events, stateOf("memory", "Ready"))
      const after = yield* pidOf(fleet, "memory")
      expect(after).not.toBe(pid)
      expect((yield* SubscriptionRef.get(fleet.catalog)).tools.map((entry) => entry.name).sort()).toEqual(before)
      const result = yield* fleet.callTool("mcp__memory__read_graph", {})
      expect(result.isError).not.toBe(true)
    }).pipe(Effect.provide(Platform)))

  it.scopedLive("calls made right after a kill -9 wait for the restart: none fails with the dead connection's error", () =>
    Effect.gen(function*() {
      // Every crash counts as a first one, so each restart comes after the initial delay.
      const fleet = yield* ServerRegistry.make({ restart: { ...fast, stableAfter: 0 } })
      yield* fleet.reconcile([node("env", fixture("env.mjs"))])
      yield* fleet.awaitReady({ servers: ["env"], timeout: hangGuard(20_000) })
      for (let round = 1; round <= 5; round++) {
        const pid = yield* pidOf(fleet, "env")
        process.kill(pid, "SIGKILL")
        // Held here until the process is dead, so the call goes out before the fleet could notice.
        blockUntilDead(pid)
        const result = yield* fleet.callTool("mcp__env__env", {}).pipe(Effect.timeout(hangGuard(20_000)))
        expect(result.isError).not.toBe(true)
        expect(yield* pidOf(fleet, "env")).not.toBe(pid)
      }
    }).pipe(Effect.provide(Platform)))

  it.scopedLive("after an oversize message ends the connection, the next call waits for the restart", () =>
    Effect.gen(function*() {
      const fleet = yield* ServerRegistry.make({ restart: fast })
      yield* fleet.reconcile([{
        name: "big",
        transport: {
          type: "custom",
          key: "big",
          connect: Stdio.make({
            name: "big",
            command: process.execPath,
            args: [fixture("big.mjs")],
            maxMessageBytes: 1024
          })
        }
      }])
      yield* fleet.awaitReady({ servers: ["big"], timeout: hangGuard(20_000) })
      const oversize = yield* Effect.flip(fleet.callTool("mcp__big__big", { size: 4096 }))
      expect(oversize.reason).toMatchObject({ _tag: "Limit", limit: 1024 })
      const next = yield* fleet.callTool("mcp__big__big", { size: 20 }).pipe(Effect.timeout(hangGuard(20_000)))
      expect(firstText(next)).toBe("000000000000000|0000")
    }).pipe(Effect.provide(Platform)))

  it.scopedLive("a server that exits at once is Failed with its stderr in status; the others are up", () =>
    Effect.gen(function*() {
      const fleet = yield* ServerRegistry.make({
        restart: fast,
        servers: [
          node("broken", fixture("early-exit.mjs"), { restart: { maxAttempts: 2 } }),
          node("fine", fixture("env.mjs"), { required: true })
        ]
      })
      yield* fleet.awaitReady({ timeout: hangGuard(20_000) })
      yield* fleet.awaitReady({ servers: "settled", timeout: hangGuard(20_000) })
      const events = yield* fleet.subscribe
      const broken = () => Effect.map(fleet.status, (all) => all.find((status) => status.name === "broken")!)
      const current = (yield* broken()).state
      if (current._tag !== "Failed" || current.retryAt !== undefined) {
        yield* until(
          events,
          (event): event is any => stateOf("broken", "Failed")(event) && (event.state as any).retryAt === undefined
        )
      }
      const status = yield* broken()
      expect(status.state).toMatchObject({ _tag: "Failed", attempt: 2, retryAt: undefined })
      expect(status.lastError?.message).toBe(
        "server 'broken' exited with code 1 before answering the handshake: error: MISSING_API_KEY is not set"
      )
      expect(status.lastError?.reason).toMatchObject({ _tag: "Closed", exitCode: 1 })
      expect((yield* fleet.status).find((s) => s.name === "fine")!.state._tag).toBe("Ready")
    }).pipe(Effect.provide(Platform)))

  it.live("stopping the registry leaves no process behind", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-fs-"))
      const pids = yield* Effect.scoped(Effect.gen(function*() {
        const fleet = yield* ServerRegistry.make({
          servers: [
            node("everything", packageEntry("server-everything")),
            {
              name: "filesystem",
              transport: {
                type: "stdio",
                command: process.execPath,
                args: [packageEntry("server-filesystem"), dir],
                env: marked
              }
            },
            node("crash", fixture("crash.mjs"))
          ]
        })
        yield* fleet.awaitReady({ servers: ["everything", "filesystem", "crash"], timeout: hangGuard(20_000) })
        return yield* Effect.forEach(["everything", "filesystem", "crash"], (name) => pidOf(fleet, name))
      }))
      expect(pids.every((pid) => typeof pid === "number")).toBe(true)
      const states = yield* waitGone(pids, 3000)
      expect(Object.values(states).filter((state) => state === "alive")).toEqual([])
      expect(pids.map(procState).filter((state) => state === "alive")).toEqual([])
      expect(survivors(MARKER, RUN_ID)).toEqual([])
      fs.rmSync(dir, { recursive: true, force: true })
    }).pipe(Effect.provide(Platform)))

  it.scopedLive("an edited config file restarts only the changed server; an invalid edit keeps the fleet", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-reload-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const file = path.join(dir, ".mcp.json")
      const server = (value: string) => ({ command: process.execPath, args: [fixture("env.mjs")], env: { V: value } })
      const write = (content: unknown) => {
        // Written aside and renamed over the file, as editors save.
        fs.writeFileSync(`${file}.tmp`, typeof content === "string" ? content : JSON.stringify(content))
        fs.renameSync(`${file}.tmp`, file)
      }
      write({ mcpServers: { a: server("1"), b: server("1") } })

      const warnings = yield* Queue.unbounded<string>()
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") {
          Queue.unsafeOffer(warnings, String(Array.isArray(message) ? message[0] : message))
        }
      })
      const fleet = yield* ServerRegistry.make({ restart: fast })
      const events = yield* fleet.subscribe
      yield* FleetConfig.sync({ paths: [file], debounce: "50 millis" }).pipe(
        Effect.provideService(ServerRegistry.ServerRegistry, fleet),
        Effect.provide(Layer.merge(Platform, Logger.replace(Logger.defaultLogger, logger)))
      )
      yield* fleet.awaitReady({ servers: ["a", "b"], timeout: hangGuard(20_000) })
      const [a1, b1] = [yield* pidOf(fleet, "a"), yield* pidOf(fleet, "b")]
      yield* Queue.takeAll(events)

      write({ mcpServers: { a: server("1"), b: server("2") } })
      yield* until(events, stateOf("b", "Ready"))
      expect(yield* pidOf(fleet, "a")).toBe(a1)
      expect(yield* pidOf(fleet, "b")).not.toBe(b1)
      expect(procState(b1)).not.toBe("alive")

      write("{ \"mcpServers\": { \"a\": ")
      const warning = yield* Queue.take(warnings).pipe(Effect.timeout(hangGuard(10_000)))
      expect(warning).toMatch(
        new RegExp(`^invalid config file ${file.replace(/[.]/g, "\\.")}: .*; keeping the last good config$`)
      )
      expect((yield* fleet.status).map((status) => [status.name, status.state._tag])).toEqual([["a", "Ready"], [
        "b",
        "Ready"
      ]])

      write({ mcpServers: { a: server("1"), b: server("2"), c: server("1") } })
      yield* until(events, stateOf("c", "Ready"))
      expect(yield* pidOf(fleet, "a")).toBe(a1)
    }).pipe(Effect.provide(Platform)))
})
