// The gateway as the fleet's host, end to end with the official SDK client: server-everything's
// sampling and elicitation requests, made while serving a client's call, reach that client
// (over stdio, `mcp-fleet serve --stdio`; over Streamable HTTP, on the call's stream); a client
// without the capability gets the server refused; the roots are the clients'.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  type CallToolResult,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { texts } from "../../src/testing/Results.js"
import { CLI, cliEnv, removeTempDirs } from "../support/cli.js"
import { eventually, everythingServer, httpGateway, tempConfig } from "../support/gateway.js"
import { hangGuard } from "../support/guard.js"
import { procState, within } from "../support/processes.js"

const textOf = (result: unknown): string => texts(result as CallToolResult).join("\n")

const asked: Array<string> = []
// How the client answers the gateway's approval form for an `ask` tool.
let approval: "approve" | "refuse" | "decline" = "approve"

// A client that answers sampling and elicitation (and lists a root), or one that declares none.
const hostClient = (capable: boolean) => {
  const client = new Client(
    { name: "gateway-host-test", version: "1.0.0" },
    { capabilities: capable ? { sampling: {}, elicitation: {}, roots: { listChanged: true } } : {} }
  )
  if (capable) {
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      asked.push("sampling")
      expect(request.params.maxTokens).toBe(100)
      return { role: "assistant", content: { type: "text", text: "forty-two, said the client" }, model: "test-model" }
    })
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      const schema = (request.params as { requestedSchema?: { properties?: Record<string, unknown> } }).requestedSchema
      if (schema?.properties?.approve !== undefined) {
        asked.push(`approval: ${request.params.message}`)
        return approval === "decline" ? { action: "decline" } : {
          action: "accept",
          content: { approve: approval === "approve" }
        }
      }
      asked.push("elicitation")
      return { action: "accept", content: { name: "Grace Hopper", check: true } }
    })
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: "file:///client/root", name: "root" }] }))
  }
  return client
}

const toolsOf = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name)

const ASKED = "mcp__everything__get-sum"

const READY = ["mcp__everything__trigger-sampling-request", "mcp__everything__trigger-elicitation-request"]

// The flows both transports share, for a client that answers and one that does not.
const flows = (connect: (capable: boolean) => Promise<Client>) => {
  let capable: Client
  let plain: Client
  beforeAll(async () => {
    capable = await connect(true)
    plain = await connect(false)
    for (const client of [capable, plain]) {
      await eventually(() => toolsOf(client), (names) => READY.every((name) => names.includes(name)), hangGuard(60_000))
    }
  }, hangGuard(90_000))
  afterAll(async () => {
    await capable?.close()
    await plain?.close()
  })

  it("passes the server's sampling to the calling client, and its answer back", async () => {
    const result = await capable.callTool({
      name: "mcp__everything__trigger-sampling-request",
      arguments: { prompt: "the answer?" }
    })
    expect(textOf(result)).toContain("forty-two, said the client")
    expect(asked).toContain("sampling")
  }, hangGuard(30_000))

  it("passes the server's elicitation to the calling client, and its answer back", async () => {
    const result = await capable.callTool({ name: "mcp__everything__trigger-elicitation-request", arguments: {} })
    expect(textOf(result)).toContain("Grace Hopper")
    expect(asked).toContain("elicitation")
  }, hangGuard(30_000))

  it("refuses the server's request when the calling client did not declare the capability", async () => {
    const outcome = await plain.callTool({
      name: "mcp__everything__trigger-sampling-request",
      arguments: { prompt: "the answer?" }
    }).then(textOf, (error: Error) => error.message)
    expect(outcome).toContain("did not declare sampling")
  }, hangGuard(30_000))

  it("gives the servers the roots the clients declare", async () => {
    const roots = await eventually(
      async () => textOf(await capable.callTool({ name: "mcp__everything__get-roots-list", arguments: {} })),
      (text) => text.includes("file:///client/root"),
      20_000
    )
    expect(roots).toContain("file:///client/root")
  }, hangGuard(30_000))
}

// An `ask` rule on ASKED, answered by the calling client.
const askFlows = (connect: (capable: boolean) => Promise<Client>) =>
  describe("an `ask` rule", () => {
    let capable: Client
    let plain: Client
    beforeAll(async () => {
      capable = await connect(true)
      plain = await connect(false)
      await eventually(() => toolsOf(capable), (names) => names.includes(ASKED), hangGuard(60_000))
      await eventually(() => toolsOf(plain), (names) => READY.every((name) => names.includes(name)), hangGuard(60_000))
    }, hangGuard(90_000))
    afterAll(async () => {
      await capable?.close()
      await plain?.close()
    })

    it("lists the tool to a client that answers elicitation only", async () => {
      expect(await toolsOf(capable)).toContain(ASKED)
      expect(await toolsOf(plain)).not.toContain(ASKED)
    })

    it("asks the calling client, and runs the call it approves", async () => {
      approval = "approve"
      const result = await capable.callTool({ name: ASKED, arguments: { a: 2, b: 3 } })
      expect(result.isError).toBeFalsy()
      expect(textOf(result)).toContain("5")
      expect(asked.at(-1)).toContain("get-sum")
      expect(asked.at(-1)).toContain(`{"a":2,"b":3}`)
    }, hangGuard(30_000))

    it("denies the call the client refuses or declines", async () => {
      for (const answer of ["refuse", "decline"] as const) {
        approval = answer
        const result = await capable.callTool({ name: ASKED, arguments: { a: 2, b: 3 } })
        expect(result.isError).toBe(true)
        expect(textOf(result)).toContain(answer === "refuse" ? "did not approve" : "answered decline")
      }
    }, hangGuard(30_000))

    it("refuses the call of a client that cannot be asked", async () => {
      const outcome = await plain.callTool({ name: ASKED, arguments: { a: 2, b: 3 } }).then(
        (result) => `${result.isError}: ${textOf(result)}`,
        (error: Error) => error.message
      )
      expect(outcome).not.toContain("5")
      expect(outcome).toContain(ASKED)
    }, hangGuard(30_000))
  })

describe("Gateway as the fleet's host over stdio (SDK client)", () => {
  const config = tempConfig({ everything: everythingServer })
  fs.writeFileSync(
    config.file,
    JSON.stringify({ mcpServers: { everything: everythingServer }, policy: { ask: [ASKED] } })
  )
  // The gateways these tests start: they must be gone before their config dir is removed,
  // or one still stopping writes its pins into a folder it makes again.
  const pids: Array<number> = []
  const clients: Array<Client> = []
  const connect = async (capable: boolean) => {
    const transport = new StdioClientTransport({
      command: CLI[0],
      args: [...CLI.slice(1), "serve", "--stdio", "--config", config.file],
      env: { ...process.env, ...cliEnv() } as Record<string, string>,
      stderr: "pipe"
    })
    transport.stderr?.on("data", () => {})
    const client = hostClient(capable)
    await client.connect(transport)
    if (transport.pid !== null) pids.push(transport.pid)
    clients.push(client)
    return client
  }
  flows(connect)
  askFlows(connect)
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()))
    await within(() => pids.every((pid) => procState(pid) === "gone"), 5_000)
    config.remove()
    removeTempDirs()
  })
})

describe("Gateway as the fleet's host over Streamable HTTP (SDK client)", () => {
  const config = tempConfig({ everything: everythingServer })
  let gateway: Awaited<ReturnType<typeof httpGateway>> | undefined
  const connect = async (capable: boolean) => {
    gateway ??= await httpGateway(config.file, {}, { clientHost: true, policy: { ask: [ASKED] } })
    const client = hostClient(capable)
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)))
    return client
  }
  flows(connect)

  askFlows(connect)
  afterAll(async () => {
    await gateway?.close()
    config.remove()
  })
})
