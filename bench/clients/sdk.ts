/**
 * The official `@modelcontextprotocol/sdk` client (`Client` + `StdioClientTransport`, or
 * `StreamableHTTPClientTransport` with `--url`), public API only. Same contract as
 * `bench/client.ts`; prints client "sdk".
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { driveTool, fail, now, parseArgs, Run, serverCommand } from "./shared.js"

const args = parseArgs()
const run = new Run(args)

const stdioTransport = (): StdioClientTransport => {
  const server = serverCommand()
  // The SDK passes only a safe subset of env to the child by default; pass ours through.
  return new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: process.env as Record<string, string>,
    stderr: "inherit"
  })
}

const connectStarted = now()
// Over HTTP the SDK uses the global fetch (undici's global dispatcher, keep-alive).
const http = args.url === undefined ? undefined : new StreamableHTTPClientTransport(new URL(args.url))
const transport = http ?? stdioTransport()
const client = new Client({ name: "bench", version: "0.0.0" }, { capabilities: {} })

try {
  await client.connect(transport)
  const connectMs = now() - connectStarted

  const totalMs = await driveTool(run, (params) => client.callTool(params))

  // End the session (DELETE) as the other clients do; the SDK's close() alone does not.
  if (http !== undefined) await http.terminateSession()
  await client.close()
  run.report("sdk", connectMs, totalMs)
} catch (e) {
  await client.close().catch(() => {})
  fail(e instanceof Error ? e.message : String(e))
}
