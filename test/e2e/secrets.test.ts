// Secrets never reach what the fleet shows: a server that cannot be reached, one that
// repeats its env secret on stderr and in its JSON-RPC errors, one whose HTTP error body
// repeats a header. Each is checked in every form a user sees an error in.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import type * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { fileURLToPath } from "node:url"
import { inspect } from "node:util"
import * as HttpClientUndici from "../../src/HttpClientUndici.js"
import type * as McpError from "../../src/McpError.js"
import * as NodeFleet from "../../src/NodeFleet.js"
import type { RegistryEvent } from "../../src/RegistryEvent.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import type * as ServerSpec from "../../src/ServerSpec.js"
import { failure } from "../../src/testing/Results.js"
import { stateOf, until as untilEvent } from "../support/events.js"
import { hangGuard } from "../support/guard.js"
import { mcp, serve, status } from "../support/httpServer.js"
import { Platform } from "../support/platform.js"

const TOKEN = "tok-3f9a1c77e2b4"
const AUTH = "Bearer auth-9d41c0a8b7e2"
const KEY = "key-58e1d0b3c6a7"
const PASSWORD = "pw-c2a8f61e09d4"
const SECRETS = [TOKEN, AUTH, "auth-9d41c0a8b7e2", KEY, PASSWORD]

const fixture = fileURLToPath(new URL("../fixtures/echo-secret.mjs", import.meta.url))

const until = <A extends RegistryEvent>(
  events: Queue.Dequeue<RegistryEvent>,
  match: (event: RegistryEvent) => event is A
) => untilEvent(events, match).pipe(Effect.timeout(hangGuard(20_000)))

// Every way a person or a program sees an error.
const renderings = (error: McpError.McpError): Record<string, string> => ({
  message: error.message,
  string: String(error),
  json: JSON.stringify(error),
  inspect: inspect(error, { depth: null }),
  inspectable: Inspectable.format(error),
  pretty: Cause.pretty(Cause.fail(error))
})

const expectNoSecret = (shown: Record<string, unknown>) => {
  for (const [form, text] of Object.entries(shown)) {
    for (const secret of SECRETS) {
      expect(String(text), `${form} holds a secret`).not.toContain(secret)
    }
  }
}

// Log lines, at every level, as the CLI's logger would print them.
const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ annotations, cause, message }) =>
    lines.push(`${inspect(message)} ${inspect(annotations)} ${Cause.pretty(cause)}`)
  )
  const layer = Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(LogLevel.All))
  return { lines, layer }
}

const remote = (type: "http" | "sse" | "ws", url: string): ServerSpec.ServerSpec => ({
  name: "remote",
  transport: {
    type,
    url: url.replace("://", `://user:${PASSWORD}@`) + `?token=${TOKEN}`,
    headers: { Authorization: Redacted.make(AUTH), "X-Key": KEY }
  },
  restart: { maxAttempts: 1 }
})

// The fleet with one server that cannot be reached: everything it shows of the failure.
const unreachable = (type: "http" | "sse" | "ws", base: string) =>
  Effect.gen(function*() {
    const fleet = yield* ServerRegistry.make()
    const events = yield* fleet.subscribe
    yield* fleet.reconcile([remote(type, base)])
    const failed = yield* until(events, stateOf("remote", "Failed"))
    const error = failed.state._tag === "Failed" ? failed.state.error : undefined
    expect(error?.reason._tag).toBe("Transport")
    expectNoSecret(renderings(error!))
    expectNoSecret({ event: inspect(failed, { depth: null }), eventJson: JSON.stringify(failed) })
    const [state] = yield* fleet.status
    expectNoSecret({ status: inspect(state, { depth: null }), statusJson: JSON.stringify(state) })
    expectNoSecret(renderings(failure(yield* Effect.exit(fleet.callTool("mcp__remote__echo", {})))))
  }).pipe(Effect.scoped)

describe("secrets", () => {
  const clients = [["undici", HttpClientUndici.layer], ["fetch", FetchHttpClient.layer]] as const
  const cases = [
    ...clients.map(([client, layer]) => ({ name: `http on ${client}`, type: "http" as const, layer })),
    { name: "sse", type: "sse" as const, layer: HttpClientUndici.layer },
    { name: "ws", type: "ws" as const, layer: HttpClientUndici.layer }
  ]
  for (const { layer, name, type } of cases) {
    it.scopedLive(`an unreachable ${name} server: no header, token or password in its error, status, event or logs`, () =>
      Effect.gen(function*() {
        const closed = yield* Scope.make()
        const gone = yield* serve(mcp().handler).pipe(Scope.extend(closed))
        yield* Scope.close(closed, Exit.void)
        const base = type === "ws" ? gone.url.replace("http:", "ws:") : gone.url
        const logs = captureLogs()
        yield* Effect.provide(unreachable(type, base), logs.layer)
        expectNoSecret({ logs: logs.lines.join("\n") })
      }).pipe(Effect.provide(Layer.mergeAll(NodeContext.layer, NodeFleet.layerLauncher, layer))))
  }

  it.scopedLive("a stdio server that repeats its env secret: masked in errors, status, events and logs", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      yield* Effect.gen(function*() {
        const fleet = yield* ServerRegistry.make()
        const events = yield* fleet.subscribe
        const spec = (name: string, args: Array<string>): ServerSpec.ServerSpec => ({
          name,
          transport: {
            type: "stdio",
            command: process.execPath,
            args: [fixture, ...args],
            env: { API_TOKEN: Redacted.make(TOKEN) }
          },
          restart: { maxAttempts: 1 }
        })
        yield* fleet.reconcile([spec("echo", []), spec("crash", ["crash"])])
        yield* fleet.awaitReady({ servers: "settled", timeout: hangGuard(20_000) })
        const crash = (yield* fleet.status).find((status) => status.name === "crash")?.lastError
        expect(crash?.message).toContain("error: the token *** was refused")
        expectNoSecret(renderings(crash!))

        const error = failure(yield* Effect.exit(fleet.callTool("mcp__echo__leak", {})))
        expect(error.message).toBe("server 'echo' answered tools/call with error -32000: the token *** is not allowed")
        expect(error.reason).toMatchObject({ _tag: "Protocol", data: { token: "***" } })
        expectNoSecret(renderings(error))
        const logged = yield* until(events, (event): event is RegistryEvent => event._tag === "LogMessage")
        expect(logged).toMatchObject({ server: "echo", data: { token: "***" } })
        expectNoSecret({ status: inspect(yield* fleet.status, { depth: null }) })
      }).pipe(Effect.provide(logs.layer))
      const text = logs.lines.join("\n")
      // The stderr lines (debug) and the garbage line (a warning) were logged, masked.
      expect(text).toContain("starting with API_TOKEN=***")
      expect(text).toContain("debug: token=***")
      expectNoSecret({ logs: text })
    }).pipe(Effect.provide(Platform)))

  it.scopedLive("an HTTP server whose error body repeats the header: masked in the Http error, status and logs", () =>
    Effect.gen(function*() {
      const echoing = yield* serve((request) =>
        Effect.succeed(
          status(500, `bad credentials: ${request.headers["authorization"]} / ${request.headers["x-key"]}`)
        )
      )
      const logs = captureLogs()
      const [error, statuses] = yield* Effect.gen(function*() {
        const fleet = yield* ServerRegistry.make()
        const events = yield* fleet.subscribe
        yield* fleet.reconcile([{
          name: "remote",
          transport: { type: "http", url: echoing.url, headers: { Authorization: Redacted.make(AUTH), "X-Key": KEY } },
          restart: { maxAttempts: 1 }
        }])
        const failed = yield* until(events, stateOf("remote", "Failed"))
        return [failed.state._tag === "Failed" ? failed.state.error : undefined, yield* fleet.status] as const
      }).pipe(Effect.provide(logs.layer))
      expect(error?.message).toBe("server 'remote' answered server/discover with HTTP 500: bad credentials: *** / ***")
      expectNoSecret(renderings(error!))
      expectNoSecret({ status: inspect(statuses, { depth: null }), logs: logs.lines.join("\n") })
      expect(logs.lines.join("\n")).toContain("bad credentials: *** / ***")
    }).pipe(Effect.provide(Platform)))
})
