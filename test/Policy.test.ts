/**
 * Policy: rules and the filtered catalog, approval, argument validation, limits
 * (concurrency, rate, timeout, result size) and the audit log, against fake servers
 * behind a real ServerRegistry, on the TestClock.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FleetConfig from "../src/FleetConfig.js"
import * as Glob from "../src/internal/glob.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { failure, firstText, reasonOf, text } from "../src/testing/Results.js"
import { Platform } from "./support/platform.js"

// --- helpers ------------------------------------------------------------------------

const plain = (name: string): FakeServer.FakeTool => ({
  tool: { name, inputSchema: { type: "object" } },
  call: () => Effect.succeed(text(name))
})

const echo: FakeServer.FakeTool = {
  tool: {
    name: "echo",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string" }, count: { type: "integer", minimum: 0 } },
      required: ["path"]
    }
  },
  call: (args) => Effect.succeed(text(`echo:${JSON.stringify(args)}`))
}

const oops: FakeServer.FakeTool = {
  tool: { name: "oops", inputSchema: { type: "object" } },
  call: () => Effect.succeed({ content: [{ type: "text", text: "it went wrong" }], isError: true })
}

// A server of the fleet backed by a fake server with `tools`.
const fake = (name: string, tools: ReadonlyArray<FakeServer.FakeTool>) => FakeServer.spec({ name, tools })

const toolCalls = (server: FakeServer.Spec) =>
  server.current().requests.filter((request) => request.method === "tools/call")

interface Setup {
  readonly servers?: ReadonlyArray<ReturnType<typeof fake>>
  readonly approve?: Policy.Approval["approve"]
  readonly sink?: Policy.AuditSink
}

const withOptional =
  <I, S>(tag: Context.Tag<I, S>, service: S | undefined) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    service === undefined ? self : Effect.provideService(self, tag, service) as Effect.Effect<A, E, R>

// A ready fleet (one server `alpha` with echo, oops and delete unless told) and its policy.
const start = (config: Policy.Config, setup: Setup = {}) =>
  Effect.gen(function*() {
    const servers = setup.servers ?? [fake("alpha", [echo, oops, plain("delete")])]
    const registry = yield* ServerRegistry.make({ servers }).pipe(
      Effect.provide(Platform)
    )
    yield* registry.awaitReady({ servers: servers.map((server) => server.name), timeout: "1 second" })
    const policy = yield* Policy.make(config).pipe(
      withOptional(
        Policy.Approval,
        setup.approve === undefined ? undefined : Policy.Approval.of({ approve: setup.approve })
      ),
      withOptional(Policy.AuditSink, setup.sink),
      Effect.provideService(ServerRegistry.ServerRegistry, registry)
    )
    return { registry, policy, servers }
  })

// An audit sink that keeps entries in a queue, so tests wait for them.
const memorySink = Effect.map(Queue.unbounded<Policy.AuditEntry>(), (entries) => ({
  entries,
  sink: Policy.AuditSink.of({ write: (entry) => Queue.offer(entries, entry) })
}))

const names = (catalog: { readonly tools: ReadonlyArray<{ readonly name: string }> }) =>
  catalog.tools.map((entry) => entry.name).sort()

const tempDirs: Array<string> = []
afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true })
})
const tempFile = (name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-fleet-policy-"))
  tempDirs.push(dir)
  return path.join(dir, name)
}

// --- globs --------------------------------------------------------------------------

describe("Glob", () => {
  it("matches whole names: * any run (none included), ? one character, the rest literally", () => {
    const github = Glob.compile("mcp__github__*")
    expect(github("mcp__github__create_issue")).toBe(true)
    expect(github("mcp__github__")).toBe(true)
    expect(github("mcp__githubx__create_issue")).toBe(false)
    expect(github("xmcp__github__a")).toBe(false)
    expect(Glob.compile("mcp__*")("mcp__a__b")).toBe(true)
    expect(Glob.compile("*")("")).toBe(true)
    expect(Glob.compile("e?ho")("echo")).toBe(true)
    expect(Glob.compile("e?ho")("eho")).toBe(false)
    expect(Glob.compile("a.b")("axb")).toBe(false)
    expect(Glob.compile("a.b")("a.b")).toBe(true)
    expect(Glob.compile("read_(x)+")("read_(x)+")).toBe(true)
    expect(Glob.compile("Echo")("echo")).toBe(false)
  })
})

// --- rules --------------------------------------------------------------------------

describe("Policy rules", () => {
  it.scoped("deny hides a tool from the filtered catalog, and a call to it fails naming the rule", () =>
    Effect.gen(function*() {
      const { policy, registry, servers } = yield* start({ deny: ["mcp__alpha__del*"] })
      const catalog = yield* SubscriptionRef.get(registry.catalog)
      const filtered = policy.filter(catalog)
      expect(names(filtered)).toEqual(["mcp__alpha__echo", "mcp__alpha__oops"])
      expect(filtered.toolsByName.has("mcp__alpha__delete")).toBe(false)
      expect(filtered.resources).toBe(catalog.resources)
      // Asked again of the same catalog under the same rules: the same answer, not a new one.
      expect(policy.filter(catalog)).toBe(filtered)
      const error = failure(yield* Effect.exit(policy.callTool("mcp__alpha__delete", {})))
      const reason = reasonOf(error, "Denied")
      expect(reason.rule).toBe(`deny "mcp__alpha__del*" (global)`)
      expect(error.server).toBe("alpha")
      expect(error.message).toBe(
        `server 'alpha': tool 'mcp__alpha__delete' was denied by policy: rule deny "mcp__alpha__del*" (global)`
      )
      expect(toolCalls(servers[0])).toEqual([])
      reasonOf(failure(yield* Effect.exit(policy.validate("mcp__alpha__delete", {}))), "Denied")
      // An unknown name never suggests a hidden tool.
      const missing = failure(yield* Effect.exit(policy.callTool("mcp__alpha__delet")))
      expect(reasonOf(missing, "NotFound").suggestions).not.toContain("mcp__alpha__delete")
      expect(policy.decide("mcp__alpha__delete")).toMatchObject({ action: "deny" })
      expect(policy.decide("mcp__alpha__echo")).toEqual({ action: "allow", rule: undefined, reason: "no rule matches" })
    }))

  it.scoped("ask without an approver is deny: hidden, and a call fails saying so", () =>
    Effect.gen(function*() {
      const { policy, registry } = yield* start({ ask: ["mcp__alpha__echo"] })
      expect(names(policy.filter(yield* SubscriptionRef.get(registry.catalog)))).toEqual([
        "mcp__alpha__delete",
        "mcp__alpha__oops"
      ])
      const error = failure(yield* Effect.exit(policy.callTool("mcp__alpha__echo", { path: "/x" })))
      expect(reasonOf(error, "Denied").rule).toBe(`ask "mcp__alpha__echo" (global)`)
      expect(error.message).toContain(
        `rule ask "mcp__alpha__echo" (global) needs approval, and no approver is provided`
      )
      expect(policy.decide("mcp__alpha__echo").action).toBe("deny")
    }))

  it.scoped("a call's own approver answers ask, even without the policy's: the gateway's calling client", () =>
    Effect.gen(function*() {
      const { policy, registry } = yield* start({ ask: ["mcp__alpha__echo"] })
      const catalog = yield* SubscriptionRef.get(registry.catalog)
      expect(names(policy.filter(catalog))).not.toContain("mcp__alpha__echo")
      expect(names(policy.filter(catalog, { approver: true }))).toContain("mcp__alpha__echo")
      const asked: Array<string> = []
      const approve = (decision: "allow" | "deny") => (request: Policy.ApprovalRequest) =>
        Effect.sync((): Policy.ApprovalAnswer => {
          asked.push(request.name)
          return decision === "allow" ? { decision } : { decision, reason: "the client did not approve" }
        })
      const result = yield* policy.callTool("mcp__alpha__echo", { path: "/ok" }, { approve: approve("allow") })
      expect(firstText(result)).toBe(`echo:{"path":"/ok"}`)
      const error = failure(
        yield* Effect.exit(policy.callTool("mcp__alpha__echo", { path: "/ok" }, { approve: approve("deny") }))
      )
      expect(error.message).toContain("the approver declined (the client did not approve)")
      // Tools no rule matches are not asked about.
      yield* policy.callTool("mcp__alpha__delete", undefined, { approve: approve("deny") })
      expect(asked).toEqual(["mcp__alpha__echo", "mcp__alpha__echo"])
    }))

  it.scoped("ask with an approver: it sees the call and allows or denies it", () =>
    Effect.gen(function*() {
      const requests: Array<Policy.ApprovalRequest> = []
      const { policy, registry, servers } = yield* start({ ask: ["mcp__alpha__e*"] }, {
        approve: (request) =>
          Effect.sync(() => {
            requests.push(request)
            return request.arguments.path === "/ok"
              ? { decision: "allow" }
              : { decision: "deny", reason: "not that file" }
          })
      })
      expect(names(policy.filter(yield* SubscriptionRef.get(registry.catalog)))).toContain("mcp__alpha__echo")
      expect(policy.decide("mcp__alpha__echo")).toMatchObject({
        action: "ask",
        rule: { action: "ask", pattern: "mcp__alpha__e*" }
      })
      const result = yield* policy.callTool("mcp__alpha__echo", { path: "/ok" })
      expect(firstText(result)).toBe(`echo:{"path":"/ok"}`)
      const error = failure(yield* Effect.exit(policy.callTool("mcp__alpha__echo", { path: "/etc/shadow" })))
      expect(error.message).toBe(
        `server 'alpha': tool 'mcp__alpha__echo' was denied by policy: rule ask "mcp__alpha__e*" (global): the approver declined (not that file)`
      )
      expect(requests).toEqual([
        {
          server: "alpha",
          tool: "echo",
          name: "mcp__alpha__echo",
          arguments: { path: "/ok" },
          rule: { action: "ask", pattern: "mcp__alpha__e*" }
        },
        {
          server: "alpha",
          tool: "echo",
          name: "mcp__alpha__echo",
          arguments: { path: "/etc/shadow" },
          rule: { action: "ask", pattern: "mcp__alpha__e*" }
        }
      ])
      expect(toolCalls(servers[0])).toHaveLength(1)
      // Tools no rule matches are not asked about.
      yield* policy.callTool("mcp__alpha__delete")
      expect(requests).toHaveLength(2)
    }))

  it.scoped("global and per-server globs, precedence and defaults", () =>
    Effect.gen(function*() {
      const servers = [
        fake("alpha", [echo, plain("delete"), plain("read_file")]),
        fake("beta", [echo, plain("delete"), plain("read_file")]),
        fake("gamma", [plain("read_file"), plain("read_dir"), plain("write_file")])
      ]
      const { policy, registry } = yield* start({
        deny: ["mcp__*__delete"],
        allow: ["mcp__*"],
        servers: {
          // A glob without the prefix matches the original name, of this server's tools only.
          beta: { ask: ["echo"] },
          alpha: { allow: ["delete"], deny: ["mcp__alpha__read_?ile"] },
          gamma: { default: "deny", allow: ["read_*"] }
        }
      }, { servers, approve: () => Effect.succeed({ decision: "allow" }) })
      const action = (name: string) => policy.decide(name).action
      expect(action("mcp__alpha__delete")).toBe("deny") // deny beats a server's allow
      expect(action("mcp__alpha__read_file")).toBe("deny")
      expect(action("mcp__alpha__echo")).toBe("allow")
      expect(action("mcp__beta__echo")).toBe("ask") // ask beats the global allow
      expect(action("mcp__beta__read_file")).toBe("allow")
      expect(action("mcp__gamma__read_dir")).toBe("allow") // the global allow matches gamma too
      expect(policy.decide("mcp__beta__delete").reason).toBe(`rule deny "mcp__*__delete" (global)`)
      expect(policy.decide("mcp__beta__echo").reason).toBe(`rule ask "echo" (server 'beta')`)
      const filtered = policy.filter(yield* SubscriptionRef.get(registry.catalog))
      expect(names(filtered)).toEqual([
        "mcp__alpha__echo",
        "mcp__beta__echo",
        "mcp__beta__read_file",
        "mcp__gamma__read_dir",
        "mcp__gamma__read_file",
        "mcp__gamma__write_file"
      ])
      // Without the global allow, gamma's default decides what its allow rules leave.
      yield* policy.update({ servers: { gamma: { default: "deny", allow: ["read_*"] } } })
      expect(action("mcp__gamma__write_file")).toBe("deny")
      expect(policy.decide("mcp__gamma__write_file").reason).toBe("default deny (server 'gamma')")
      expect(action("mcp__gamma__read_file")).toBe("allow")
      const error = failure(yield* Effect.exit(policy.callTool("mcp__gamma__write_file")))
      expect(reasonOf(error, "Denied").rule).toBe("default deny (server 'gamma')")
      // A name the catalog does not hold is judged by the global rules alone.
      yield* policy.update({ deny: ["mcp__zeta__*"], servers: { zeta: { deny: ["*"] } } })
      expect(action("mcp__zeta__x")).toBe("deny")
      expect(action("mcp__eta__x")).toBe("allow")
    }))

  it.scoped("the README's example is an allowlist: reading tools, an issue after asking, nothing else", () =>
    Effect.gen(function*() {
      const readme = fs.readFileSync(new URL("../README.md", import.meta.url), "utf8")
      const section = readme.slice(readme.indexOf("## Tool policy"))
      const example = /```json\n([\s\S]*?)```/.exec(section)![1]!
      const config = Either.getOrThrow(FleetConfig.parseFile(example, "/p/.mcp.json", {})).policy
      const github = ["get_me", "list_issues", "search_code", "create_issue", "merge_pull_request", "delete_file"]
      const { policy } = yield* start(config, {
        servers: [fake("github", github.map(plain)), fake("other", [plain("read"), plain("delete_all")])],
        approve: () => Effect.succeed({ decision: "allow" })
      })
      const action = (name: string) => policy.decide(name).action
      expect(Object.fromEntries(github.map((tool) => [tool, action(`mcp__github__${tool}`)]))).toEqual({
        get_me: "allow",
        list_issues: "allow",
        search_code: "allow",
        create_issue: "ask",
        merge_pull_request: "deny",
        delete_file: "deny"
      })
      expect(action("mcp__other__read")).toBe("allow")
      expect(action("mcp__other__delete_all")).toBe("deny")
    }))

  it.scoped("the policy's catalog stream follows catalog and policy changes", () =>
    Effect.gen(function*() {
      const { policy } = yield* start({})
      const seen = yield* Queue.unbounded<ReadonlyArray<string>>()
      yield* policy.catalog.pipe(Stream.runForEach((catalog) => Queue.offer(seen, names(catalog))), Effect.forkScoped)
      expect(yield* Queue.take(seen)).toEqual(["mcp__alpha__delete", "mcp__alpha__echo", "mcp__alpha__oops"])
      yield* policy.update({ deny: ["*delete"] })
      expect(yield* Queue.take(seen)).toEqual(["mcp__alpha__echo", "mcp__alpha__oops"])
      // An edit that hides nothing new is no change; the next real one is seen.
      yield* policy.update({ deny: ["*delete"], ask: ["nothing"] })
      yield* policy.update({ deny: ["*delete", "*oops"] })
      expect(yield* Queue.take(seen)).toEqual(["mcp__alpha__echo"])
      expect(yield* policy.config).toEqual({ deny: ["*delete", "*oops"] })
    }))
})

// --- validation ---------------------------------------------------------------------

describe("Policy validation", () => {
  it.scoped("bad arguments fail before the call is sent, naming the server, the tool and the field", () =>
    Effect.gen(function*() {
      const { policy, servers } = yield* start({})
      const wrongType = failure(yield* Effect.exit(policy.callTool("mcp__alpha__echo", { path: 42 })))
      // Worded plainly (which argument, what was expected), and no method: nothing was sent.
      expect(reasonOf(wrongType, "Validation").method).toBeUndefined()
      expect(wrongType.message).toBe(
        "server 'alpha': invalid arguments for tool 'echo': argument 'path' must be a string"
      )
      const missing = failure(yield* Effect.exit(policy.callTool("mcp__alpha__echo", {})))
      expect(missing.message).toBe(
        "server 'alpha': invalid arguments for tool 'echo': the required argument 'path' is missing"
      )
      const negative = failure(yield* Effect.exit(policy.validate("mcp__alpha__echo", { path: "/x", count: -1 })))
      expect(negative.message).toContain("argument 'count' must be >= 0")
      expect(toolCalls(servers[0])).toEqual([])
      yield* policy.validate("mcp__alpha__echo", { path: "/x" })
      yield* policy.callTool("mcp__alpha__echo", { path: "/x", count: 2 })
      expect(toolCalls(servers[0])).toHaveLength(1)
    }))
})

// --- limits -------------------------------------------------------------------------

describe("Policy limits", () => {
  it.scoped("max concurrent: the N+1th call waits for a free slot", () =>
    Effect.gen(function*() {
      const started = yield* Queue.unbounded<string>()
      const gates = new Map<string, Deferred.Deferred<void>>()
      for (const id of ["a", "b", "c", "d"]) gates.set(id, yield* Deferred.make<void>())
      let running = 0
      let most = 0
      const slow: FakeServer.FakeTool = {
        tool: { name: "slow", inputSchema: { type: "object" } },
        call: (args) =>
          Effect.gen(function*() {
            running++
            most = Math.max(most, running)
            yield* Queue.offer(started, String(args.id))
            yield* Deferred.await(gates.get(String(args.id))!)
            running--
            return text(`done ${String(args.id)}`)
          })
      }
      const { policy } = yield* start({ servers: { alpha: { tools: { slow: { maxConcurrent: 2 } } } } }, {
        servers: [fake("alpha", [slow, echo])]
      })
      const calls = yield* Effect.forEach(["a", "b", "c"], (id) =>
        Effect.fork(policy.callTool("mcp__alpha__slow", { id })))
      const first = [yield* Queue.take(started), yield* Queue.take(started)]
      expect(first.sort()).toEqual(["a", "b"])
      // The limit is the tool's own: another tool of the server is not held up.
      yield* policy.callTool("mcp__alpha__echo", { path: "/x" })
      expect(yield* Queue.size(started)).toBe(0)
      yield* Deferred.succeed(gates.get("a")!, undefined)
      expect(firstText(yield* Fiber.join(calls[0]))).toBe("done a")
      expect(yield* Queue.take(started)).toBe("c")
      yield* Deferred.succeed(gates.get("b")!, undefined)
      yield* Deferred.succeed(gates.get("c")!, undefined)
      yield* Fiber.join(calls[1])
      yield* Fiber.join(calls[2])
      expect(most).toBe(2)
    }))

  it.scoped("rate limit: a call over the rate fails at once, and the bucket refills on the Clock", () =>
    Effect.gen(function*() {
      const { policy } = yield* start({
        deny: ["*delete"],
        servers: { alpha: { limits: { rateLimit: { calls: 2, per: 1000 } } } }
      })
      const call = policy.callTool("mcp__alpha__echo", { path: "/x" })
      // Denied and invalid calls take no token.
      reasonOf(failure(yield* Effect.exit(policy.callTool("mcp__alpha__delete"))), "Denied")
      reasonOf(failure(yield* Effect.exit(policy.callTool("mcp__alpha__echo", {}))), "Validation")
      yield* call
      yield* call
      const error = failure(yield* Effect.exit(call))
      expect(reasonOf(error, "Limit").limit).toBe(2)
      expect(error.message).toBe(
        "server 'alpha': calls per 1000 ms to the server (the next is allowed in 500 ms) exceeds the limit of 2"
      )
      yield* TestClock.adjust("499 millis")
      expect(reasonOf(failure(yield* Effect.exit(call)), "Limit")).toBeDefined()
      yield* TestClock.adjust("1 millis")
      yield* call
      expect(reasonOf(failure(yield* Effect.exit(call)), "Limit")).toBeDefined()
      yield* TestClock.adjust("1 second")
      yield* call
      yield* call
      expect(reasonOf(failure(yield* Effect.exit(call)), "Limit")).toBeDefined()
    }))

  it.scoped("a per-tool rate limit counts that tool alone, and a global one each server", () =>
    Effect.gen(function*() {
      const { policy } = yield* start({
        limits: { rateLimit: { calls: 3, per: "1 minute" } },
        tools: { "mcp__alpha__oops": { rateLimit: { calls: 1, per: "1 minute" } } }
      }, { servers: [fake("alpha", [echo, oops]), fake("beta", [echo])] })
      yield* policy.callTool("mcp__alpha__oops")
      const error = failure(yield* Effect.exit(policy.callTool("mcp__alpha__oops")))
      expect(error.message).toBe(
        "server 'alpha': calls per 60000 ms to tool 'oops' (the next is allowed in 60000 ms) exceeds the limit of 1"
      )
      yield* policy.callTool("mcp__alpha__echo", { path: "/x" })
      yield* policy.callTool("mcp__alpha__echo", { path: "/x" })
      expect(failure(yield* Effect.exit(policy.callTool("mcp__alpha__echo", { path: "/x" }))).message).toContain(
        "to the server"
      )
      for (let i = 0; i < 3; i++) yield* policy.callTool("mcp__beta__echo", { path: "/x" })
    }))

  it.scoped("timeout: a call that runs longer is cancelled and fails with a Timeout", () =>
    Effect.gen(function*() {
      const started = yield* Queue.unbounded<string>()
      const hang: FakeServer.FakeTool = {
        tool: { name: "hang", inputSchema: { type: "object" } },
        call: () => Effect.zipRight(Queue.offer(started, "hang"), Effect.never)
      }
      const { policy, servers } = yield* start({ servers: { alpha: { tools: { hang: { timeout: 5000 } } } } }, {
        servers: [fake("alpha", [hang, echo])]
      })
      const call = yield* Effect.fork(policy.callTool("mcp__alpha__hang"))
      yield* Queue.take(started)
      yield* TestClock.adjust("4999 millis")
      expect(call.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      const error = failure(yield* Effect.exit(Fiber.join(call)))
      expect(reasonOf(error, "Timeout")).toMatchObject({ method: "tools/call", afterMs: 5000, kind: "total" })
      expect(error.message).toBe("server 'alpha' did not finish tools/call within its maximum of 5000 ms")
      // Other tools have no timeout of their own.
      yield* policy.callTool("mcp__alpha__echo", { path: "/x" })
      expect(toolCalls(servers[0])).toHaveLength(2)
    }))

  it.scoped("max result size: truncated with a marker by default, within the limit", () =>
    Effect.gen(function*() {
      const body = `"quoted" é ✓ 😀 \n`.repeat(200)
      const big: FakeServer.FakeTool = {
        tool: { name: "big", inputSchema: { type: "object" } },
        call: () =>
          Effect.succeed({
            content: [{ type: "text", text: "head" }, { type: "text", text: body }, { type: "text", text: "tail" }],
            structuredContent: { body }
          })
      }
      const { policy } = yield* start({ limits: { maxResultBytes: 1000 } }, { servers: [fake("alpha", [big])] })
      const result = yield* policy.callTool("mcp__alpha__big")
      const size = new TextEncoder().encode(JSON.stringify(result)).length
      expect(size).toBeLessThanOrEqual(1000)
      expect(size).toBeGreaterThan(990)
      expect(result.structuredContent).toBeUndefined()
      expect(result.content).toHaveLength(3)
      expect(firstText(result)).toBe("head")
      const cut = (result.content[1] as McpSchema.TextContent).text
      expect(body.startsWith(cut)).toBe(true)
      expect(cut.length).toBeGreaterThan(100)
      const marker = (result.content[2] as McpSchema.TextContent).text
      expect(marker).toMatch(/^\[truncated by mcp-fleet: 1000 of \d+ bytes\]$/)
      expect(Number(/of (\d+) bytes/.exec(marker)![1])).toBeGreaterThan(2 * new TextEncoder().encode(body).length)
    }))

  it.scoped("max result size: onOversize fail fails with a Limit; a result within the limit is untouched", () =>
    Effect.gen(function*() {
      const big: FakeServer.FakeTool = {
        tool: { name: "big", inputSchema: { type: "object" } },
        call: () => Effect.succeed(text("x".repeat(5000)))
      }
      const { policy } = yield* start({
        servers: { alpha: { limits: { maxResultBytes: 1024, onOversize: "fail" } } }
      }, { servers: [fake("alpha", [big, echo])] })
      const error = failure(yield* Effect.exit(policy.callTool("mcp__alpha__big")))
      expect(reasonOf(error, "Limit")).toMatchObject({ limit: 1024, size: 5039 })
      expect(error.message).toBe("server 'alpha': the result of tool 'big' in bytes of 5039 exceeds the limit of 1024")
      const small = yield* policy.callTool("mcp__alpha__echo", { path: "/x" })
      expect(small).toEqual(text(`echo:{"path":"/x"}`))
    }))

  it("truncate cuts a long text within the limit, never splitting a surrogate pair", () => {
    for (const limit of [150, 151, 152, 153, 200]) {
      const result: McpSchema.CallToolResult = { content: [{ type: "text", text: "😀".repeat(100) }], isError: true }
      const truncated = Policy.truncate(result, limit, 999)
      const json = JSON.stringify(truncated)
      expect(new TextEncoder().encode(json).length).toBeLessThanOrEqual(limit)
      expect(truncated.isError).toBe(true)
      const cut = (truncated.content[0] as McpSchema.TextContent).text
      expect(cut).toMatch(/^(😀)+$/u)
    }
    // A limit too small for any content keeps just the marker.
    const tiny = Policy.truncate(text("abc".repeat(50)), 10, 152)
    expect(tiny.content).toEqual([{ type: "text", text: "[truncated by mcp-fleet: 10 of 152 bytes]" }])
  })
})

// --- audit --------------------------------------------------------------------------

describe("Policy audit", () => {
  it.scoped("one JSON line per call, to the file and the sink, with a digest and never the arguments", () =>
    Effect.gen(function*() {
      const file = tempFile("audit.jsonl")
      const { entries, sink } = yield* memorySink
      const { policy } = yield* start({ deny: ["*delete"], audit: file }, { sink }).pipe(
        Effect.provide(NodeFileSystem.layer)
      )
      const secret = "hunter2-very-secret"
      yield* TestClock.adjust("1500 millis")
      yield* policy.callTool("mcp__alpha__echo", { path: secret, count: 1 })
      yield* policy.callTool("mcp__alpha__oops", { token: secret })
      yield* Effect.exit(policy.callTool("mcp__alpha__delete", { token: secret }))
      yield* Effect.exit(policy.callTool("mcp__alpha__echo", { path: 7, token: secret }))
      yield* Effect.exit(policy.callTool("mcp__alpha__nope", { token: secret }))

      const content = fs.readFileSync(file, "utf8")
      expect(content).not.toContain(secret)
      const lines = content.trimEnd().split("\n")
      expect(lines).toHaveLength(5)
      const decode = Schema.decodeUnknownSync(Policy.AuditEntry)
      const logged = lines.map((line) => decode(JSON.parse(line)))
      const sunk = yield* Queue.takeAll(entries)
      expect([...sunk]).toEqual(logged)

      const okDigest = `sha256:${createHash("sha256").update(`{"count":1,"path":"${secret}"}`).digest("hex")}`
      expect(logged[0]).toEqual({
        time: "1970-01-01T00:00:01.500Z",
        server: "alpha",
        tool: "echo",
        name: "mcp__alpha__echo",
        argsDigest: okDigest,
        durationMs: 0,
        outcome: "ok",
        resultBytes: new TextEncoder().encode(JSON.stringify(text(`echo:{"path":"${secret}","count":1}`))).length
      })
      expect(Policy.digestArguments({ path: secret, count: 1 })).toBe(okDigest)
      expect(logged.map((entry) => entry.outcome)).toEqual(["ok", "isError", "denied", "invalid", "error:NotFound"])
      expect(logged[2]).toMatchObject({ tool: "delete", rule: `deny "*delete" (global)` })
      expect(logged[2].resultBytes).toBeUndefined()
      expect(logged[4]).toMatchObject({ server: "", tool: "", name: "mcp__alpha__nope" })
    }))

  it.scoped("audit outcomes of limits and cancellation: timeout, a truncation, an oversize failure, cancelled", () =>
    Effect.gen(function*() {
      const { entries, sink } = yield* memorySink
      const started = yield* Queue.unbounded<string>()
      const tools: ReadonlyArray<FakeServer.FakeTool> = [
        {
          tool: { name: "hang", inputSchema: { type: "object" } },
          call: () => Effect.zipRight(Queue.offer(started, "hang"), Effect.never)
        },
        { tool: { name: "big", inputSchema: { type: "object" } }, call: () => Effect.succeed(text("y".repeat(300))) },
        { tool: { name: "huge", inputSchema: { type: "object" } }, call: () => Effect.succeed(text("z".repeat(300))) }
      ]
      const { policy } = yield* start({
        limits: { timeout: "2 seconds", maxResultBytes: 100 },
        tools: { "*huge": { onOversize: "fail" } }
      }, { servers: [fake("alpha", tools)], sink })
      const call = yield* Effect.fork(policy.callTool("mcp__alpha__hang"))
      yield* Queue.take(started)
      yield* TestClock.adjust("2 seconds")
      yield* Effect.exit(Fiber.join(call))
      yield* policy.callTool("mcp__alpha__big")
      yield* Effect.exit(policy.callTool("mcp__alpha__huge"))
      const cancelled = yield* Effect.fork(policy.callTool("mcp__alpha__hang"))
      yield* Queue.take(started)
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(cancelled)
      const logged = [...yield* Queue.takeAll(entries)]
      expect(logged.map(({ durationMs, outcome, truncated }) => ({ durationMs, outcome, truncated }))).toEqual([
        { durationMs: 2000, outcome: "timeout", truncated: undefined },
        { durationMs: 0, outcome: "ok", truncated: true },
        { durationMs: 0, outcome: "error:Limit", truncated: undefined },
        { durationMs: 1000, outcome: "cancelled", truncated: undefined }
      ])
      expect(logged[1].resultBytes).toBe(339)
      expect(logged[2].resultBytes).toBe(339)
    }))
})

// --- config -------------------------------------------------------------------------

describe("Policy config", () => {
  const parsed = (json: unknown) => {
    const result = FleetConfig.parseFile(JSON.stringify(json), "/work/project/.mcp.json", {})
    if (Either.isLeft(result)) throw new Error(result.left.message)
    return result.right
  }

  it("FleetConfig reads the global and per-server policy blocks", () => {
    const rules = {
      deny: ["mcp__*__delete_*"],
      ask: ["mcp__github__*"],
      default: "allow",
      limits: { timeout: 30000, maxConcurrent: 4, rateLimit: { calls: 10, per: 1000 }, maxResultBytes: 1048576 },
      tools: { "mcp__fs__read_file": { onOversize: "fail" } }
    }
    const github = {
      allow: ["get_*"],
      limits: { maxConcurrent: 1 },
      tools: { search: { rateLimit: { calls: 1, per: 2000 } } }
    }
    const file = parsed({
      policy: { ...rules, audit: "logs/audit.jsonl", comment: "unknown keys are ignored" },
      mcpServers: { github: { command: "gh-mcp", policy: github }, fs: { command: "fs-mcp" } }
    })
    expect(file.servers.map((spec) => spec.name)).toEqual(["github", "fs"])
    expect(file.servers[0]).not.toHaveProperty("policy")
    expect(file.policy).toEqual({ ...rules, audit: "/work/project/logs/audit.jsonl", servers: { github } })
    expect(parsed({ mcpServers: {} }).policy).toEqual({})
  })

  it("a malformed policy block fails the file, naming the field", () => {
    const result = FleetConfig.parseFile(
      JSON.stringify({
        mcpServers: { a: { command: "x", policy: { deny: "mcp__*", limits: { onOversize: "drop" } } } }
      }),
      "/p/.mcp.json",
      {}
    )
    if (Either.isRight(result)) throw new Error("expected a ConfigError")
    expect(result.left.message).toBe(
      `invalid config file /p/.mcp.json: mcpServers.a.policy.deny: expected an array of strings, got "mcp__*"; ` +
        `mcpServers.a.policy.limits.onOversize: expected "truncate" or "fail", got "drop"`
    )
  })

  it("merge: rules concatenated, later scalars win, the stricter default", () => {
    const merged = Policy.merge(
      {
        deny: ["a"],
        default: "deny",
        limits: { timeout: 1, maxConcurrent: 2 },
        audit: "/u.jsonl",
        servers: { s: { ask: ["x"] } }
      },
      {
        deny: ["b"],
        allow: ["c"],
        default: "allow",
        limits: { timeout: 5 },
        servers: { s: { ask: ["y"], default: "ask" }, t: { deny: ["*"] } }
      }
    )
    expect(merged).toEqual({
      deny: ["a", "b"],
      allow: ["c"],
      default: "deny",
      limits: { timeout: 5, maxConcurrent: 2 },
      audit: "/u.jsonl",
      servers: { s: { ask: ["x", "y"], default: "ask" }, t: { deny: ["*"] } }
    })
  })
})

describe("Policy layers", () => {
  // The fleet of `start`, with the policy built from `layer` over it.
  const startLayer = (layer: Layer.Layer<Policy.Policy, never, ServerRegistry.ServerRegistry>) =>
    Effect.gen(function*() {
      const alpha = fake("alpha", [echo, oops, plain("delete")])
      const registry = yield* ServerRegistry.make({ servers: [alpha] }).pipe(Effect.provide(Platform))
      yield* registry.awaitReady({ servers: ["alpha"], timeout: "1 second" })
      const context = yield* Layer.build(layer).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
      return { registry, policy: Context.get(context, Policy.Policy), alpha }
    })

  it.scoped("layerAllowAll: every tool visible and every call passed on, arguments still validated", () =>
    Effect.gen(function*() {
      const { alpha, policy, registry } = yield* startLayer(Policy.layerAllowAll)
      const catalog = yield* SubscriptionRef.get(registry.catalog)
      expect(policy.filter(catalog)).toBe(catalog)
      expect(yield* policy.config).toEqual({})
      expect(policy.decide("mcp__alpha__delete")).toEqual({
        action: "allow",
        rule: undefined,
        reason: "no rule matches"
      })
      expect(firstText(yield* policy.callTool("mcp__alpha__delete"))).toBe("delete")
      const invalid = failure(yield* Effect.exit(policy.callTool("mcp__alpha__echo", { count: 1 })))
      reasonOf(invalid, "Validation")
      // The invalid call never reached the server.
      expect(toolCalls(alpha).map((request) => (request.params as { name: string }).name)).toEqual(["delete"])
    }))

  it.scoped("layerApproval: the approver answers the layer's ask rules, and its no is a Denied", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      const approval = Policy.layerApproval((request) =>
        Effect.sync(() => {
          asked.push(`${request.server}/${request.tool}`)
          return request.arguments.path === "/ok"
            ? { decision: "allow" as const }
            : { decision: "deny" as const, reason: "not that path" }
        })
      )
      const { policy } = yield* startLayer(Policy.layer({ ask: ["mcp__alpha__echo"] }).pipe(Layer.provide(approval)))
      // With an approver, ask is ask: the tool stays visible.
      expect(policy.decide("mcp__alpha__echo").action).toBe("ask")
      expect(firstText(yield* policy.callTool("mcp__alpha__echo", { path: "/ok" }))).toBe(`echo:{"path":"/ok"}`)
      const declined = failure(yield* Effect.exit(policy.callTool("mcp__alpha__echo", { path: "/etc" })))
      expect(reasonOf(declined, "Denied").message).toContain("the approver declined (not that path)")
      // Tools no ask rule matches are not asked about.
      expect(firstText(yield* policy.callTool("mcp__alpha__delete"))).toBe("delete")
      expect(asked).toEqual(["alpha/echo", "alpha/echo"])
    }))

  it.scoped("a call through the policy that runs as a task shows in its server's status and events", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const long: FakeServer.FakeTool = {
        tool: { name: "long", inputSchema: { type: "object" }, execution: { taskSupport: "required" } },
        call: () => Effect.as(Deferred.await(release), { content: [{ type: "text", text: "done" }] })
      }
      const { policy, registry } = yield* start({}, { servers: [fake("alpha", [long])] })
      const events = yield* registry.subscribe
      const call = yield* Effect.fork(policy.callTool("mcp__alpha__long", {}))
      const created = yield* Queue.take(events).pipe(
        Effect.repeat({ until: (event) => event._tag === "TaskStatusChanged" })
      )
      expect(created).toMatchObject({ server: "alpha", tool: "long", status: "working" })
      const [alpha] = yield* registry.status
      expect(alpha!.tasks).toMatchObject([{
        id: (created as { taskId: string }).taskId,
        tool: "long",
        status: "working"
      }])
      yield* Deferred.succeed(release, undefined)
      // Once the call waits out the server's poll interval (1 s from 0), the poll finds it done.
      yield* TestClock.sleeps().pipe(
        Effect.zipLeft(Effect.yieldNow()),
        Effect.repeat({ until: (sleeps) => Chunk.toReadonlyArray(sleeps).includes(1000) })
      )
      yield* TestClock.adjust("1 second")
      expect(firstText(yield* Fiber.join(call))).toBe("done")
      expect((yield* registry.status)[0]!.tasks).toEqual([])
    }))
})
