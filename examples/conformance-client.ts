/**
 * The client the official MCP conformance suite drives (`npm run conformance`): it connects
 * to the server URL given as the last argument with `StreamableHttp` and `McpClient`, and
 * does what the scenario in `MCP_CONFORMANCE_SCENARIO` asks. Any scenario it does not know
 * gets the generic flow: connect, list the tools, close.
 *
 *   node --import tsx examples/conformance-client.ts http://localhost:3000/mcp
 *
 * It exits 0 when the flow succeeded, 1 (with the error on stderr) when it did not.
 *
 * @module
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Logger, LogLevel } from "effect"
import * as Host from "../src/Host.js"
import * as HttpClientUndici from "../src/HttpClientUndici.js"
import * as McpClient from "../src/McpClient.js"
import * as StreamableHttp from "../src/StreamableHttp.js"
import { Transport } from "../src/Transport.js"

const url = process.argv.at(-1)!
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""

// A user who accepts every form without typing anything: the Host fills in the schema's
// defaults (SEP-1034) and validates the form before it is sent.
const elicitation = Host.layerElicitation({
  elicit: () => Effect.succeed({ action: "accept", content: {} })
})

const scenarios: Record<string, (client: McpClient.McpClient) => Effect.Effect<void, unknown>> = {
  "tools_call": (client) =>
    Effect.gen(function*() {
      yield* client.listTools()
      yield* client.callTool("add_numbers", { a: 2, b: 3 })
    }),
  "json-schema-2020-12-preservation": (client) =>
    Effect.gen(function*() {
      const tools = yield* client.listTools()
      const focal = tools.find((tool) => tool.name === "json_schema_2020_12_tool")
      if (focal === undefined) return yield* Effect.fail(new Error("the server lists no json_schema_2020_12_tool"))
      // The schema exactly as received: unknown keywords are kept by McpSchema.
      yield* client.callTool("json_schema_echo", { schema: focal.inputSchema })
    }),
  // The answer's stream closes after a priming event; the answer comes on the resumed stream.
  "sse-retry": (client) =>
    Effect.gen(function*() {
      yield* client.listTools()
      yield* client.callTool("test_reconnection", {})
    }),
  "elicitation-sep1034-client-defaults": (client) =>
    Effect.gen(function*() {
      yield* client.listTools()
      yield* client.callTool("test_client_elicitation_defaults", {})
    })
}

// The generic flow: what was connected is enough; list the tools when there are any.
const generic = (client: McpClient.McpClient) =>
  client.capabilities.tools === undefined ? Effect.void : Effect.asVoid(client.listTools())

const program = Effect.gen(function*() {
  const transport = yield* StreamableHttp.make({ name: scenario || "conformance", url })
  const client = yield* McpClient.make({
    clientInfo: { name: "mcp-fleet-conformance", version: "0.1.0" },
    requestTimeout: "20 seconds"
  }).pipe(Effect.provideService(Transport, transport))
  yield* (scenarios[scenario] ?? generic)(client)
}).pipe(
  Effect.scoped,
  Effect.provide([HttpClientUndici.layer, elicitation]),
  Logger.withMinimumLogLevel(LogLevel.Warning)
)

NodeRuntime.runMain(program)
