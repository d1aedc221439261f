/**
 * Dashboard: its Web handler in memory, over a fake server behind a real ServerRegistry: the
 * guard (token, cookie, Host, Origin), the state it shows, the live stream, and a call under
 * an `ask` rule answered through the page's API.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Dashboard from "../src/Dashboard.js"
import * as Policy from "../src/Policy.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import * as FakeServer from "../src/testing/FakeServer.js"
import { text } from "../src/testing/Results.js"
import { Platform } from "./support/platform.js"

const TOKEN = "a".repeat(64)
const ORIGIN = "http://127.0.0.1:4000"

const echo: FakeServer.FakeTool = {
  tool: {
    name: "echo",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] }
  },
  call: (args) => Effect.succeed(text(`echo: ${String(args.message)}`))
}

// A ready fleet of one fake server `alpha`, the policy `config`, and its dashboard.
const start = (config: Policy.Config) =>
  Effect.gen(function*() {
    const servers = [FakeServer.spec({ name: "alpha", tools: [echo] })]
    const registry = yield* ServerRegistry.make({ servers }).pipe(Effect.provide(Platform))
    yield* registry.awaitReady({ servers: ["alpha"], timeout: "5 seconds" })
    const policy = yield* Policy.make(config).pipe(Effect.provideService(ServerRegistry.ServerRegistry, registry))
    return yield* Dashboard.make({ assets: { script: "/* app */", style: "/* style */" }, token: TOKEN }).pipe(
      Effect.provideService(ServerRegistry.ServerRegistry, registry),
      Effect.provideService(Policy.Policy, policy)
    )
  })

const request = (path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) =>
  new Request(`${ORIGIN}${path}`, {
    method: init.method ?? "GET",
    headers: { host: "127.0.0.1:4000", ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })

const cookie = { cookie: `mcp_fleet_dashboard=${TOKEN}` }

const send = (dashboard: Dashboard.Dashboard, req: Request) => Effect.promise(() => dashboard.handler(req))
const json = (response: Response) => Effect.promise(() => response.json() as Promise<any>)

describe("Dashboard", () => {
  it.scopedLive("lets in the URL's token (then a cookie), and refuses other Hosts, Origins and tokens", () =>
    Effect.gen(function*() {
      const dashboard = yield* start({})
      const opened = yield* send(dashboard, request(`/?token=${TOKEN}`))
      expect(opened.status).toBe(303)
      expect(opened.headers.get("location")).toBe("/")
      expect(opened.headers.get("set-cookie")).toBe(`mcp_fleet_dashboard=${TOKEN}; HttpOnly; SameSite=Strict; Path=/`)
      const page = yield* send(dashboard, request("/", { headers: cookie }))
      expect(page.status).toBe(200)
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
      expect(yield* Effect.promise(() => page.text())).toContain(`<script type="module" src="/app.js">`)
      const refused = [
        request("/api/state"),
        request("/api/state", { headers: { cookie: "mcp_fleet_dashboard=wrong" } }),
        request(`/api/state?token=${"b".repeat(64)}`),
        request("/api/state", { headers: { ...cookie, host: "evil.example:4000" } }),
        request("/api/state", { headers: { ...cookie, origin: "http://127.0.0.1:5000" } }),
        request("/api/call", { method: "POST", headers: { ...cookie, origin: "http://evil.example" }, body: {} })
      ]
      const answers = yield* Effect.forEach(refused, (req) => send(dashboard, req))
      expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 403, 403, 403])
      for (const answer of answers) expect(yield* Effect.promise(() => answer.text())).not.toContain(TOKEN)
    }))

  it.scopedLive("shows each server, and each tool with its arguments and what the policy decides", () =>
    Effect.gen(function*() {
      const dashboard = yield* start({ ask: ["mcp__alpha__echo"] })
      const state = yield* json(yield* send(dashboard, request("/api/state", { headers: cookie })))
      expect(state.servers).toEqual([
        expect.objectContaining({ name: "alpha", state: "Ready", restarts: 0, lastError: null })
      ])
      expect(state.tools).toEqual([
        expect.objectContaining({ name: "mcp__alpha__echo", decision: "ask", inputSchema: echo.tool.inputSchema })
      ])
      expect([state.drifted, state.untrusted, state.asks]).toEqual([[], [], []])
      const stream = yield* send(dashboard, request("/api/events", { headers: cookie }))
      expect(stream.headers.get("content-type")).toBe("text/event-stream; charset=utf-8")
      const reader = stream.body!.getReader()
      const first = new TextDecoder().decode((yield* Effect.promise(() => reader.read())).value)
      expect(first).toMatch(/^event: state\ndata: \{"now":/)
      yield* Effect.promise(() => reader.cancel())
      expect(dashboard.pages()).toBe(0)
    }))

  it.scopedLive("holds a call under an ask rule until it is answered in the page", () =>
    Effect.gen(function*() {
      const dashboard = yield* start({ ask: ["mcp__alpha__echo"] })
      const asked = () =>
        new Promise<string>((resolve) => {
          const stop = dashboard.approver.onChange(() => {
            const waiting = dashboard.approver.pending()
            if (waiting.length > 0) {
              stop()
              resolve(waiting[0]!.id)
            }
          })
        })
      const call = (message: string) =>
        send(
          dashboard,
          request("/api/call", {
            method: "POST",
            headers: { ...cookie, origin: ORIGIN },
            body: { name: "mcp__alpha__echo", arguments: { message } }
          })
        )
      const answer = (id: string, decision: string) =>
        send(dashboard, request(`/api/asks/${id}`, { method: "POST", headers: cookie, body: { decision } }))

      const waiting = asked()
      const allowed = yield* Effect.fork(Effect.flatMap(call("hi"), json))
      const id = yield* Effect.promise(() => waiting)
      expect(dashboard.approver.pending()).toEqual([
        expect.objectContaining({ name: "mcp__alpha__echo", arguments: { message: "hi" }, rule: expect.any(String) })
      ])
      expect((yield* answer(id, "allow")).status).toBe(200)
      expect((yield* allowed.await.pipe(Effect.flatten)).result.content).toEqual([{ type: "text", text: "echo: hi" }])
      expect((yield* answer(id, "allow")).status).toBe(404)

      const next = asked()
      const denied = yield* Effect.fork(Effect.flatMap(call("no"), json))
      yield* answer(yield* Effect.promise(() => next), "deny")
      expect((yield* denied.await.pipe(Effect.flatten)).error).toContain("denied in the dashboard")
      expect(dashboard.approver.pending()).toEqual([])

      // A page that goes away before an answer takes its ask with it.
      const gone = new AbortController()
      const third = asked()
      const abandoned = dashboard.handler(
        new Request(`${ORIGIN}/api/call`, {
          method: "POST",
          headers: { host: "127.0.0.1:4000", ...cookie },
          body: JSON.stringify({ name: "mcp__alpha__echo", arguments: { message: "later" } }),
          signal: gone.signal
        })
      )
      yield* Effect.promise(() => third)
      const left = new Promise<void>((resolve) => dashboard.approver.onChange(() => resolve()))
      gone.abort()
      yield* Effect.promise(() => left)
      expect(dashboard.approver.pending()).toEqual([])
      yield* Effect.promise(() => abandoned.then(() => "answered", () => "interrupted")).pipe(
        Effect.map((how) => expect(how).toBe("interrupted"))
      )
    }))
})
