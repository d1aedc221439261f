/**
 * The official `@modelcontextprotocol/sdk` client (`Client` + `StdioClientTransport`),
 * public API only. Same contract as `bench/client.ts`; prints client "sdk".
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { drive, fail, now, parseArgs, Run, serverCommand, TOOL } from "./shared.js"

const args = parseArgs()
const server = serverCommand()
const run = new Run(args)

const connectStarted = now()
// The SDK passes only a safe subset of env to the child by default; pass ours through.
const transport = new StdioClientTransport({
  command: server.command,
  args: server.args,
  env: process.env as Record<string, string>,
  stderr: "inherit"
})
const client = new Client({ name: "bench", version: "0.0.0" }, { capabilities: {} })

try {
  await client.connect(transport)
  const connectMs = now() - connectStarted

  const totalMs = await drive(run, async (text) => {
    const result = await client.callTool({ name: TOOL, arguments: { text } })
    const first = (result.content as Array<{ type: string; text?: string }> | undefined)?.[0]
    return first?.text
  })

  await client.close()
  run.report("sdk", connectMs, totalMs)
} catch (e) {
  await client.close().catch(() => {})
  fail(e instanceof Error ? e.message : String(e))
}
