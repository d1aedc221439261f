import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Host from "../../../src/Host.js"
import { InFlight } from "../../../src/internal/gateway/inFlight.js"
import * as Relay from "../../../src/internal/gateway/relay.js"
import type * as McpSchema from "../../../src/McpSchema.js"
import type * as McpServer from "../../../src/McpServer.js"
import * as Peer from "../../../src/Peer.js"

const context = (server: string, key?: string): Host.RequestContext => ({
  server,
  progress: () => Effect.void,
  ...(key === undefined ? {} : { key })
})

const sampling: McpSchema.CreateMessageRequestParams = {
  messages: [{ role: "user", content: { type: "text", text: "hi" } }],
  maxTokens: 10
}

// A client of `protocolVersion` whose requests (through its call `id`'s context) are recorded,
// with the key they were asked under, and answered with a fixed sampling result (or roots).
const client = (capabilities: McpSchema.ClientCapabilities | undefined, protocolVersion = "2025-11-25") => {
  const sent: Array<{ method: string; related: unknown; key?: string }> = []
  const relayClient: Relay.RelayClient = { capabilities, roots: [], inFlight: new InFlight() }
  const call = (id: string) =>
    ({
      request: { jsonrpc: "2.0", id, method: "tools/call" },
      client: { protocolVersion, capabilities: capabilities ?? {} },
      requestClient: (method: string, _params: unknown, options?: McpServer.RequestClientOptions) =>
        Effect.sync(() => {
          sent.push({ method, related: id, ...(options?.key === undefined ? {} : { key: options.key }) })
          return method === "roots/list"
            ? { roots: [{ uri: `file:///${id}` }] }
            : { role: "assistant", content: { type: "text", text: "ok" }, model: "m" }
        })
    }) as unknown as McpServer.RequestContext
  return { relayClient, sent, call }
}

// Runs `effect` while `clients` each have call `id` in flight at `server`.
const during = <A, E>(
  server: string,
  clients: ReadonlyArray<ReturnType<typeof client>>,
  effect: Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const release = yield* Deferred.make<void>()
    const started = yield* Effect.forEach(clients, (c, i) =>
      Effect.gen(function*() {
        const running = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(
          c.relayClient.inFlight.track(
            server,
            c.call(`call-${i}`),
            Effect.zipRight(Deferred.succeed(running, undefined), Deferred.await(release))
          )
        )
        yield* Deferred.await(running)
        return fiber
      }))
    const result = yield* Effect.exit(effect)
    yield* Deferred.succeed(release, undefined)
    yield* Effect.forEach(started, Fiber.join)
    return result
  })

const refusal = (exit: { _tag: string }) => {
  expect(exit._tag).toBe("Failure")
  const error = (exit as unknown as { cause: { error: Peer.HandlerError } }).cause.error
  expect(error).toBeInstanceOf(Peer.HandlerError)
  expect(error.code).toBe(-1)
  return error.message
}

describe("gateway relay", () => {
  it.scoped("a server's request goes to the one client with a call in flight there, as part of that call", () =>
    Effect.gen(function*() {
      const relay = yield* Relay.make([])
      const capable = client({ sampling: {} })
      const other = client({ sampling: {} })
      yield* Relay.register(relay, capable.relayClient)
      yield* Relay.register(relay, other.relayClient)
      const services = Relay.services(relay)
      const exit = yield* during("alpha", [capable], services.sampling.createMessage(sampling, context("alpha")))
      expect(exit._tag).toBe("Success")
      expect(capable.sent).toEqual([{ method: "sampling/createMessage", related: "call-0" }])
      expect(other.sent).toEqual([])
    }))

  it.scoped("refused: no call in flight, calls of several clients, or a client that did not declare it", () =>
    Effect.gen(function*() {
      const relay = yield* Relay.make([])
      const a = client({ sampling: {}, elicitation: {} })
      const b = client({ sampling: {} })
      const plain = client({})
      for (const c of [a, b, plain]) yield* Relay.register(relay, c.relayClient)
      const services = Relay.services(relay)
      const sample = services.sampling.createMessage(sampling, context("alpha"))
      expect(refusal(yield* Effect.exit(sample))).toContain("no gateway client has a call in flight at 'alpha'")
      expect(refusal(yield* during("alpha", [a, b], sample))).toContain("several gateway clients")
      expect(refusal(yield* during("alpha", [plain], sample))).toContain("did not declare sampling")
      const withTools = services.sampling.createMessage({ ...sampling, tools: [] }, context("alpha"))
      expect(refusal(yield* during("alpha", [a], withTools))).toContain("did not declare sampling with tools")
      const url = services.elicitation.elicit(
        { mode: "url", message: "go", url: "https://example.com", elicitationId: "e1" },
        context("alpha")
      )
      expect(refusal(yield* during("alpha", [a], url))).toContain("did not declare URL elicitation")
      expect([...a.sent, ...b.sent, ...plain.sent]).toEqual([])
    }))

  it.scoped("roots: the union of the clients', the fallback while none has any", () =>
    Effect.gen(function*() {
      const fallback = [{ uri: "file:///config" }]
      const relay = yield* Relay.make(fallback)
      const a = client({ roots: {} })
      const b = client({ roots: {} })
      yield* Relay.register(relay, a.relayClient)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Relay.register(relay, b.relayClient)
        yield* Relay.setRoots(relay, a.relayClient, [{ uri: "file:///a" }, { uri: "file:///shared" }])
        yield* Relay.setRoots(relay, b.relayClient, [{ uri: "file:///shared" }, { uri: "file:///b" }])
        expect((yield* SubscriptionRef.get(relay.roots)).map((root) => root.uri)).toEqual([
          "file:///a",
          "file:///shared",
          "file:///b"
        ])
      }))
      // b went away: its roots with it.
      expect((yield* SubscriptionRef.get(relay.roots)).map((root) => root.uri)).toEqual(["file:///a", "file:///shared"])
      yield* Relay.setRoots(relay, a.relayClient, [])
      expect(yield* SubscriptionRef.get(relay.roots)).toEqual(fallback)
    }))

  it.scoped("a 2026-07-28 caller: asked under the server's key, told -32021 of what it lacks", () =>
    Effect.gen(function*() {
      const relay = yield* Relay.make([])
      const modern = client({ sampling: {} }, "2026-07-28")
      yield* Relay.register(relay, modern.relayClient)
      const services = Relay.services(relay)
      const sample = services.sampling.createMessage(sampling, context("alpha", "greeting"))
      expect((yield* during("alpha", [modern], sample))._tag).toBe("Success")
      expect(modern.sent).toEqual([{ method: "sampling/createMessage", related: "call-0", key: "greeting" }])
      const elicit = services.elicitation.elicit(
        { message: "Name?", requestedSchema: { type: "object", properties: {} } },
        context("alpha", "user_name")
      )
      const exit = yield* during("alpha", [modern], elicit)
      expect(exit._tag).toBe("Failure")
      const error = (exit as unknown as { cause: { error: Peer.HandlerError } }).cause.error
      expect(error.code).toBe(-32021)
      expect(error.data).toEqual({ requiredCapabilities: { elicitation: { form: {} } } })
    }))

  it.scoped("roots/list: a 2026-07-28 caller that declared roots is asked in its call; others get the fleet's", () =>
    Effect.gen(function*() {
      const relay = yield* Relay.make([{ uri: "file:///config" }])
      const modern = client({ roots: {} }, "2026-07-28")
      const undeclared = client({}, "2026-07-28")
      const stateful = client({ roots: {} })
      for (const c of [modern, undeclared, stateful]) yield* Relay.register(relay, c.relayClient)
      const list = Relay.services(relay).roots.list!
      expect(yield* during("alpha", [modern], list(context("alpha", "client_roots")))).toMatchObject({
        value: [{ uri: "file:///call-0" }]
      })
      expect(modern.sent).toEqual([{ method: "roots/list", related: "call-0", key: "client_roots" }])
      for (const c of [undeclared, stateful]) {
        expect(yield* during("alpha", [c], list(context("alpha")))).toMatchObject({
          value: [{ uri: "file:///config" }]
        })
        expect(c.sent).toEqual([])
      }
      // No call in flight: the fleet's roots.
      expect(yield* list(context("alpha"))).toEqual([{ uri: "file:///config" }])
    }))
})
