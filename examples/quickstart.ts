/**
 * The quickstart: connects to the reference server `@modelcontextprotocol/server-everything`
 * over stdio, prints its tools, resources and prompts as tables, and calls two tools.
 *
 * Run it with `npm start`.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import * as path from "node:path"
import { McpClient, Stdio } from "../src/index.js"

const require = createRequire(import.meta.url)
const everything = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist/index.js"
)

const table = (title: string, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  const line = (row: ReadonlyArray<string>) =>
    row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd()
  console.log(`\n${title}\n${line(rows[0]!)}\n${widths.map((width) => "-".repeat(width)).join("  ")}`)
  for (const row of rows.slice(1)) console.log(line(row))
}

const clip = (text: string | undefined, max = 60) =>
  text === undefined ? "" : text.length > max ? `${text.slice(0, max - 1)}…` : text

const program = Effect.gen(function*() {
  const started = performance.now()
  const client = yield* McpClient.make({ clientInfo: { name: "mcp-fleet-quickstart", version: "0.1.0" } })
  console.log(
    `Connected to ${client.serverInfo.name} ${client.serverInfo.version} (protocol ${client.protocolVersion}) in ${
      Math.round(performance.now() - started)
    } ms`
  )

  const tools = yield* client.listTools()
  table(`Tools (${tools.length})`, [["name", "description"], ...tools.map((tool) => [tool.name, clip(tool.description)])])
  const resources = yield* client.listResources()
  table(`Resources (${resources.length})`, [["uri", "name"], ...resources.map((r) => [r.uri, r.name])])
  const prompts = yield* client.listPrompts()
  table(`Prompts (${prompts.length})`, [["name", "description"], ...prompts.map((p) => [p.name, clip(p.description)])])

  const sum = yield* client.callTool("get-sum", { a: 2, b: 40 })
  console.log(`\ncall get-sum {a: 2, b: 40} → ${sum.content.map((block) => "text" in block ? block.text : block.type).join(" ")}`)
  const weather = yield* client.callTool("get-structured-content", { location: "Chicago" })
  console.log(`call get-structured-content → ${JSON.stringify(weather.structuredContent)} (checked against its outputSchema)`)
}).pipe(
  Effect.scoped,
  Effect.provide(Stdio.layer({ name: "everything", command: process.execPath, args: [everything, "stdio"] })),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(program)
