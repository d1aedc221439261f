/**
 * The official SDK v2 client (`@modelcontextprotocol/client`: `Client` with
 * `StreamableHTTPClientTransport`), public API only, over HTTP (`--url`). With
 * `--protocol-version 2026-07-28` it is pinned to the stateless revision (no session); else
 * it speaks the stateful era (initialize, a session). Same contract as `bench/client.ts`;
 * prints client "sdk-v2".
 *
 * @module
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { driveTool, fail, now, parseArgs, Run } from "./shared.js"

const args = parseArgs()
const run = new Run(args)
if (args.url === undefined) fail("sdk-v2 speaks Streamable HTTP only: give --url")

const connectStarted = now()
const transport = new StreamableHTTPClientTransport(new URL(args.url))
const pinned = args.protocolVersion === "2026-07-28"
const client = new Client({ name: "bench", version: "0.0.0" }, {
  versionNegotiation: pinned ? { mode: { pin: "2026-07-28" } } : { mode: "legacy" }
})

try {
  await client.connect(transport)
  const connectMs = now() - connectStarted
  const totalMs = await driveTool(run, (params) => client.callTool(params))
  // A stateful session is ended (DELETE) as the other clients end theirs.
  if (!pinned) await transport.terminateSession()
  await client.close()
  run.report("sdk-v2", connectMs, totalMs)
} catch (e) {
  await client.close().catch(() => {})
  fail(e instanceof Error ? e.message : String(e))
}
