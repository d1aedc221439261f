import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import * as McpSchema from "../src/McpSchema.js"
import * as McpServer from "../src/McpServer.js"
import * as Peer from "../src/Peer.js"
import { Transport } from "../src/Transport.js"

const text = (value: string): McpSchema.CallToolResult => ({ content: [{ type: "text", text: value }] })

const echo = McpServer.tool({
  name: "echo",
  description: "Says it back",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text: said }) => Effect.succeed(text(said))
})

const notes = McpServer.resource({
  uri: "mem://notes",
  name: "notes",
  mimeType: "text/plain",
  read: () => Effect.succeed({ contents: [{ uri: "mem://notes", text: "remember" }] })
})

const greet = McpServer.prompt({
  name: "greet",
  arguments: [{ name: "who", required: true }],
  get: (args) =>
    Effect.succeed({ messages: [{ role: "user", content: { type: "text", text: `Hello, ${args.who}` } }] }),
  complete: { who: (value) => Effect.succeed(["ada", "alan", "grace"].filter((name) => name.startsWith(value))) }
})

const serverInfo = { name: "test-server", version: "1.0.0" }

const serve = (options: Partial<McpServer.ItemsOptions> = {}) =>
  Effect.gen(function*() {
    const server = yield* McpServer.fromItems({
      serverInfo,
      tools: [echo],
      resources: [notes],
      prompts: [greet],
      ...options
    })
    const { session, transport } = yield* McpServer.connectMemory(server, { name: "test-server" })
    return { server, session, transport }
  })

const connect = (options: Partial<McpServer.ItemsOptions> = {}, client?: McpClient.Options) =>
  Effect.gen(function*() {
    const served = yield* serve(options)
    const mcp = yield* McpClient.make(client).pipe(Effect.provideService(Transport, served.transport))
    return { ...served, client: mcp }
  })

const protocolError = <A>(exit: Exit.Exit<A, McpError.McpError>) => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`expected a failure, got ${String(exit)}`)
  const reason = exit.cause.error.reason
  if (reason._tag !== "Protocol") throw new Error(`expected a Protocol error, got ${reason._tag}`)
  return { code: reason.code, message: reason.message, data: reason.data }
}

describe("McpServer", () => {
  describe("lifecycle", () => {
    for (const revision of McpSchema.SUPPORTED_PROTOCOL_VERSIONS) {
      it.scoped(`initializes at ${revision}`, () =>
        Effect.gen(function*() {
          const { client, session } = yield* connect({ instructions: "be nice" }, { protocolVersion: revision })
          expect(client.protocolVersion).toBe(revision)
          expect(client.serverInfo).toEqual(serverInfo)
          expect(client.instructions).toBe("be nice")
          expect(session.client()).toMatchObject({ protocolVersion: revision, info: { name: "mcp-fleet" } })
          expect(client.capabilities).toMatchObject({
            tools: { listChanged: true },
            resources: { subscribe: true, listChanged: true },
            prompts: { listChanged: true },
            logging: {}
          })
          // What the revision does not know is not declared.
          expect(client.capabilities.completions !== undefined).toBe(revision >= "2025-03-26")
        }))
    }

    it.scoped("answers an unknown revision with the latest", () =>
      Effect.gen(function*() {
        const { transport } = yield* serve()
        const peer = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
        const result = yield* peer.request("initialize", {
          protocolVersion: "1999-01-01",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" }
        })
        expect(result.protocolVersion).toBe(McpSchema.LATEST_PROTOCOL_VERSION)
      }))

    it.scoped("answers ping before initialize and refuses anything else", () =>
      Effect.gen(function*() {
        const { transport } = yield* serve()
        const peer = yield* Peer.make().pipe(Effect.provideService(Transport, transport))
        expect(yield* peer.request("ping")).toEqual({})
        expect(protocolError(yield* Effect.exit(peer.request("tools/list"))).code).toBe(-32600)
        const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
        yield* peer.request("initialize", init)
        expect(protocolError(yield* Effect.exit(peer.request("initialize", init))).code).toBe(-32600)
        expect(protocolError(yield* Effect.exit(peer.request("nothing/here"))).code).toBe(-32601)
      }))
  })

  describe("tools, resources, prompts", () => {
    it.scoped("lists and calls tools, with Schema-decoded arguments", () =>
      Effect.gen(function*() {
        const { client } = yield* connect()
        const [tool] = yield* client.listTools()
        expect(tool).toMatchObject({
          name: "echo",
          description: "Says it back",
          inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
        })
        expect(yield* client.callTool("echo", { text: "hi" })).toEqual(text("hi"))
        const unknown = protocolError(yield* Effect.exit(client.callTool("nope")))
        expect(unknown).toMatchObject({ code: -32602, message: "Unknown tool: nope" })
      }))

    it.scoped("reads resources, and -32002 for an unknown one", () =>
      Effect.gen(function*() {
        const { client } = yield* connect()
        expect(yield* client.listResources()).toEqual([{ uri: "mem://notes", name: "notes", mimeType: "text/plain" }])
        expect(yield* client.readResource("mem://notes")).toEqual({
          contents: [{ uri: "mem://notes", text: "remember" }]
        })
        expect(protocolError(yield* Effect.exit(client.readResource("mem://none")))).toEqual({
          code: -32002,
          message: "Resource not found: mem://none",
          data: { uri: "mem://none" }
        })
      }))

    it.scoped("lists and gets prompts", () =>
      Effect.gen(function*() {
        const { client } = yield* connect()
        expect((yield* client.listPrompts()).map((prompt) => prompt.name)).toEqual(["greet"])
        const got = yield* client.getPrompt("greet", { who: "Ada" })
        expect(got.messages[0]!.content).toEqual({ type: "text", text: "Hello, Ada" })
        expect(protocolError(yield* Effect.exit(client.getPrompt("nope"))).code).toBe(-32602)
        yield* client.ping()
      }))
  })
})
