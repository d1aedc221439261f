/**
 * The stdio transport and McpClient against real processes: the reference servers from
 * npm (everything, filesystem, memory) and the small fixture servers in test/fixtures/
 * (crashes, stubborn process trees, noisy stdout, huge results, environment).
 *
 * Every child is started with `process.execPath` and a JS entry file, never npx. Each one
 * inherits a marker variable, so the last test can find any that survived.
 */
import { NodeContext } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as McpClient from "../../src/McpClient.js"
import * as Stdio from "../../src/Stdio.js"
import { firstText, reasonOf } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import { EVERYTHING, everythingSuite } from "../support/everythingSuite.js"
import { hangGuard } from "../support/guard.js"
import { margin, procState, survivors as markedSurvivors, waitGone } from "../support/processes.js"

// --- where things are ---------------------------------------------------------------

const require = createRequire(import.meta.url)
const packageEntry = (name: string) =>
  path.join(path.dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), "dist", "index.js")
const FILESYSTEM = packageEntry("server-filesystem")
const MEMORY = packageEntry("server-memory")
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))
const NODE = process.execPath

// Every child (and grandchild) inherits this, so survivors can be found in /proc.
const MARKER = "MCP_FLEET_STDIO_TEST_RUN"
const RUN_ID = `${process.pid}-${Date.now()}`
process.env[MARKER] = RUN_ID

const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), `mcp-fleet-${prefix}-`))
const tempDirs: Array<string> = []
const makeTempDir = (prefix: string) => {
  const dir = tempDir(prefix)
  tempDirs.push(dir)
  return dir
}

// --- processes ----------------------------------------------------------------------

/** Every pid the tests saw: servers and the stubborn fixture's grandchildren. */
const seenPids = new Set<number>()
/** Pids that were found as zombies (exited, not yet reaped) when checked. */
const zombies = new Set<number>()

// --- connecting ---------------------------------------------------------------------

/** Starts a stdio server and connects a client to it, in the current Scope. */
const connect = (options: Stdio.Options, clientOptions?: McpClient.Options) =>
  Effect.gen(function*() {
    const transport = yield* Stdio.make({ ...options, env: { ...options.env, [MARKER]: RUN_ID } })
    const pid = transport.info().pid as number
    seenPids.add(pid)
    const client = yield* McpClient.make(clientOptions).pipe(Effect.provideService(Transport, transport))
    return { client, pid }
  })

/** A logger layer that collects every log line (from every fiber of the effect it is provided to). */
const captureLogs = () => {
  const lines: Array<{ readonly level: string; readonly message: string }> = []
  const logger = Logger.make(({ logLevel, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    lines.push({ level: logLevel.label, message: parts.map(String).join(" ") })
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true })
})

// --- the reference server: everything -----------------------------------------------

everythingSuite(
  "server-everything over stdio",
  Effect.map(connect({ name: "everything", command: NODE, args: [EVERYTHING, "stdio"] }), ({ client }) => client),
  NodeContext.layer
)

// --- the reference servers: filesystem and memory -----------------------------------

describe("server-filesystem over stdio", () => {
  it.scopedLive("lists, writes and reads in its root; a path outside is an isError value", () =>
    Effect.gen(function*() {
      const root = fs.realpathSync(makeTempDir("fs"))
      fs.writeFileSync(path.join(root, "existing.txt"), "already here\n")
      const { client } = yield* connect({ name: "filesystem", command: NODE, args: [FILESYSTEM, root] })
      const names = (yield* client.listTools()).map((tool) => tool.name)
      expect(names).toEqual(expect.arrayContaining(["list_directory", "write_file", "read_text_file"]))

      const content = "line one\nline two — ünïcödé\n"
      const written = yield* client.callTool("write_file", { path: path.join(root, "notes.txt"), content })
      expect(written.isError).toBeUndefined()
      expect(fs.readFileSync(path.join(root, "notes.txt"), "utf8")).toBe(content)

      const listing = yield* client.callTool("list_directory", { path: root })
      expect(firstText(listing).split("\n").sort()).toEqual(["[FILE] existing.txt", "[FILE] notes.txt"])

      const read = yield* client.callTool("read_text_file", { path: path.join(root, "notes.txt") })
      expect(firstText(read)).toBe(content)
      expect(read.structuredContent).toEqual({ content })

      const outside = yield* client.callTool("read_text_file", { path: "/etc/passwd" })
      expect(outside.isError).toBe(true)
      expect(firstText(outside)).toMatch(/Access denied - path outside allowed directories/)
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("server-memory over stdio", () => {
  it.scopedLive("create_entities, then read_graph and search_nodes round-trip, also after a restart", () =>
    Effect.gen(function*() {
      const file = path.join(makeTempDir("memory"), "memory.jsonl")
      const options: Stdio.Options = { name: "memory", command: NODE, args: [MEMORY], env: { MEMORY_FILE_PATH: file } }
      const entities = [
        { name: "Ada Lovelace", entityType: "person", observations: ["wrote the first program"] },
        { name: "Analytical Engine", entityType: "machine", observations: ["designed by Babbage"] }
      ]
      yield* Effect.scoped(Effect.gen(function*() {
        const { client } = yield* connect(options)
        const created = yield* client.callTool("create_entities", { entities })
        expect(created.isError).toBeUndefined()
        expect(created.structuredContent).toEqual({ entities })
        yield* client.callTool("create_relations", {
          relations: [{ from: "Ada Lovelace", to: "Analytical Engine", relationType: "programmed" }]
        })

        const graph = yield* client.callTool("read_graph", {})
        expect(graph.structuredContent).toEqual({
          entities,
          relations: [{ from: "Ada Lovelace", to: "Analytical Engine", relationType: "programmed" }]
        })
        const found = yield* client.callTool("search_nodes", { query: "program" })
        expect((found.structuredContent as { entities: Array<{ name: string }> }).entities.map((e) => e.name)).toEqual([
          "Ada Lovelace"
        ])
      }))
      expect(fs.readFileSync(file, "utf8")).toContain("Ada Lovelace")

      // A new process reads what the first one stored.
      const { client } = yield* connect(options)
      const graph = yield* client.callTool("read_graph", {})
      expect((graph.structuredContent as { entities: unknown }).entities).toEqual(entities)
    }).pipe(Effect.provide(NodeContext.layer)))
})

// --- fixture servers ----------------------------------------------------------------

describe("stdio failures and limits (fixture servers)", () => {
  it.scopedLive("a server that exits mid-call fails the call with Closed, exit code 3 and its stderr, within 1 s", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({ name: "crash", command: NODE, args: [fixture("crash.mjs")] })
      expect((yield* client.listTools()).map((tool) => tool.name)).toEqual(["boom"])
      const start = performance.now()
      const error = yield* Effect.flip(client.callTool("boom", {}))
      const elapsed = performance.now() - start
      const reason = reasonOf(error, "Closed")
      expect(reason.exitCode).toBe(3)
      expect(reason.signal).toBeNull()
      expect(reason.method).toBe("tools/call")
      expect(reason.stderrTail).toContain("fatal: boom")
      expect(error.server).toBe("crash")
      expect(error.message).toBe("server 'crash' exited with code 3 before answering tools/call: fatal: boom")
      expect(elapsed).toBeLessThan(yield* margin(1000))

      // The connection is over: `closed` says why, and later calls fail at once, never sent.
      const closed = yield* client.closed
      expect(reasonOf(closed, "Closed").exitCode).toBe(3)
      const later = yield* Effect.flip(client.ping())
      expect(later.unsent).toBe(true)
      expect(later.message).toBe("server 'crash' exited with code 3 before answering ping: fatal: boom")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a server that exits before answering initialize fails McpClient.make with its stderr", () =>
    Effect.gen(function*() {
      const start = performance.now()
      const error = yield* Effect.flip(
        connect({ name: "early-exit", command: NODE, args: [fixture("early-exit.mjs")] })
      )
      const elapsed = performance.now() - start
      const reason = reasonOf(error, "Closed")
      expect(reason.exitCode).toBe(1)
      expect(reason.method).toBe("server/discover")
      expect(error.message).toBe(
        "server 'early-exit' exited with code 1 before answering the handshake: error: MISSING_API_KEY is not set"
      )
      // Node's own startup dominates; the failure itself must not wait for a timeout.
      expect(elapsed).toBeLessThan(yield* margin(2000))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a server that closes its stdin and then exits: initialize fails with the exit and its stderr", () =>
    Effect.gen(function*() {
      // The server reads the probe, closes its stdin and only then refuses the probe, so our
      // initialize certainly meets a closed pipe (EPIPE), before the exit that explains it.
      const script = [
        "read -r line; exec 0<&-",
        `id=$(printf '%s' "$line" | sed -E 's/.*"id":([0-9]+).*/\\1/')`,
        `printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}\\n' "$id"`,
        "echo 'error: no input wanted' >&2; sleep 0.3; exit 3"
      ].join("; ")
      const error = yield* Effect.flip(connect({ name: "deaf", command: "sh", args: ["-c", script] }))
      const reason = reasonOf(error, "Closed")
      expect(reason.exitCode).toBe(3)
      expect(reason.unsent).toBe(true)
      expect(error.message).toBe(
        "server 'deaf' exited with code 3 before answering initialize: error: no input wanted"
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a Node server with a wrong script path fails with Node's own reason in the message", () =>
    Effect.gen(function*() {
      const script = path.join(os.tmpdir(), "mcp-fleet-no-such-dir", "server.js")
      const error = yield* Effect.flip(connect({ name: "wrong-path", command: NODE, args: [script] }))
      expect(reasonOf(error, "Closed").exitCode).toBe(1)
      expect(error.message).toMatch(/^server 'wrong-path' exited with code 1 before answering the handshake: /)
      expect(error.message).toContain(`Error: Cannot find module '${script}'`)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("a command that does not exist fails with Transport naming the command, not retryable", () =>
    Effect.gen(function*() {
      const command = "/nonexistent/bin/mcp-server-nowhere"
      const error = yield* Effect.flip(connect({ name: "nowhere", command, args: ["--stdio"] }))
      const reason = reasonOf(error, "Transport")
      expect(reason.message).toContain(`could not start '${command}'`)
      expect(reason.code).toBe("ENOENT")
      expect(error.retryable).toBe(false)
      expect(error.message).toMatch(/^server 'nowhere': could not start '\/nonexistent\/bin\/mcp-server-nowhere'/)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("non-JSON and non-JSON-RPC lines on stdout are skipped and reported; the calls still succeed", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const { client } = yield* connect({ name: "garbage", command: NODE, args: [fixture("garbage.mjs")] })
      expect(client.serverInfo.name).toBe("garbage")
      expect(firstText(yield* client.callTool("echo", { message: "one" }))).toBe("echo: one")
      expect(firstText(yield* client.callTool("echo", { message: "two" }))).toBe("echo: two")
      yield* client.ping()

      // Each bad line is reported with the server's name and an excerpt, and skipped. The noise
      // came three times: before the initialize answer and before each of the two tool answers.
      const noise = [
        "wrote a line that is not JSON; skipped: Server starting up... (this is not JSON)",
        `wrote a line that is not a JSON-RPC message: "jsonrpc" must be "2.0"; skipped: {"hello":"world"}`,
        `wrote a line that is not a JSON-RPC message: neither a request, a notification nor a response; skipped: {"jsonrpc":"2.0"}`,
        "wrote a line that is an empty batch; skipped: []",
        `wrote a line that is not JSON; skipped: {"jsonrpc":"2.0","id":"broken`,
        "sent a response for unknown request id 987654"
      ].map((text) => `server 'garbage' ${text}`)
      const warnings = logs.lines.filter((line) => line.level === "WARN").map((line) => line.message)
      expect(warnings).toEqual([...noise, ...noise, ...noise])
    }).pipe(Effect.provide(Layer.merge(NodeContext.layer, logs.layer)))
  })

  it.scopedLive("structuredContent that does not match the outputSchema fails with Validation", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({ name: "structured", command: NODE, args: [fixture("structured.mjs")] })
      const good = yield* client.callTool("weather", {})
      expect(good.structuredContent).toEqual({ temperature: 21, conditions: "Sunny" })
      const error = yield* Effect.flip(client.callTool("weather", { broken: true }))
      const reason = reasonOf(error, "Validation")
      expect(reason.method).toBe("tools/call")
      expect(reason.message).toMatch(/^tool 'weather' returned structuredContent that does not match its outputSchema/)
      // The connection is still fine.
      expect((yield* client.callTool("weather", {})).structuredContent).toEqual(good.structuredContent)
    }).pipe(Effect.provide(NodeContext.layer)))

  // The same counter pattern as test/fixtures/big.mjs.
  const pattern = (size: number) => {
    const parts: Array<string> = []
    for (let i = 0; i * 16 < size; i++) parts.push(String(i).padStart(15, "0") + "|")
    return parts.join("").slice(0, size)
  }
  const TEN_MIB = 10 * 1024 * 1024

  it.scopedLive("a 10 MiB result round-trips intact under the default 16 MiB cap", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({ name: "big", command: NODE, args: [fixture("big.mjs")] })
      const result = yield* client.callTool("big", { size: TEN_MIB })
      const text = firstText(result)
      expect(text.length).toBe(TEN_MIB)
      expect(text.slice(-32)).toBe(pattern(TEN_MIB).slice(-32))
      expect(text === pattern(TEN_MIB)).toBe(true)
      // And the connection goes on.
      expect(firstText(yield* client.callTool("big", { size: 20 }))).toBe("000000000000000|0000")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("with maxMessageBytes 1 MiB, a 10 MiB result fails with Limit naming the size and the limit", () =>
    Effect.gen(function*() {
      const limit = 1024 * 1024
      const { client } = yield* connect({
        name: "big-limited",
        command: NODE,
        args: [fixture("big.mjs")],
        maxMessageBytes: limit
      })
      const start = performance.now()
      const error = yield* Effect.flip(client.callTool("big", { size: TEN_MIB }))
      const reason = reasonOf(error, "Limit")
      expect(reason.limit).toBe(limit)
      expect(reason.size).toBeGreaterThan(limit)
      expect(reason.size).toBeLessThanOrEqual(TEN_MIB + 1024)
      expect(reason.what).toBe("a message")
      expect(error.message).toBe(`server 'big-limited': a message of ${reason.size} exceeds the limit of ${limit}`)
      expect(performance.now() - start).toBeLessThan(yield* margin(5000))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scopedLive("env: a safe base environment, configured values over it, Redacted values as plain text, cwd set", () =>
    Effect.gen(function*() {
      process.env.MCP_FLEET_TEST_INHERITED = "from-parent"
      process.env.GITHUB_TOKEN_FOR_TEST = "host-secret"
      process.env.LC_TEST_LOCALE = "C"
      const cwd = fs.realpathSync(makeTempDir("cwd"))
      const { client } = yield* connect({
        name: "env",
        command: NODE,
        args: [fixture("env.mjs")],
        cwd,
        env: { HOME: "/configured/home", MCP_FLEET_TEST_PLAIN: "plain", MCP_FLEET_TEST_SECRET: Redacted.make("s3cret") }
      })
      const seen = JSON.parse(firstText(yield* client.callTool("env", {}))) as {
        env: Record<string, string>
        cwd: string
      }
      // The marker is added by `connect` so that a leaked child could still be found; the
      // server's token marks its processes.
      const { [MARKER]: marker, [Stdio.TOKEN_VARIABLE]: token, ...rest } = seen.env
      expect(marker).toBe(RUN_ID)
      expect(token).toMatch(/^[0-9a-f]{24}$/)
      const safe = ["PATH", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR", "LC_TEST_LOCALE"]
        .filter((name) => process.env[name] !== undefined)
      expect(Object.keys(rest).sort()).toEqual(
        [...safe, "HOME", "MCP_FLEET_TEST_PLAIN", "MCP_FLEET_TEST_SECRET"].sort()
      )
      expect(rest.PATH).toBe(process.env.PATH)
      expect(rest.LC_TEST_LOCALE).toBe("C")
      expect(rest.HOME).toBe("/configured/home")
      expect(rest.MCP_FLEET_TEST_SECRET).toBe("s3cret")
      expect(seen.cwd).toBe(cwd)
    }).pipe(
      Effect.ensuring(Effect.sync(() => {
        delete process.env.MCP_FLEET_TEST_INHERITED
        delete process.env.GITHUB_TOKEN_FOR_TEST
        delete process.env.LC_TEST_LOCALE
      })),
      Effect.provide(NodeContext.layer)
    ))

  it.scopedLive("env: inheritEnv true passes this process's whole environment, configured values over it", () =>
    Effect.gen(function*() {
      process.env.MCP_FLEET_TEST_INHERITED = "from-parent"
      process.env.MCP_FLEET_TEST_OVERRIDDEN = "parent-value"
      const { client } = yield* connect({
        name: "env-inherit",
        command: NODE,
        args: [fixture("env.mjs")],
        inheritEnv: true,
        env: { MCP_FLEET_TEST_OVERRIDDEN: "child-value" }
      })
      const seen = JSON.parse(firstText(yield* client.callTool("env", {}))) as { env: Record<string, string> }
      expect(seen.env.MCP_FLEET_TEST_INHERITED).toBe("from-parent")
      expect(seen.env.MCP_FLEET_TEST_OVERRIDDEN).toBe("child-value")
    }).pipe(
      Effect.ensuring(Effect.sync(() => {
        delete process.env.MCP_FLEET_TEST_INHERITED
        delete process.env.MCP_FLEET_TEST_OVERRIDDEN
      })),
      Effect.provide(NodeContext.layer)
    ))
})

// --- closing: no orphan, ever ---------------------------------------------------------

describe("closing the scope ends the whole process tree", () => {
  /**
   * Connects to the stubborn fixture, reads its pid and its grandchild's, closes the scope
   * and, while the close runs, polls both pids. Returns when each pid stopped running
   * (zombies count as stopped) and when the close returned, in ms after the close began.
   */
  const stubbornTree = (grace: { readonly closeGracePeriod?: number; readonly termGracePeriod?: number }) => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { client, pid } = yield* connect({
        name: "stubborn",
        command: NODE,
        args: [fixture("stubborn.mjs")],
        ...(grace.closeGracePeriod === undefined ? {} : { closeGracePeriod: grace.closeGracePeriod }),
        ...(grace.termGracePeriod === undefined ? {} : { termGracePeriod: grace.termGracePeriod })
      }).pipe(Scope.extend(scope))
      const pids = JSON.parse(firstText(yield* client.callTool("pids", {}))) as { server: number; grandchild: number }
      expect(pids.server).toBe(pid)
      expect(pids.grandchild).not.toBe(pid)
      seenPids.add(pids.grandchild)
      expect(procState(pids.server)).toBe("alive")
      expect(procState(pids.grandchild)).toBe("alive")
      const ps = fs.readFileSync(`/proc/${pids.grandchild}/stat`, "utf8")
      // The grandchild is in the server's process group (field 5 of stat).
      expect(Number(ps.slice(ps.lastIndexOf(")") + 2).split(" ")[2])).toBe(pids.server)

      const start = performance.now()
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      const stoppedAt: Record<number, number> = {}
      let closeMs: number | undefined
      while (performance.now() - start < 15_000) {
        for (const target of [pids.server, pids.grandchild]) {
          const state = procState(target)
          if (state === "zombie") zombies.add(target)
          if (state !== "alive" && stoppedAt[target] === undefined) stoppedAt[target] = performance.now() - start
        }
        if (closeMs === undefined && closing.unsafePoll() !== null) closeMs = performance.now() - start
        if (closeMs !== undefined && Object.keys(stoppedAt).length === 2) break
        yield* Effect.sleep("10 millis")
      }
      yield* closing.await
      expect(stoppedAt[pids.server]).toBeDefined()
      expect(stoppedAt[pids.grandchild]).toBeDefined()
      expect(closeMs).toBeDefined()
      // Both grace periods were waited out, then SIGKILL was needed.
      expect(logs.lines.map((line) => line.message)).toContain("server 'stubborn' ignored SIGTERM; sending SIGKILL")
      return {
        server: stoppedAt[pids.server]!,
        grandchild: stoppedAt[pids.grandchild]!,
        close: closeMs!
      }
    }).pipe(Effect.provide(Layer.merge(NodeContext.layer, logs.layer)))
  }

  /**
   * Both processes ended after `graceMs` and within 5 s, and the close returned right after;
   * `slack` is the margin the machine's load calls for (`bound(0)`).
   */
  const expectKilledAfter = (
    ms: { server: number; grandchild: number; close: number },
    graceMs: number,
    slack: number
  ) => {
    // SIGKILL comes after both grace periods, not before.
    expect(ms.server).toBeGreaterThanOrEqual(graceMs)
    expect(ms.grandchild).toBeGreaterThanOrEqual(graceMs)
    expect(ms.server).toBeLessThan(5000 + slack)
    expect(ms.grandchild).toBeLessThan(5000 + slack)
    // The close returns as soon as the tree is dead (zombies awaiting their reaper count as dead).
    expect(ms.close).toBeGreaterThanOrEqual(graceMs)
    expect(ms.close - Math.max(ms.server, ms.grandchild)).toBeLessThan(300 + slack)
  }

  it.live("a server ignoring SIGTERM, with a grandchild ignoring it too: gone within 5 s (grace 500 ms + 500 ms)", () =>
    Effect.gen(function*() {
      expectKilledAfter(yield* stubbornTree({ closeGracePeriod: 500, termGracePeriod: 500 }), 950, yield* margin(0))
    }))

  it.live("the same with the default grace periods (2 s + 2 s): gone within 5 s", () =>
    Effect.gen(function*() {
      expectKilledAfter(yield* stubbornTree({}), 3950, yield* margin(0))
    }), hangGuard(30_000))

  it.live("children that left the group (detached, setsid, a double-forked daemon) end with the server", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { client } = yield* connect({
        name: "escaping",
        command: NODE,
        args: [fixture("escaping.mjs")],
        closeGracePeriod: 300,
        termGracePeriod: 300
      }).pipe(Scope.extend(scope))
      const pids = JSON.parse(firstText(yield* client.callTool("pids", {}))) as Record<string, number>
      const escaped = [pids.detached!, pids.setsid!, pids.daemon!]
      for (const pid of escaped) {
        seenPids.add(pid)
        expect(procState(pid)).toBe("alive")
        // Each leads a session and a group of its own (fields 5 and 6 of stat).
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        expect([Number(fields[2]), Number(fields[3])]).toEqual([pid, pid])
      }
      // The load probe runs beside the stop, as late as the processes it stands for.
      const limit = yield* Effect.fork(margin(1500))
      const start = performance.now()
      yield* Scope.close(scope, Exit.void)
      const closeMs = performance.now() - start
      // The scope closed: none of them is alive, not even one still exiting.
      expect(escaped.map(procState).filter((state) => state === "alive")).toEqual([])
      // The server exited on stdin's end; its escaped children ignored SIGTERM, so after both
      // grace periods came SIGKILL. The bound: 300 + 300 ms, and the kill.
      expect(closeMs).toBeGreaterThanOrEqual(550)
      expect(closeMs).toBeLessThan(yield* Fiber.join(limit))
      expect(logs.lines.map((line) => line.message)).toContain(
        "processes that server 'escaping' started outside its process group ignored SIGTERM; sending SIGKILL"
      )
    }).pipe(Effect.provide(Layer.merge(NodeContext.layer, logs.layer)))
  })

  it.live("a well-behaved server exits on stdin close, without SIGTERM", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { pid } = yield* connect({ name: "polite", command: NODE, args: [fixture("env.mjs")] }).pipe(
        Scope.extend(scope)
      )
      const start = performance.now()
      yield* Scope.close(scope, Exit.void)
      expect(performance.now() - start).toBeLessThan(yield* margin(1000))
      expect(procState(pid)).not.toBe("alive")
      expect(logs.lines.map((line) => line.message).filter((m) => m.includes("SIGTERM"))).toEqual([])
    }).pipe(Effect.provide(Layer.merge(NodeContext.layer, logs.layer)))
  })
})

// Runs last (vitest runs a file's tests in order): nothing this file started survives.
describe("leak check", () => {
  it.live("no process started by these tests is still running", () =>
    Effect.gen(function*() {
      // The everything server's layer is closed after its block; give every finalizer a moment.
      const states = yield* waitGone([...seenPids], 3000)
      for (const [pid, state] of Object.entries(states)) if (state === "zombie") zombies.add(Number(pid))
      const alive = Object.entries(states).filter(([, state]) => state === "alive").map(([pid]) => pid)
      expect(alive).toEqual([])
      expect(seenPids.size).toBeGreaterThanOrEqual(15)
      expect(markedSurvivors(MARKER, RUN_ID)).toEqual([])
      // For information: pids caught between exiting and being reaped at some check.
      if (zombies.size > 0) console.warn(`seen as zombies at some check: ${[...zombies].join(", ")}`)
    }))
})
