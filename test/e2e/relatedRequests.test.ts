// A stateful server's requests on a call's POST stream go to that call: our McpServer over
// Streamable HTTP on 127.0.0.1 (it sends a call's requests on the call's event stream, and a
// request made outside any call on the standing GET stream), reached by our McpClient. A
// request the transport relates to a call with `onInput` is answered by that `onInput`; one
// on the GET stream by the connection's host services. The official SDK's server (v1),
// which sends any request's own requests on its POST's stream, has a resource read and a
// prompt get ask. Through the gateway (the fleet's host), two clients calling our server at
// once each answer their own call's elicitation.
import { describe, expect, it } from "@effect/vitest"
import { McpServer as SdkServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import * as Gateway from "../../src/Gateway.js"
import * as Host from "../../src/Host.js"
import * as HttpClientUndici from "../../src/HttpClientUndici.js"
import * as McpClient from "../../src/McpClient.js"
import type * as McpSchema from "../../src/McpSchema.js"
import * as McpServer from "../../src/McpServer.js"
import * as Memory from "../../src/Memory.js"
import * as NodeMcpServer from "../../src/NodeMcpServer.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import * as StreamableHttp from "../../src/StreamableHttp.js"
import { text, texts } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import { hangGuard } from "../support/guard.js"
import { Platform } from "../support/platform.js"

const nameForm = { type: "object" as const, properties: { name: { type: "string" as const } }, required: ["name"] }

const textOf = (result: McpSchema.CallToolResult): string => texts(result).join("")

const inputTool = (name: string): McpSchema.Tool => ({ name, inputSchema: { type: "object" } })

// The server: `ask` elicits in its call, once `together` calls of it have arrived (so they
// are all in flight at once); `aside` has its session ask outside any call (the GET stream).
const serve = (together: number) =>
  Effect.gen(function*() {
    const all = yield* Deferred.make<void>()
    let arrived = 0
    const server = yield* McpServer.make({
      serverInfo: { name: "related", version: "1" },
      // Stateful revisions only: the fleet speaks 2025-11-25 to it, not 2026-07-28's rounds.
      modern: false,
      handlers: (_client, session) =>
        Effect.succeed({
          tools: {
            list: () => Effect.succeed([inputTool("ask"), inputTool("aside")]),
            call: (tool, args, ctx) => {
              if (tool === "aside") {
                return session.request("elicitation/create", { message: "aside", requestedSchema: nameForm }).pipe(
                  Effect.map((answer) => text(`aside: ${String((answer.content as { name?: unknown }).name)}`)),
                  Effect.orDie
                )
              }
              const arrive = Effect.suspend(() =>
                ++arrived === together ? Deferred.succeed(all, undefined) : Effect.void
              )
              return arrive.pipe(
                Effect.zipRight(Deferred.await(all)),
                Effect.zipRight(ctx.elicit({ message: `for ${String(args.who)}`, requestedSchema: nameForm })),
                Effect.map((answer) => text(`${String(args.who)}: ${String(answer.content?.name)}`)),
                Effect.orDie
              )
            }
          }
        })
    })
    return yield* NodeMcpServer.serveHttp(server, { port: 0 })
  })

// Host elicitation that answers `name` and notes each message it was asked.
const elicitation = (name: string, asked: Array<string>) =>
  Host.layerElicitation({
    elicit: (request) =>
      Effect.sync(() => {
        asked.push(request.message)
        return { action: "accept" as const, content: { name } }
      })
  })

// Our client, stateful (2025-11-25), whose connection's elicitation answers "connection".
const connect = (url: string, asked: Array<string>) =>
  Effect.gen(function*() {
    const transport = yield* StreamableHttp.make({ name: "related", url })
    return yield* McpClient.make({ protocolVersion: "2025-11-25" }).pipe(
      Effect.provideService(Transport, transport),
      Effect.provide(elicitation("connection", asked))
    )
  })

// A call's `onInput` that answers `name` and notes each message it was asked.
const answering = (name: string, asked: Array<string>): NonNullable<McpClient.CallToolOptions["onInput"]> => (input) =>
  Effect.sync(() => {
    expect(input.method).toBe("elicitation/create")
    expect(input.key).toBeUndefined()
    asked.push(String(input.params.message))
    return { action: "accept", content: { name } }
  })

describe("a stateful Streamable HTTP server's requests on a call's stream", () => {
  it.scopedLive("go to that call's onInput, not the connection's handlers", () =>
    Effect.gen(function*() {
      const url = yield* serve(1)
      const connection: Array<string> = []
      const client = yield* connect(url, connection)
      const own: Array<string> = []
      const result = yield* client.callTool("ask", { who: "ada" }, { onInput: answering("Ada", own) })
      expect(textOf(result)).toBe("ada: Ada")
      expect(own).toEqual(["for ada"])
      // A call without onInput: the connection's handlers, as before.
      expect(textOf(yield* client.callTool("ask", { who: "bob" }))).toBe("bob: connection")
      expect(connection).toEqual(["for bob"])
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("two calls in flight at once each answer their own", () =>
    Effect.gen(function*() {
      const url = yield* serve(2)
      const connection: Array<string> = []
      const client = yield* connect(url, connection)
      const first: Array<string> = []
      const second: Array<string> = []
      const [a, b] = yield* Effect.all([
        client.callTool("ask", { who: "ada" }, { onInput: answering("Ada", first) }),
        client.callTool("ask", { who: "grace" }, { onInput: answering("Grace", second) })
      ], { concurrency: 2 })
      expect([textOf(a), textOf(b)]).toEqual(["ada: Ada", "grace: Grace"])
      expect(first).toEqual(["for ada"])
      expect(second).toEqual(["for grace"])
      expect(connection).toEqual([])
    }).pipe(Effect.provide(HttpClientUndici.layer)))

  it.scopedLive("a request on the standing GET stream relates to no call: the connection's handlers answer it", () =>
    Effect.gen(function*() {
      const url = yield* serve(1)
      const connection: Array<string> = []
      const client = yield* connect(url, connection)
      const own: Array<string> = []
      const result = yield* client.callTool("aside", {}, { onInput: answering("Ada", own) })
      expect(textOf(result)).toBe("aside: connection")
      expect(connection).toEqual(["aside"])
      expect(own).toEqual([])
    }).pipe(Effect.provide(HttpClientUndici.layer)))
})

// The official SDK's server on 127.0.0.1, one session: a resource whose read, and a prompt
// whose get, ask for a name (through the handler's `sendRequest`: on the request's stream).
const sdkServer = Effect.acquireRelease(
  Effect.promise(async () => {
    const server = new SdkServer({ name: "sdk-related", version: "1" })
    const ask = async (message: string, sendRequest: (request: any, schema: any) => Promise<any>) => {
      const answer = await sendRequest(
        { method: "elicitation/create", params: { message, requestedSchema: nameForm } },
        ElicitResultSchema
      )
      return String(answer.content?.name)
    }
    server.registerResource("named", "test://named", {}, async (uri, extra) => ({
      contents: [{ uri: uri.href, text: await ask("read", extra.sendRequest) }]
    }))
    server.registerPrompt("named", {}, async (extra) => ({
      messages: [{ role: "user", content: { type: "text", text: await ask("prompt", extra.sendRequest) } }]
    }))
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() })
    await server.connect(transport)
    const listener = http.createServer((request, response) => void transport.handleRequest(request, response))
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
    const { port } = listener.address() as { readonly port: number }
    return { server, listener, url: `http://127.0.0.1:${port}/mcp` }
  }),
  ({ listener, server }) =>
    Effect.promise(async () => {
      await server.close()
      listener.closeAllConnections()
      await new Promise<void>((resolve) => listener.close(() => resolve()))
    })
)

describe("the official SDK server's requests on a read's or a prompt's stream", () => {
  it.scopedLive("go to that read's or prompt's onInput", () =>
    Effect.gen(function*() {
      const { url } = yield* sdkServer
      const connection: Array<string> = []
      const client = yield* connect(url, connection)
      const own: Array<string> = []
      const read = yield* client.readResource("test://named", { onInput: answering("Ada", own) })
      expect(read.contents).toEqual([{ uri: "test://named", text: "Ada" }])
      const prompt = yield* client.getPrompt("named", undefined, { onInput: answering("Grace", own) })
      expect(prompt.messages[0]?.content).toEqual({ type: "text", text: "Grace" })
      expect(own).toEqual(["read", "prompt"])
      // Without onInput: the connection's handlers.
      const plain = yield* client.readResource("test://named")
      expect(plain.contents).toEqual([{ uri: "test://named", text: "connection" }])
      expect(connection).toEqual(["read"])
    }).pipe(Effect.provide(HttpClientUndici.layer)))
})

describe("the gateway fronting a stateful Streamable HTTP server", () => {
  it.scopedLive(
    "two clients calling it at once each answer their own call's elicitation",
    () =>
      Effect.gen(function*() {
        const url = yield* serve(2)
        const fleet = Policy.layer({}).pipe(
          Layer.provideMerge(ServerRegistry.layer({ servers: [{ name: "app", transport: { type: "http", url } }] })),
          Layer.provideMerge(Gateway.layerHost()),
          Layer.provide(Platform)
        )
        const context = yield* Layer.build(fleet)
        yield* Effect.flatMap(
          ServerRegistry.ServerRegistry,
          (registry) => registry.awaitReady({ timeout: hangGuard(10_000) })
        )
          .pipe(Effect.provide(context))
        // A gateway client in a stateful session of its own, whose elicitation answers `name`.
        const gatewayClient = (name: string, asked: Array<string>) =>
          Effect.gen(function*() {
            const [client, end] = yield* Memory.makePair({ server: "gateway", client: name })
            yield* Gateway.serve({ naming: "plain" }).pipe(
              Effect.provideService(Transport, end),
              Effect.provide(context),
              Effect.forkScoped
            )
            return yield* McpClient.make({ protocolVersion: "2025-11-25" }).pipe(
              Effect.provideService(Transport, client),
              Effect.provide(elicitation(name, asked))
            )
          })
        const askedAda: Array<string> = []
        const askedGrace: Array<string> = []
        const ada = yield* gatewayClient("Ada", askedAda)
        const grace = yield* gatewayClient("Grace", askedGrace)
        // Both calls are in flight at the server before either asks (it waits for both).
        const [a, b] = yield* Effect.all([
          ada.callTool("ask", { who: "ada" }),
          grace.callTool("ask", { who: "grace" })
        ], { concurrency: 2 })
        expect([textOf(a), textOf(b)]).toEqual(["ada: Ada", "grace: Grace"])
        expect(askedAda).toEqual(["for ada"])
        expect(askedGrace).toEqual(["for grace"])
      }),
    20_000
  )
})
