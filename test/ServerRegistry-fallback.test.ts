// A server whose 2026-07-28 exchanges fail for protocol reasons while connecting falls back,
// once and logged, to the newest stateful revision; a server configured with a revision
// speaks that one.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as JsonRpc from "../src/JsonRpc.js"
import * as Memory from "../src/Memory.js"
import * as Peer from "../src/Peer.js"
import * as ServerRegistry from "../src/ServerRegistry.js"
import type * as ServerSpec from "../src/ServerSpec.js"
import { Transport } from "../src/Transport.js"
import { stateOf, until } from "./support/events.js"
import { Platform } from "./support/platform.js"

const isModern = (request: JsonRpc.Request) =>
  typeof request.params?._meta === "object" && request.params._meta !== null &&
  "io.modelcontextprotocol/protocolVersion" in request.params._meta

// A server that discovers as 2026-07-28 but cannot list in it (the error a broken body
// becomes), and serves 2025-11-25 well; `methods` notes what it was asked.
const bending = (name: string, methods: Array<string>, extra: Partial<ServerSpec.ServerSpec> = {}) => ({
  name,
  transport: {
    type: "custom" as const,
    key: "bending",
    connect: Effect.gen(function*() {
      const [client, end] = yield* Memory.makePair({ server: name, client: "fleet" })
      const note = (request: JsonRpc.Request) =>
        methods.push(`${request.method}${isModern(request) ? " (modern)" : ""}`)
      yield* Peer.make({
        handlers: {
          "server/discover": (request) =>
            Effect.sync(() => note(request)).pipe(Effect.as({
              resultType: "complete",
              supportedVersions: ["2026-07-28"],
              capabilities: { tools: {} },
              serverInfo: { name, version: "1" }
            })),
          initialize: (request) =>
            Effect.sync(() => note(request)).pipe(Effect.as({
              protocolVersion: "2025-11-25",
              capabilities: { tools: {} },
              serverInfo: { name, version: "1" }
            })),
          "tools/list": (request) =>
            Effect.suspend(() => {
              note(request)
              return isModern(request)
                ? Effect.fail(
                  new Peer.HandlerError({
                    code: JsonRpc.ErrorCode.InvalidRequest,
                    message: "several objects in one body"
                  })
                )
                : Effect.succeed({ tools: [{ name: "echo", inputSchema: { type: "object" } }] })
            })
        }
      }).pipe(Effect.provideService(Transport, end))
      return client
    })
  },
  ...extra
})

const fleetOf = (servers: ReadonlyArray<ServerSpec.ServerSpec>) =>
  Effect.gen(function*() {
    const fleet = yield* ServerRegistry.make({}).pipe(Effect.provide(Platform))
    yield* fleet.reconcile(servers)
    yield* fleet.awaitReady({ servers: servers.map((s) => s.name), timeout: "5 seconds" })
    return fleet
  })

describe("ServerRegistry: falling back from 2026-07-28", () => {
  it.scopedLive("falls back to 2025-11-25 once, logged, when the 2026-07-28 listing fails for protocol reasons", () =>
    Effect.gen(function*() {
      const methods: Array<string> = []
      const logs: Array<string> = []
      const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message))))
      const fleet = yield* fleetOf([bending("bent", methods)]).pipe(Effect.provide(capture))
      const [status] = yield* fleet.status
      expect(status).toMatchObject({ state: { _tag: "Ready" }, protocolVersion: "2025-11-25" })
      expect(methods).toEqual(["server/discover (modern)", "tools/list (modern)", "initialize", "tools/list"])
      expect(logs.filter((line) => line.includes("falling back"))).toEqual([
        "server 'bent': its 2026-07-28 exchanges failed while connecting (server 'bent' answered tools/list " +
        "with error -32600: several objects in one body); falling back to 2025-11-25 from now on"
      ])
      // Later connections speak it from the start.
      methods.length = 0
      const events = yield* fleet.subscribe
      yield* fleet.restart("bent")
      yield* until(events, stateOf("bent", "Ready"))
      expect(methods).toEqual(["initialize", "tools/list"])
    }))

  it.scopedLive("speaks the revision a server is configured with, without probing", () =>
    Effect.gen(function*() {
      const methods: Array<string> = []
      const fleet = yield* fleetOf([bending("pinned", methods, { protocolVersion: "2025-06-18" })])
      expect(methods).toEqual(["initialize", "tools/list"])
      expect((yield* fleet.status)[0]!.state._tag).toBe("Ready")
    }))
})
