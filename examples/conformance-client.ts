/**
 * The client the official MCP conformance suite drives (`npm run conformance`): it connects
 * to the server URL given as the last argument with `StreamableHttp` and `McpClient`, and
 * does what the scenario in `MCP_CONFORMANCE_SCENARIO` asks. Any scenario it does not know
 * gets the generic flow: connect, list the tools, close.
 *
 *   node --import tsx examples/conformance-client.ts http://localhost:3000/mcp
 *
 * A server that refuses with 401 or 403 is authorized with `OAuth` (the headless authorizer
 * follows the suite's redirects; `MCP_CONFORMANCE_CONTEXT` gives pre-registered credentials,
 * a workload's JWT, or the enterprise IdP and its ID token), and connected again; a DPoP-bound
 * token goes to the transport as its per-request `auth`.
 *
 * It exits 0 when the flow succeeded, 1 (with the error on stderr) when it did not.
 *
 * @module
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type * as HttpClient from "@effect/platform/HttpClient"
import { Effect, Logger, LogLevel, Option, Redacted } from "effect"
import * as Host from "../src/Host.js"
import * as HttpClientUndici from "../src/HttpClientUndici.js"
import * as McpClient from "../src/McpClient.js"
import * as McpError from "../src/McpError.js"
import * as OAuth from "../src/OAuth.js"
import * as StreamableHttp from "../src/StreamableHttp.js"
import { Transport } from "../src/Transport.js"

const url = process.argv.at(-1)!
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""

// A user who accepts every form without typing anything: the Host fills in the schema's
// defaults (SEP-1034) and validates the form before it is sent.
const elicitation = Host.layerElicitation({
  elicit: () => Effect.succeed({ action: "accept", content: {} })
})

const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as Record<string, unknown>
const contextString = (key: string) => typeof context[key] === "string" ? context[key] as string : undefined

// Every tool listed, called with no arguments (what the server records is which were called).
const callEveryTool = (client: McpClient.McpClient) =>
  Effect.flatMap(client.listTools(), (tools) => Effect.forEach(tools, (tool) => client.callTool(tool.name, {})))

// Skills (SEP-2640): list them, and load the first as a host does once its model picks it:
// SKILL.md verified (size, digest, frontmatter) before its supporting files are read, each
// verified too. A skill that fails verification is refused, said on stderr, and nothing more
// of it is read: that refusal is the flow succeeding.
const loadFirstSkill = (client: McpClient.McpClient) =>
  Effect.gen(function*() {
    const [skill] = yield* client.listSkills()
    if (skill === undefined) return
    const loaded = yield* client.loadSkill(skill)
    if (loaded.files !== "dynamic") yield* Effect.forEach(loaded.files, (file) => client.readSkillFile(skill, file.uri))
  }).pipe(
    Effect.catchIf(
      (error): error is McpError.McpError => error instanceof McpError.McpError && error.reason._tag === "Validation",
      (error) => Effect.sync(() => console.error(`refused the skill: ${error.message}`))
    )
  )

const scenarios: Record<string, (client: McpClient.McpClient) => Effect.Effect<void, unknown>> = {
  // Listing opens no file: a skill's files are read only when it is loaded.
  "sep-2640-client-no-prefetch": (client) => Effect.asVoid(client.listSkills()),
  "sep-2640-client-verify-digest": loadFirstSkill,
  "sep-2640-client-verify-size": loadFirstSkill,
  "sep-2640-client-verify-frontmatter": loadFirstSkill,
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
  // 2026-07-28: every kind of request, so each one's Mcp-Method and Mcp-Name are seen.
  "http-standard-headers": (client) =>
    Effect.gen(function*() {
      yield* callEveryTool(client)
      const resources = yield* client.listResources()
      yield* Effect.forEach(resources, (resource) => client.readResource(resource.uri))
      const prompts = yield* client.listPrompts()
      yield* Effect.forEach(prompts, (prompt) => client.getPrompt(prompt.name))
    }),
  // 2026-07-28: the calls the scenario names, whose x-mcp-header arguments become headers.
  "http-custom-headers": (client) =>
    Effect.gen(function*() {
      yield* client.listTools()
      const calls = (context.toolCalls ?? []) as ReadonlyArray<{ name: string; arguments: Record<string, unknown> }>
      yield* Effect.forEach(calls, (call) => client.callTool(call.name, call.arguments))
    }),
  // 2026-07-28: tools with invalid x-mcp-header annotations are dropped, so never called.
  "http-invalid-tool-headers": callEveryTool,
  // MRTR (2026-07-28): the state echoed, none invented, a plain call alongside kept clean,
  // a result without resultType taken as complete.
  "sep-2322-client-request-state": (client) =>
    Effect.gen(function*() {
      yield* client.listTools()
      yield* Effect.all([client.callTool("test_mrtr_echo_state", {}), client.callTool("test_mrtr_unrelated", {})], {
        concurrency: "unbounded"
      })
      yield* client.callTool("test_mrtr_no_state", {})
      yield* client.callTool("test_mrtr_no_result_type", {})
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

// The authorization scenarios: list the tools, then call one (a step-up may come there).
const authorized = (client: McpClient.McpClient) =>
  Effect.gen(function*() {
    const tools = yield* client.listTools()
    if (tools.some((tool) => tool.name === "test-tool")) yield* client.callTool("test-tool", {})
  })

const secret = (key: string) => {
  const value = contextString(key)
  return value === undefined ? undefined : Redacted.make(value)
}

const oauthConfig: OAuth.Config = {
  clientId: contextString("client_id"),
  clientSecret: secret("client_secret"),
  privateKey: secret("private_key_pem"),
  signingAlgorithm: contextString("signing_algorithm"),
  assertion: secret("valid_jwt"),
  // Enterprise-managed authorization: the ID token a single sign-on gave, and the IdP.
  enterprise: contextString("idp_token_endpoint") === undefined || contextString("idp_id_token") === undefined
    ? undefined
    : {
      idpTokenEndpoint: contextString("idp_token_endpoint")!,
      idToken: secret("idp_id_token")!,
      idpClientId: contextString("idp_client_id")
    },
  // The suite's authorization servers take this URL as a client id without fetching it.
  clientMetadataUrl: "https://conformance-test.local/client-metadata.json"
}

// How many times a refused connection is authorized and tried again.
const MAX_ATTEMPTS = 5

// One connection with the current token, running the scenario.
const attempt = (auth: OAuth.ServerAuth) =>
  Effect.gen(function*() {
    const credentials = Option.getOrUndefined(yield* auth.credentials)
    // A bearer token is one header; a DPoP-bound one is made per request, with its proof.
    const headers = credentials === undefined || credentials.perRequest !== undefined
      ? {}
      : { authorization: Redacted.make(`Bearer ${Redacted.value(credentials.token)}`) }
    const transport = yield* StreamableHttp.make({
      name: scenario || "conformance",
      url,
      headers,
      auth: credentials?.perRequest
    })
    const client = yield* McpClient.make({
      clientInfo: { name: "mcp-fleet-conformance", version: "0.1.0" },
      requestTimeout: "20 seconds"
    }).pipe(Effect.provideService(Transport, transport))
    const flow = scenarios[scenario] ?? (scenario.startsWith("auth/") ? authorized : generic)
    yield* flow(client)
  }).pipe(Effect.scoped)

// Runs the scenario; a refusal is authorized and the scenario run again on a new connection.
const run = (auth: OAuth.ServerAuth, left: number): Effect.Effect<void, unknown, HttpClient.HttpClient> =>
  Effect.catchIf(
    attempt(auth),
    (error): error is McpError.McpError =>
      left > 1 && error instanceof McpError.McpError && error.needsAuth && error.reason._tag === "Http",
    (error) => {
      const reason = error.reason as McpError.HttpReason
      return Effect.zipRight(
        auth.recover({ status: reason.status, wwwAuthenticate: reason.wwwAuthenticate }),
        run(auth, left - 1)
      )
    }
  )

const program = Effect.gen(function*() {
  const auth = yield* OAuth.make({ server: scenario || "conformance", url, config: oauthConfig })
  yield* run(auth, MAX_ATTEMPTS)
}).pipe(
  Effect.provide(OAuth.layerMemoryStore),
  Effect.provide(OAuth.layerHeadless),
  Effect.provide([HttpClientUndici.layer, elicitation]),
  Logger.withMinimumLogLevel(LogLevel.Warning)
)

NodeRuntime.runMain(program)
