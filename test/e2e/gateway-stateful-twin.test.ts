// The gateway in front of a server that speaks 2026-07-28 but cannot ask anything on that path
// (as the conformance suite's reference server): a stateful client that answers sampling gets
// the server's question, as it would from the server alone, through a stateful session the
// fleet opens beside the 2026-07-28 connection at the first such call (one for all such calls);
// a client that answers nothing goes on using the 2026-07-28 connection.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type CallToolResult, CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawn } from "../../src/testing/node.js"
import { texts } from "../../src/testing/Results.js"
import { httpGateway, tempConfig } from "../support/gateway.js"
import { hangGuard } from "../support/guard.js"

const SPLIT = fileURLToPath(new URL("../fixtures/split-era-server.mjs", import.meta.url))
const ASK = "mcp__split__ask_model"
const SESSIONS = "mcp__split__sessions"

const textOf = (result: unknown): string => texts(result as CallToolResult).join("\n")

const client = async (url: string, samples: boolean) => {
  const c = new Client({ name: "twin-test", version: "1.0.0" }, { capabilities: samples ? { sampling: {} } : {} })
  if (samples) {
    c.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: "assistant",
      content: { type: "text", text: "forty-two" },
      model: "test-model"
    }))
  }
  await c.connect(new StreamableHTTPClientTransport(new URL(url)))
  return c
}

describe("the gateway in front of a server whose 2026-07-28 path cannot ask", () => {
  const scope = Effect.runSync(Scope.make())
  let config: ReturnType<typeof tempConfig>
  let gateway: Awaited<ReturnType<typeof httpGateway>>
  const clients: Array<Client> = []

  beforeAll(async () => {
    const url = await Effect.runPromise(
      Effect.gen(function*() {
        const server = yield* spawn(SPLIT)
        return (yield* server.waitFor("stdout", /http:\S+/))[0]
      }).pipe(Scope.extend(scope))
    )
    config = tempConfig({ split: { type: "http", url } })
    gateway = await httpGateway(config.file, {}, { clientHost: true })
  }, hangGuard(60_000))

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()))
    await gateway?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    config?.remove()
  })

  it("asks a sampling client's model through one stateful session beside the 2026-07-28 connection", async () => {
    const plain = await client(gateway.url, false)
    clients.push(plain)
    expect(textOf(await plain.callTool({ name: SESSIONS, arguments: {} }))).toBe("0")

    const [first, second] = [await client(gateway.url, true), await client(gateway.url, true)]
    clients.push(first, second)
    const answers = await Promise.all([first, second, first].map((c) => c.callTool({ name: ASK, arguments: {} })))
    expect(answers.map(textOf)).toEqual(Array(3).fill("the model said: forty-two"))
    // The three calls, two of them concurrent first calls, shared one session.
    expect(textOf(await first.callTool({ name: SESSIONS, arguments: {} }))).toBe("1")
  }, hangGuard(60_000))

  it("keeps a client that answers nothing on the 2026-07-28 connection", async () => {
    const plain = await client(gateway.url, false)
    clients.push(plain)
    expect(textOf(await plain.callTool({ name: ASK, arguments: {} }))).toBe("sampling is not supported on this path")
  }, hangGuard(60_000))
})
