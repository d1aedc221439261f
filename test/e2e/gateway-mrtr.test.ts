// The gateway between a 2026-07-28 client and a 2026-07-28 server: the conformance fixture
// (a real McpServer, `modern`) as a stdio child, which the fleet speaks 2026-07-28 to, behind
// the gateway over Streamable HTTP in this process as the fleet's host. Raw requests play the
// 2026 client, so what crosses the gateway is seen as sent: the fixture's input keys, its
// roots asked of the calling client, its log messages, and -32021 as HTTP 400. A stateful
// (2025-11-25) client of the same gateway still has the fixture told the roots it listed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bundled } from "../support/bundle.js"
import { eventually, httpGateway, tempConfig } from "../support/gateway.js"
import { hangGuard } from "../support/guard.js"

// The fixture bundled (support/bundle.ts): under tsx each start cost seconds of CPU.
const FIXTURE = await bundled("test/fixtures/conformance-stdio.ts")

type Message = {
  readonly id?: unknown
  readonly method?: string
  readonly params?: any
  readonly result?: any
  readonly error?: any
}

interface Answer {
  readonly status: number
  readonly sse: boolean
  /** Every message of the answer: notifications first, then the response. */
  readonly messages: ReadonlyArray<Message>
  readonly response: Message
}

let nextId = 1

// One 2026-07-28 request, with the client's `_meta`; its answer, JSON or SSE.
const request = async (
  url: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown>,
  logLevel?: string
): Promise<Answer> => {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "gateway-mrtr-test", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    ...(logLevel === undefined ? {} : { "io.modelcontextprotocol/logLevel": logLevel })
  }
  const answer = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(typeof params.name === "string" ? { "mcp-name": params.name } : {})
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params: { ...params, _meta: meta } })
  })
  const sse = answer.headers.get("content-type")?.includes("text/event-stream") === true
  const text = await answer.text()
  // An SSE stream's events that carry a message (its priming event carries none).
  const messages: Array<Message> = sse
    ? text.split("\n").map((line) => line.startsWith("data:") ? line.slice(5).trim() : "").filter((data) => data !== "")
      .map((data) => JSON.parse(data))
    : [JSON.parse(text)]
  return { status: answer.status, sse, messages, response: messages.find((m) => "id" in m && m.method === undefined)! }
}

const call = (
  url: string,
  name: string,
  capabilities: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  logLevel?: string
) => request(url, "tools/call", { name, arguments: {}, ...extra }, capabilities, logLevel)

const textOf = (answer: Answer): string => answer.response.result.content[0].text

describe("Gateway: a 2026-07-28 client and a 2026-07-28 server (MRTR through the gateway)", () => {
  let gateway: Awaited<ReturnType<typeof httpGateway>>
  let config: ReturnType<typeof tempConfig>

  beforeAll(async () => {
    config = tempConfig({
      fixture: { command: process.execPath, args: [FIXTURE], inheritEnv: true }
    })
    // On a busy machine the fixture may answer its first request after more than the 5 s in
    // which the probe takes a silent server for a legacy one.
    gateway = await httpGateway(config.file, { naming: "plain", modern: true }, {
      clientHost: true,
      client: { discoverTimeout: hangGuard(30_000) }
    })
  }, hangGuard(90_000))

  afterAll(async () => {
    await gateway?.close()
    config?.remove()
  })

  it("asks the client under the server's own keys, all of a round at once, and completes with the answers", async () => {
    const capabilities = { elicitation: {}, sampling: {}, roots: {} }
    const first = await call(gateway.url, "test_input_required_result_multiple_inputs", capabilities)
    expect(first.status).toBe(200)
    const asked = first.response.result
    expect(asked.resultType).toBe("input_required")
    expect(
      Object.fromEntries(Object.entries(asked.inputRequests).map(([key, input]: [string, any]) => [key, input.method]))
    )
      .toEqual({ user_name: "elicitation/create", greeting: "sampling/createMessage", client_roots: "roots/list" })
    const inputResponses = {
      user_name: { action: "accept", content: { name: "Alice" } },
      greeting: { role: "assistant", content: { type: "text", text: "Hello" }, model: "test" },
      client_roots: { roots: [{ uri: "file:///alice" }] }
    }
    const second = await call(gateway.url, "test_input_required_result_multiple_inputs", capabilities, {
      inputResponses,
      requestState: asked.requestState
    })
    expect(second.response.result.resultType).toBe("complete")
    expect(textOf(second)).toBe("All inputs received")
  })

  it("asks a client that declared roots for them in its call, not the fleet's roots", async () => {
    const first = await call(gateway.url, "test_input_required_result_list_roots", { roots: {} })
    expect(first.response.result.inputRequests).toEqual({ client_roots: { method: "roots/list", params: {} } })
    const second = await call(gateway.url, "test_input_required_result_list_roots", { roots: {} }, {
      inputResponses: { client_roots: { roots: [{ uri: "file:///mine" }, { uri: "file:///also-mine" }] } },
      requestState: first.response.result.requestState
    })
    expect(textOf(second)).toBe("file:///mine,file:///also-mine")
  })

  it("asks the server only what the client declared: -32021 for what it needs comes as HTTP 400", async () => {
    const refused = await call(gateway.url, "test_missing_capability", {})
    expect(refused.status).toBe(400)
    expect(refused.sse).toBe(false)
    expect(refused.response.error.code).toBe(-32021)
    expect(refused.response.error.data).toEqual({ requiredCapabilities: { sampling: {} } })
    // Sampling declared, elicitation not: the fixture asks only the first.
    const asked = await call(gateway.url, "test_input_required_result_capabilities", { sampling: {} })
    expect(Object.keys(asked.response.result.inputRequests)).toEqual(["s"])
  })

  it("sends the server's log messages of the call, at the client's level, before its answer; none without a level", async () => {
    const logged = await call(gateway.url, "test_tool_with_logging", {}, {}, "info")
    expect(logged.sse).toBe(true)
    const notes = logged.messages.filter((m) => m.method === "notifications/message")
    expect(notes.map((m) => m.params.data)).toEqual([
      "Tool execution started",
      "Tool processing data",
      "Tool execution completed"
    ])
    expect(logged.messages.at(-1)).toBe(logged.response)
    const quiet = await call(gateway.url, "test_tool_with_logging", {}, {}, "error")
    expect(quiet.messages.filter((m) => m.method === "notifications/message")).toEqual([])
    const unasked = await call(gateway.url, "test_tool_with_logging", {})
    expect(unasked.messages.filter((m) => m.method === "notifications/message")).toEqual([])
    expect(textOf(unasked)).toBe("Tool with logging executed successfully")
  })

  it("gives the server a stateful client's roots from what it listed, without asking it in the call", async () => {
    const client = new Client({ name: "gateway-mrtr-stateful", version: "1" }, { capabilities: { roots: {} } })
    let listed = 0
    client.setRequestHandler(ListRootsRequestSchema, () => {
      listed++
      return { roots: [{ uri: "file:///stateful" }] }
    })
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)))
    try {
      await eventually(async () => listed, (n) => n > 0)
      const result = await client.callTool({ name: "test_input_required_result_list_roots", arguments: {} })
      expect((result.content as Array<{ text: string }>)[0]!.text).toBe("file:///stateful")
      expect(listed).toBe(1)
    } finally {
      await client.close()
    }
  })
})
