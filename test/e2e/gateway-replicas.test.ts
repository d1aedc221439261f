// Two gateways (`mcp-fleet serve --http`, real processes) fronting the same fleet (the
// conformance fixture on stdio, spoken to in 2026-07-28), sharing one state key (`--state-secret-env`), behind a
// round-robin proxy written here: each request goes to the other replica. 2026-07-28 clients
// need no sticky session — our McpClient lists and calls, and the official SDK v2 client
// answers an elicitation whose retry (with `requestState`) lands on the other replica. A
// stateful (2025-11-25) client through the same proxy fails clearly: its session is one
// replica's.
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as McpClient from "../../src/McpClient.js"
import * as NodeFleet from "../../src/NodeFleet.js"
import * as StreamableHttp from "../../src/StreamableHttp.js"
import { firstText } from "../../src/testing/Results.js"
import { Transport } from "../../src/Transport.js"
import { bundled } from "../support/bundle.js"
import { config, leavesNothing, marked, type Running, start, tempDir } from "../support/cli.js"
import { hangGuard } from "../support/guard.js"

const mark = `replicas-${process.pid}-${Date.now()}`
const SECRET_VAR = "MCP_FLEET_TEST_STATE_SECRET"
// The fixture answers 2026-07-28 requests: its elicitation is an input request of its own,
// which the gateway passes, as an input round under the same key, to the 2026-07-28 client.
// Bundled (support/bundle.ts): under tsx each start cost seconds of CPU.
const FIXTURE = await bundled("test/fixtures/conformance-stdio.ts")

/** One request the proxy passed on: to which replica, and what it carried. */
interface Forwarded {
  readonly replica: number
  readonly httpMethod: string
  readonly method: string | undefined
  readonly name: string | undefined
  readonly requestState: boolean
}

// The JSON-RPC request of a POST body, if it is one.
const summary = (body: string): Pick<Forwarded, "method" | "name" | "requestState"> => {
  try {
    const message = JSON.parse(body)
    return {
      method: message.method,
      name: message.params?.name,
      requestState: typeof message.params?.requestState === "string"
    }
  } catch {
    return { method: undefined, name: undefined, requestState: false }
  }
}

// A round-robin load balancer: every request to the next replica in turn, no affinity, the
// answer streamed back as it comes (SSE included).
const roundRobin = async (upstreams: ReadonlyArray<URL>) => {
  const forwarded: Array<Forwarded> = []
  let next = 0
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = Buffer.concat(chunks)
      const replica = next++ % upstreams.length
      const target = upstreams[replica]!
      forwarded.push({ replica, httpMethod: req.method!, ...summary(body.toString("utf8")) })
      const upstream = http.request(
        { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode!, answer.headers)
          answer.pipe(res)
        }
      )
      upstream.on("error", (error) => res.destroy(error))
      // A client that hangs up ends the upstream request too (an open SSE stream).
      res.on("close", () => upstream.destroy())
      upstream.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    forwarded,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const dir = tempDir({
  ".mcp.json": config({
    fixture: marked({ command: process.execPath, args: [FIXTURE] }, mark)
  })
})

const replicas: Array<Running> = []
let proxy: Awaited<ReturnType<typeof roundRobin>>

beforeAll(async () => {
  for (let i = 0; i < 2; i++) {
    replicas.push(start(
      [
        "serve",
        "--http",
        "0",
        "--json",
        "--modern",
        "--naming",
        "plain",
        "--settle",
        "60s",
        "--state-secret-env",
        SECRET_VAR
      ],
      { cwd: dir, mark, env: { [SECRET_VAR]: "one key for every replica" } }
    ))
  }
  const urls = await Promise.all(
    replicas.map(async (replica) =>
      new URL(JSON.parse(await replica.line((line) => line.includes("\"url\""), "the URL")).url)
    )
  )
  proxy = await roundRobin(urls)
}, hangGuard(60_000))

afterAll(async () => {
  await proxy?.close()
  const codes = await Promise.all(replicas.map((replica) => replica.stop()))
  expect(codes).toEqual(replicas.map(() => 0))
  leavesNothing(mark)
})

describe("replicas of the gateway behind a round-robin proxy", () => {
  it("a 2026-07-28 client: discover, tools/list and tool calls, spread over both replicas", async () => {
    const before = proxy.forwarded.length
    const program = Effect.gen(function*() {
      const transport = yield* StreamableHttp.make({ name: "replicas", url: proxy.url.href })
      const client = yield* McpClient.make({
        clientInfo: { name: "replicas-test", version: "1.0.0" },
        protocolVersion: "2026-07-28"
      }).pipe(Effect.provideService(Transport, transport))
      expect(client.protocolVersion).toBe("2026-07-28")
      expect(client.serverInfo.name).toBe("mcp-fleet")
      const tools = yield* client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["test_simple_text", "test_elicitation"]))
      for (let i = 0; i < 4; i++) {
        expect(firstText(yield* client.callTool("test_simple_text", {}))).toBe(
          "This is a simple text response for testing."
        )
      }
    })
    await Effect.runPromise(
      program.pipe(Effect.scoped, Effect.provide(NodeFleet.layer))
    )
    const served = proxy.forwarded.slice(before)
    expect(served.map((request) => request.method)).toEqual(
      expect.arrayContaining(["server/discover", "tools/list", "tools/call"])
    )
    const calls = served.filter((request) => request.method === "tools/call")
    expect(calls).toHaveLength(4)
    // No affinity: each replica answered some of the calls.
    expect(new Set(calls.map((call) => call.replica))).toEqual(new Set([0, 1]))
  })

  it("elicitation and sampling rounds (MRTR): each retry with requestState is answered by the other replica", async () => {
    const client = new ClientV2(
      { name: "replicas-sdk-v2", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } }
    )
    const asked: Array<string> = []
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(String(request.params.message))
      return { action: "accept", content: { username: "ada", email: "ada@example.com" } }
    })
    client.setRequestHandler("sampling/createMessage", async () => ({
      role: "assistant",
      content: { type: "text", text: "from the model" },
      model: "test-model"
    }))
    await client.connect(new TransportV2(proxy.url))
    try {
      expect(client.getProtocolEra()).toBe("modern")
      const before = proxy.forwarded.length
      const result = await client.callTool({ name: "test_elicitation", arguments: { message: "Who are you?" } })
      expect(firstText(result)).toBe(
        "Elicitation completed: action=accept, content={\"username\":\"ada\",\"email\":\"ada@example.com\"}"
      )
      expect(asked).toEqual(["Who are you?"])
      const rounds = proxy.forwarded.slice(before).filter((request) => request.name === "test_elicitation")
      expect(rounds.map((round) => round.requestState)).toEqual([false, true])
      expect(rounds[0]!.replica).not.toBe(rounds[1]!.replica)
      // Sampling the same way.
      const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: "Say something" } })
      expect(firstText(sampled)).toBe("LLM response: from the model")
      const samplingRounds = proxy.forwarded.filter((request) => request.name === "test_sampling")
      expect(samplingRounds.map((round) => round.requestState)).toEqual([false, true])
      expect(samplingRounds[0]!.replica).not.toBe(samplingRounds[1]!.replica)
    } finally {
      await client.close()
    }
  })

  it("a stateful (2025-11-25) client fails clearly: its session is one replica's, the other answers 404", async () => {
    const before = proxy.forwarded.length
    const client = new Client({ name: "replicas-stateful", version: "1.0.0" })
    const transport = new StreamableHTTPClientTransport(proxy.url)
    const outcome = await client.connect(transport).then(() => client.listTools()).then(
      () => "succeeded",
      (error: Error) => error.message
    )
    await client.close()
    // The session's next message went to the other replica, which knows no such session.
    expect(outcome).toContain("Session not found")
    const served = proxy.forwarded.slice(before)
    expect(served.slice(0, 2).map((request) => request.method)).toEqual(["initialize", "notifications/initialized"])
    expect(served[1]!.replica).not.toBe(served[0]!.replica)
  })
})
