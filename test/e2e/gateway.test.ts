// The gateway end to end with the official SDK client, over stdio (`mcp-fleet serve --stdio`
// on a temp config file, a child process) and over Streamable HTTP (in this process), fronting
// two real servers: the slow fixture and server-everything.
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type CallToolResult, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CLI, cliEnv, removeTempDirs } from "../support/cli.js"
import { eventually, everythingServer, httpGateway, sdkClient, slowServer, tempConfig } from "../support/gateway.js"
import { hangGuard } from "../support/guard.js"
import { survivors, waitGone } from "../support/processes.js"

type Client = ReturnType<typeof sdkClient>

const textOf = (result: unknown): string => {
  const block = (result as CallToolResult).content[0]
  return block?.type === "text" ? block.text : JSON.stringify(block)
}

// Every tool name, following the pages.
const allTools = async (client: Client): Promise<Array<string>> => {
  const names: Array<string> = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    for (const tool of page.tools) names.push(tool.name)
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return names
}

// The flows both transports share: two servers listed and called, progress, cancellation,
// list_changed after a config edit.
const flows = (connect: () => Promise<{ client: Client; config: ReturnType<typeof tempConfig> }>) => {
  let client: Client
  let config: ReturnType<typeof tempConfig>
  beforeAll(async () => {
    ;({ client, config } = await connect())
  }, hangGuard(90_000))

  it("lists and calls the tools of both servers under qualified names", async () => {
    const names = await allTools(client)
    expect(names).toContain("mcp__slow__echo")
    expect(names).toContain("mcp__everything__echo")
    expect(names).toContain("mcp__everything__get-sum")
    expect(textOf(await client.callTool({ name: "mcp__slow__echo", arguments: { text: "hi" } }))).toBe("slow:hi")
    expect(textOf(await client.callTool({ name: "mcp__everything__echo", arguments: { message: "hey" } }))).toContain(
      "hey"
    )
    const sum = await client.callTool({ name: "mcp__everything__get-sum", arguments: { a: 2, b: 3 } })
    expect(textOf(sum)).toContain("5")
    const unknown = await client.callTool({ name: "mcp__slow__ecko", arguments: {} }).catch((error: Error) => error)
    expect(unknown).toBeInstanceOf(Error)
    expect(String((unknown as Error).message)).toContain("did you mean 'mcp__slow__echo'")
  }, hangGuard(60_000))

  it("forwards the progress of a routed call to the caller", async () => {
    const seen: Array<number> = []
    const result = await client.callTool({ name: "mcp__slow__slow", arguments: { steps: 3 } }, undefined, {
      onprogress: (progress) => void seen.push(progress.progress)
    })
    expect(textOf(result)).toBe("done after 3")
    expect(seen).toEqual([1, 2, 3])
  }, hangGuard(60_000))

  it("cancels the fronted call when the client cancels", async () => {
    const abort = new AbortController()
    let progressed!: () => void
    const firstProgress = new Promise<void>((resolve) => progressed = resolve)
    const call = client.callTool({ name: "mcp__slow__slow", arguments: {} }, undefined, {
      signal: abort.signal,
      onprogress: () => progressed()
    }).catch((error: Error) => error)
    await firstProgress
    abort.abort("enough")
    expect(await call).toBeInstanceOf(Error)
    // The fixture lists the cancellations it received: one, for the gateway's request.
    const cancelled = await eventually(
      async () =>
        JSON.parse(textOf(await client.callTool({ name: "mcp__slow__cancelled", arguments: {} }))) as Array<unknown>,
      (list) => list.length > 0
    )
    expect(cancelled).toHaveLength(1)
    expect(cancelled[0]).toMatchObject({ reason: expect.stringContaining("cancelled") })
  }, hangGuard(60_000))

  it("tells the client when the config adds a server", async () => {
    // Each notification makes the client list again, as a host would, until the new
    // server's tools are there.
    const listed = new Promise<Array<string>>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        const names = await allTools(client)
        if (names.includes("mcp__extra__echo")) resolve(names)
      })
    )
    config.write({ slow: slowServer("slow"), everything: everythingServer, extra: slowServer("extra") })
    expect(await listed).toContain("mcp__extra__slow")
    expect(textOf(await client.callTool({ name: "mcp__extra__echo", arguments: { text: "new" } }))).toBe("extra:new")
  }, hangGuard(60_000))
}

// Waits for the gateway and every server it started (all marked with `marker`) to end.
const expectAllGone = async (marker: string) => {
  const left = await Effect.runPromise(
    Effect.suspend(() => {
      const pids = survivors("MCP_FLEET_GATEWAY_TEST", marker).map((line) => Number(line.split(" ")[0]))
      return waitGone(pids, 10_000)
    })
  )
  expect(Object.values(left).filter((state) => state === "alive")).toEqual([])
}

describe("Gateway over stdio (SDK client)", () => {
  const marker = randomUUID()
  let transport: StdioClientTransport
  let client: Client
  let config: ReturnType<typeof tempConfig>

  flows(async () => {
    config = tempConfig({ slow: slowServer("slow"), everything: everythingServer })
    transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio", "--config", config.file],
      env: { ...process.env, ...cliEnv(), MCP_FLEET_GATEWAY_TEST: marker } as Record<string, string>,
      stderr: "pipe"
    })
    // Drained, so the gateway never blocks on a full pipe.
    transport.stderr?.on("data", () => {})
    client = sdkClient()
    await client.connect(transport)
    // The servers start in the background: wait until both have listed their tools.
    await eventually(
      () => allTools(client),
      (names) =>
        names.some((name) => name.startsWith("mcp__slow__")) &&
        names.some((name) => name.startsWith("mcp__everything__")),
      60_000
    )
    return { client, config }
  })

  afterAll(async () => {
    // The gateway and the three servers it runs (slow, everything, extra), at least.
    expect(survivors("MCP_FLEET_GATEWAY_TEST", marker).length).toBeGreaterThanOrEqual(4)
    await client?.close()
    // The gateway and every server it started end when the client hangs up.
    await expectAllGone(marker)
    config?.remove()
    removeTempDirs()
  }, hangGuard(30_000))
})

describe("Gateway over stdio with --naming plain (SDK client)", () => {
  const marker = randomUUID()
  let client: Client
  let config: ReturnType<typeof tempConfig>

  beforeAll(async () => {
    config = tempConfig({ slow: slowServer("slow") })
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio", "--naming", "plain", "--config", config.file],
      env: { ...process.env, ...cliEnv(), MCP_FLEET_GATEWAY_TEST: marker } as Record<string, string>,
      stderr: "pipe"
    })
    transport.stderr?.on("data", () => {})
    client = sdkClient()
    await client.connect(transport)
  }, hangGuard(60_000))

  afterAll(async () => {
    await client?.close()
    await expectAllGone(marker)
    config?.remove()
    removeTempDirs()
  }, hangGuard(30_000))

  it("lists the one server's tools under their own names and calls them by those names", async () => {
    const names = await eventually(() => allTools(client), (names) => names.includes("echo"), hangGuard(30_000))
    expect(names).not.toContain("mcp__slow__echo")
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "hi" } }))).toBe("slow:hi")
  }, hangGuard(60_000))
})

describe("Gateway over Streamable HTTP (SDK client)", () => {
  let gateway: Awaited<ReturnType<typeof httpGateway>>
  let client: Client
  let config: ReturnType<typeof tempConfig>

  flows(async () => {
    config = tempConfig({ slow: slowServer("slow"), everything: everythingServer })
    gateway = await httpGateway(config.file, { pageSize: 5 })
    client = sdkClient()
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)))
    return { client, config }
  })

  afterAll(async () => {
    await client?.close()
    const pids = await gateway.pids()
    await gateway?.close()
    const left = await Effect.runPromise(waitGone(pids, 10_000))
    expect(Object.values(left).filter((state) => state === "alive")).toEqual([])
    config?.remove()
  }, hangGuard(30_000))

  it("paginates with the configured page size", async () => {
    const first = await client.listTools()
    expect(first.tools).toHaveLength(5)
    expect(first.nextCursor).toBeTypeOf("string")
    const bad = await client.listTools({ cursor: "bogus" }).catch((error: Error) => error)
    expect(String(bad)).toContain("-32602")
  })

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(gateway.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(body)
    })
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
  }

  it("refuses a foreign Origin with 403 and accepts a localhost one", async () => {
    const foreign = await post(initialize, { origin: "http://evil.example.com" })
    expect(foreign.status).toBe(403)
    const local = await post(initialize, { origin: "http://localhost:3000" })
    expect(local.status).toBe(200)
    expect(local.headers.get("mcp-session-id")).toBeTypeOf("string")
  })

  it("sessions: 404 for an unknown one, 400 without one or with an unsupported revision, DELETE ends one", async () => {
    expect((await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": "nope" })).status).toBe(404)
    expect((await post({ jsonrpc: "2.0", id: 2, method: "tools/list" })).status).toBe(400)
    const started = await post(initialize)
    const session = started.headers.get("mcp-session-id")!
    expect(await started.json()).toMatchObject({
      id: 1,
      result: { protocolVersion: "2025-06-18", serverInfo: { name: "mcp-fleet" } }
    })
    const wrongVersion = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, {
      "mcp-session-id": session,
      "mcp-protocol-version": "1999-01-01"
    })
    expect(wrongVersion.status).toBe(400)
    const listed = await post({ jsonrpc: "2.0", id: 3, method: "tools/list" }, {
      "mcp-session-id": session,
      "mcp-protocol-version": "2025-06-18"
    })
    expect(listed.status).toBe(200)
    expect(((await listed.json()) as any).result.tools).toHaveLength(5)
    expect((await fetch(gateway.url, { method: "PUT" })).status).toBe(405)
    expect((await fetch(gateway.url, { method: "DELETE", headers: { "mcp-session-id": session } })).status).toBe(200)
    expect((await post({ jsonrpc: "2.0", id: 4, method: "tools/list" }, { "mcp-session-id": session })).status).toBe(
      404
    )
  })
})

describe("Gateway over Streamable HTTP with a bearer token", () => {
  let gateway: Awaited<ReturnType<typeof httpGateway>>
  let config: ReturnType<typeof tempConfig>

  beforeAll(async () => {
    config = tempConfig({ slow: slowServer("slow") })
    gateway = await httpGateway(config.file, { token: Redacted.make("s3cret-token") })
  }, hangGuard(60_000))

  afterAll(async () => {
    await gateway?.close()
    config?.remove()
  }, hangGuard(30_000))

  it("answers 401 with WWW-Authenticate without the token or with a wrong one, and serves with it", async () => {
    const missing = await fetch(gateway.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}"
    })
    expect(missing.status).toBe(401)
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/)
    const wrong = await fetch(gateway.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer nope" },
      body: "{}"
    })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get("www-authenticate")).toContain(`error="invalid_token"`)
    const client = sdkClient()
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url), {
        requestInit: { headers: { authorization: "Bearer s3cret-token" } }
      })
    )
    const tools = await client.listTools()
    expect(tools.tools.map((tool) => tool.name)).toContain("mcp__slow__echo")
    await client.close()
  }, hangGuard(60_000))
})
