// Deferred tools in the gateway with the official SDK client over Streamable HTTP: one fleet
// (server-everything and server-memory, real processes) served by four gateways in this
// process — tool search on with an alwaysLoad glob, on by itself above a small threshold,
// below the default threshold, and off — and `serve --stdio --tool-search --always-load` of
// the CLI bundle.
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type CallToolResult, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Scope from "effect/Scope"
import { createRequire } from "node:module"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as NodeFleet from "../../src/NodeFleet.js"
import * as NodeGateway from "../../src/NodeGateway.js"
import * as Policy from "../../src/Policy.js"
import * as ServerRegistry from "../../src/ServerRegistry.js"
import { fixtureSpec, tempDir } from "../../src/testing/node.js"
import { CLI, cliEnv, leavesNothing, run, SERVERS, tempDir as cliTempDir } from "../support/cli.js"
import { EVERYTHING_STDIO } from "../support/everythingSuite.js"
import { eventually, sdkClient } from "../support/gateway.js"
import { hangGuard } from "../support/guard.js"

const require = createRequire(import.meta.url)
const MEMORY = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/server-memory/package.json")),
  "dist",
  "index.js"
)
const MARK = "MCP_FLEET_DEFERRED_TEST"
const mark = `${process.pid}-deferred`
process.env[MARK] = mark

type Client = ReturnType<typeof sdkClient>
type Found = { readonly name: string; readonly description: string; readonly inputSchema: Record<string, unknown> }

const textOf = (result: unknown): string => {
  const block = (result as CallToolResult).content[0]
  return block?.type === "text" ? block.text : JSON.stringify(block)
}

const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name)

const search = async (client: Client, query: string, limit?: number) => {
  const result = await client.callTool({
    name: "search_tools",
    arguments: { query, ...(limit === undefined ? {} : { limit }) }
  })
  const found = (result.structuredContent as { tools: Array<Found> }).tools
  // The text carries the same answer, for clients that give the model only the text.
  expect(JSON.parse(textOf(result))).toEqual({ tools: found })
  return found
}

const scope = Effect.runSync(Scope.make())
const urls: Record<string, string> = {}
const clients: Array<Client> = []

const connect = async (gateway: string): Promise<Client> => {
  const client = sdkClient()
  await client.connect(new StreamableHTTPClientTransport(new URL(urls[gateway]!)))
  clients.push(client)
  return client
}

beforeAll(async () => {
  const dir = await Effect.runPromise(Scope.extend(tempDir(), scope))
  const servers = [
    fixtureSpec("everything", EVERYTHING_STDIO, { args: ["stdio"], env: { [MARK]: mark } }),
    fixtureSpec("memory", MEMORY, { env: { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl"), [MARK]: mark } })
  ]
  const fleet = Policy.layer({ servers: { everything: { deny: ["get-env"] } } }).pipe(
    Layer.provideMerge(ServerRegistry.layer({ servers })),
    Layer.provide(NodeFleet.layer),
    Layer.merge(NodeContext.layer)
  )
  const context = await Effect.runPromise(
    Layer.buildWithScope(fleet, scope).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
  )
  await Effect.runPromise(
    Effect.gen(function*() {
      const registry = yield* ServerRegistry.ServerRegistry
      yield* registry.awaitReady({ servers: ["everything", "memory"], timeout: hangGuard(60_000) })
      const serve = (options: NodeGateway.HttpOptions) => NodeGateway.serveHttp(options)
      urls.on = yield* serve({ port: 0, toolSearch: true, alwaysLoad: ["mcp__memory__read_*"] })
      urls.small = yield* serve({ port: 0, toolSearchThreshold: 5 })
      urls.auto = yield* serve({ port: 0 })
      urls.off = yield* serve({ port: 0, toolSearch: false, toolSearchThreshold: 5 })
    }).pipe(
      Scope.extend(scope),
      Effect.provide(context),
      Logger.withMinimumLogLevel(LogLevel.Warning)
    )
  )
}, hangGuard(90_000))

afterAll(async () => {
  for (const client of clients) await client.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  leavesNothing(mark, MARK)
}, hangGuard(30_000))

describe("gateway deferred tools (toolSearch: true, alwaysLoad)", () => {
  it("lists the always-loaded tools and the tool search tools, not the others", async () => {
    const client = await connect("on")
    expect(await names(client)).toEqual(["mcp__memory__read_graph", "search_tools", "call_tool"])
  }, hangGuard(30_000))

  it(
    "search_tools gives names, one-line descriptions and inputSchemas; the hits join the session's list with list_changed",
    async () => {
      const client = await connect("on")
      let changed = 0
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changed++
      })
      expect(await names(client)).not.toContain("mcp__everything__get-sum")
      const found = await search(client, "add two numbers together", 3)
      expect(found.length).toBeGreaterThan(0)
      expect(found.length).toBeLessThanOrEqual(3)
      const sum = found.find((tool) => tool.name === "mcp__everything__get-sum")
      expect(sum).toBeDefined()
      expect(sum!.description).not.toContain("\n")
      expect(sum!.inputSchema).toMatchObject({ type: "object", properties: { a: {}, b: {} } })
      await eventually(async () => changed, (count) => count > 0)
      expect(changed).toBeGreaterThan(0)
      const listed = await names(client)
      expect(listed).toContain("mcp__everything__get-sum")
      expect(listed).toContain("search_tools")
      // Another session's list is its own.
      expect(await names(await connect("on"))).not.toContain("mcp__everything__get-sum")
    },
    hangGuard(30_000)
  )

  it("calls any tool by name without listing it, and through call_tool; the Policy still applies", async () => {
    const client = await connect("on")
    const sum = await client.callTool({ name: "mcp__everything__get-sum", arguments: { a: 2, b: 3 } })
    expect(textOf(sum)).toContain("5")
    const echo = await client.callTool({
      name: "call_tool",
      arguments: { name: "mcp__everything__echo", arguments: { message: "deferred" } }
    })
    expect(textOf(echo)).toContain("deferred")
    // Denied: not found by a search, refused by name and through call_tool.
    expect((await search(client, "environment variables get env", 20)).map((tool) => tool.name)).not.toContain(
      "mcp__everything__get-env"
    )
    await expect(client.callTool({ name: "mcp__everything__get-env", arguments: {} })).rejects.toThrow(
      /Unknown tool|not found|no tool/i
    )
    const viaCall = await client.callTool({ name: "call_tool", arguments: { name: "mcp__everything__get-env" } })
      .catch((error: Error) => ({ isError: true, content: [{ type: "text", text: error.message }] }))
    expect(viaCall.isError).toBe(true)
    const bad = await client.callTool({ name: "call_tool", arguments: {} })
    expect(bad.isError).toBe(true)
    expect(textOf(bad)).toContain("'name'")
    const noQuery = await client.callTool({ name: "search_tools", arguments: { limit: 2 } })
    expect(noQuery.isError).toBe(true)
    expect(textOf(noQuery)).toContain("'query'")
  }, hangGuard(30_000))
})

describe("gateway deferred tools: a 2026-07-28 client (the official SDK v2, no session)", () => {
  it("lists the same, searches, and calls the hits by name and through call_tool", async () => {
    const client = new ClientV2({ name: "deferred-v2", version: "1.0.0" }, {
      versionNegotiation: { mode: { pin: "2026-07-28" } }
    })
    await client.connect(new TransportV2(new URL(urls.on!)))
    try {
      expect(client.getProtocolEra()).toBe("modern")
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        "mcp__memory__read_graph",
        "search_tools",
        "call_tool"
      ])
      const result = await client.callTool({ name: "search_tools", arguments: { query: "add two numbers together" } })
      const found = (result.structuredContent as { tools: Array<Found> }).tools
      expect(found.map((tool) => tool.name)).toContain("mcp__everything__get-sum")
      // No session to keep the hits in: the list stays, and the hits are called by name.
      expect((await client.listTools()).tools).toHaveLength(3)
      expect(textOf(await client.callTool({ name: "mcp__everything__get-sum", arguments: { a: 1, b: 2 } }))).toContain(
        "3"
      )
      const echo = await client.callTool({
        name: "call_tool",
        arguments: { name: "mcp__everything__echo", arguments: { message: "modern" } }
      })
      expect(textOf(echo)).toContain("modern")
    } finally {
      await client.close()
    }
  }, hangGuard(30_000))
})

describe("gateway deferred tools: when", () => {
  it("is on by itself above the threshold, and off below it (the default 40)", async () => {
    const small = await names(await connect("small"))
    expect(small).toEqual(["search_tools", "call_tool"])
    const auto = await names(await connect("auto"))
    expect(auto.length).toBeGreaterThan(5)
    expect(auto.length).toBeLessThanOrEqual(40)
    expect(auto).toContain("mcp__everything__get-sum")
    expect(auto).not.toContain("search_tools")
  }, hangGuard(30_000))

  it("toolSearch: false lists every tool above any threshold, and serves no search_tools", async () => {
    const client = await connect("off")
    const listed = await names(client)
    expect(listed).toContain("mcp__everything__get-sum")
    expect(listed).toContain("mcp__memory__create_entities")
    expect(listed).not.toContain("search_tools")
    await expect(client.callTool({ name: "search_tools", arguments: { query: "sum" } })).rejects.toThrow()
  }, hangGuard(30_000))
})

describe("serve --stdio --tool-search --always-load", () => {
  let client: Client
  beforeAll(async () => {
    const dir = cliTempDir({
      "mcp.json": JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [SERVERS.everything, "stdio"], inheritEnv: true }
        }
      })
    })
    client = sdkClient()
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [
        ...CLI.slice(1),
        "serve",
        "--stdio",
        "--tool-search",
        "--always-load",
        "*echo",
        "--config",
        path.join(dir, "mcp.json")
      ],
      env: { ...process.env, ...cliEnv() } as Record<string, string>,
      stderr: "pipe"
    })
    transport.stderr?.on("data", () => {})
    await client.connect(transport)
    clients.push(client)
  }, hangGuard(60_000))

  it("lists the always-loaded tool and the tool search tools, and finds the others", async () => {
    // server-everything may become ready after the gateway's settle window on a busy machine:
    // its tools then join the list later (with list_changed), so wait for the always-loaded one.
    const listed = await eventually(() => names(client), (list) => list.includes("mcp__everything__echo"))
    expect(listed).toEqual(["mcp__everything__echo", "search_tools", "call_tool"])
    const found = await search(client, "sum of two numbers")
    expect(found.map((tool) => tool.name)).toContain("mcp__everything__get-sum")
  }, hangGuard(30_000))
})

describe("serve --tool-search --no-tool-search", () => {
  it("is refused as a usage error", async () => {
    const dir = cliTempDir({ "mcp.json": JSON.stringify({ mcpServers: {} }) })
    const result = await run(["serve", "--stdio", "--tool-search", "--no-tool-search", "--config", "mcp.json"], {
      cwd: dir,
      mark
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain("give --tool-search or --no-tool-search")
  }, hangGuard(30_000))
})
