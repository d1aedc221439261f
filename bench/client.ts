/**
 * The mcp-fleet benchmark client: `McpClient` over the `Stdio` transport, or over the
 * `StreamableHttp` transport (with `HttpClientUndici` as the HttpClient) when given `--url`.
 *
 *   BENCH_STDIO_SERVER='["node","bench/fixtures/echo-server.mjs"]' \
 *     npm run -s bench:client -- --calls N --concurrency C [--payload BYTES]
 *   npm run -s bench:client -- --url http://127.0.0.1:PORT/ --calls N --concurrency C [--payload BYTES]
 *
 * `--protocol-version V` forces a revision (e.g. 2025-11-25 against a server that also
 * speaks 2026-07-28); by default the client picks its own.
 *
 * With `OTEL_EXPORTER_OTLP_ENDPOINT` set, it exports its spans and metrics as the CLI does
 * (`src/cli/Otel.ts`), loaded only then: `npm run bench:telemetry` compares.
 *
 * Prints one JSON result line (client "mcp-fleet"); see bench/README.md for the contract.
 *
 * @module
 */
// Subpath imports, as src does: a package index loads every module of the package (`effect`
// alone is ~9 MB more RSS; platform-node's also loads cluster/sql/http, ~0.4 s of startup).
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as McpClient from "../src/McpClient.js"
import type * as McpError from "../src/McpError.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Stdio from "../src/Stdio.js"
import type { Transport } from "../src/Transport.js"
import { now, parseArgs, Run, serverCommand } from "./clients/shared.js"

const args = parseArgs()
const run = new Run(args)

/** The transport: Streamable HTTP to `--url`, else a spawned `BENCH_STDIO_SERVER`. */
const transportLayer = async (): Promise<Layer.Layer<Transport, McpError.McpError>> => {
  if (args.url === undefined) {
    const server = serverCommand()
    // Stdio needs no platform service: no NodeContext (its FileSystem, Terminal, Worker, ...
    // would add ~2 MB resident for nothing).
    return Stdio.layer({ name: "bench", command: server.command, args: server.args })
  }
  // Loaded only for HTTP, so a stdio run neither pays for undici nor needs the HTTP transport.
  const [StreamableHttp, HttpClientUndici] = await Promise.all([
    import("../src/StreamableHttp.js"),
    import("../src/HttpClientUndici.js")
  ])
  return StreamableHttp.layer({ name: "bench", url: args.url }).pipe(Layer.provide(HttpClientUndici.layer))
}
const transport = await transportLayer()

/** The CLI's exporters when the OpenTelemetry environment names an endpoint, else nothing. */
const telemetry: Layer.Layer<never> = process.env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
  ? Layer.empty
  : (await import("../src/cli/Otel.js")).layer()

/** The text of the first content block of a tool result, if it has one. */
const firstText = (content: ReadonlyArray<unknown>): unknown => {
  const first = content[0]
  return typeof first === "object" && first !== null && "text" in first ? first.text : undefined
}

const program = Effect.gen(function*() {
  const client = yield* McpClient.make({
    clientInfo: { name: "bench", version: "0.0.0" },
    protocolVersion: args.protocolVersion as McpSchema.Revision | undefined
  })
  const connectMs = now() - connectStarted
  run.connected()

  // Keep C in flight as the other clients do: C workers, each making calls one after another,
  // first the warm-up calls (checked, not timed), then the timed ones. Each call is one
  // continuation that checks the echo, as `await` and a check are in the promise clients: the
  // harness's own steps are no part of the client's cost.
  const call = (i: number, check: (text: string, got: unknown) => void) => {
    const text = run.text(i)
    return Effect.flatMap(client.callTool(args.tool, { text }), (result) => {
      try {
        check(text, firstText(result.content))
        return Effect.void
      } catch (error) {
        return Effect.fail(error as Error)
      }
    })
  }
  const workers = (n: number, body: (i: number) => Effect.Effect<void, unknown>) => {
    let next = 0
    const worker = Effect.whileLoop({ while: () => next < n, body: () => body(next++), step: () => {} })
    return Effect.all(Array.from({ length: Math.max(1, Math.min(args.concurrency, n)) }, () => worker), {
      concurrency: "unbounded",
      discard: true
    })
  }
  yield* workers(args.warmup, (i) => call(i, (text, got) => run.check(i, text, got)))
  run.startTimed()
  const started = now()
  yield* workers(args.calls, (i) => {
    const startedAt = now()
    return call(i, (text, got) => run.done(i, startedAt, text, got))
  })
  const totalMs = now() - started
  run.stopTimed()
  return { connectMs, totalMs }
}).pipe(
  Effect.scoped,
  Effect.provide(transport),
  Effect.provide(telemetry),
  // Report only once the scope is closed and the server has ended.
  Effect.tap(({ connectMs, totalMs }) => Effect.sync(() => run.report("mcp-fleet", connectMs, totalMs))),
  // Errors go to stderr (stdout carries only the result line); runMain then exits 1.
  Effect.tapErrorCause((cause) => Effect.sync(() => process.stderr.write(`bench client: ${Cause.pretty(cause)}\n`)))
)

// connectMs covers the transport's layer build (the Stdio spawn; nothing much for HTTP)
// through McpClient.make (initialize).
const connectStarted = now()
NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
