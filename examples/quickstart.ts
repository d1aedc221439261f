/**
 * The quickstart: a fleet from `examples/fleet.json` — three real MCP servers from the npm
 * registry (everything, memory, filesystem on this folder) and one that is broken on
 * purpose. It shows the fleet's status live while the servers connect, the merged tool
 * catalog, a tool call on two servers, and a reconcile (one server removed, one added)
 * with the events it causes.
 *
 * Run it with `npm start`.
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Queue from "effect/Queue"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { FleetConfig, type RegistryEvent, ServerRegistry, ServerState } from "../src/index.js"
import { NodeFleet } from "../src/node/index.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const started = performance.now()
const elapsed = () => `${String(Math.round(performance.now() - started)).padStart(5)} ms`

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): Array<string> => {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  const line = (row: ReadonlyArray<string>) =>
    row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd()
  return [line(rows[0]!), widths.map((width) => "-".repeat(width)).join("  "), ...rows.slice(1).map(line)]
}

const clip = (text: string | undefined, max = 58) =>
  text === undefined ? "" : (text = text.split("\n")[0]!).length > max ? `${text.slice(0, max - 1)}…` : text

const statusTable = (statuses: ReadonlyArray<ServerRegistry.ServerStatus>) =>
  table([
    ["server", "state", "protocol", "tools", "res", "prompts", "pid", "detail"],
    ...statuses.map((status) => [
      status.name,
      status.state._tag === "Connecting" && status.state.attempt > 1
        ? `Connecting #${status.state.attempt}`
        : status.state._tag,
      status.protocolVersion ?? "",
      String(status.counts.tools),
      String(status.counts.resources),
      String(status.counts.prompts),
      String(status.connection?.pid ?? ""),
      status.state._tag === "Ready"
        ? `${status.serverInfo?.name} ${status.serverInfo?.version}`
        : status.state._tag === "Failed"
        ? clip(ServerState.describe(status.state, Date.now()), 70)
        : ""
    ])
  ])

const describeEvent = (event: RegistryEvent.RegistryEvent): string | undefined => {
  switch (event._tag) {
    case "ServerStateChanged":
      return `${event.server}: ${event.previous._tag} → ${event.state._tag}`
    case "ToolsChanged":
      return `${event.server}: tools +${event.added.length} -${event.removed.length} ~${event.changed.length}`
    case "ResourcesChanged":
    case "PromptsChanged":
    case "ResourceTemplatesChanged":
      return `${event.server}: ${
        event._tag.replace("Changed", "").toLowerCase()
      } +${event.added.length} -${event.removed.length}`
    default:
      return undefined
  }
}

const program = Effect.gen(function*() {
  const config = yield* FleetConfig.load({ paths: [path.join(here, "fleet.json")] })
  const fleet = yield* ServerRegistry.make({ restart: { maxDelay: "2 seconds" } })
  const events = yield* fleet.subscribe

  // 1. Start the fleet and show its status as it changes.
  console.log(`Starting ${config.servers.length} servers from examples/fleet.json\n`)
  const tty = process.stdout.isTTY === true
  let drawn = 0
  const draw = Effect.gen(function*() {
    const lines = statusTable(yield* fleet.status)
    if (tty && drawn > 0) process.stdout.write(`\x1b[${drawn}A\x1b[J`)
    if (tty || drawn === 0) console.log(lines.join("\n"))
    drawn = lines.length
  })
  const live = yield* Queue.take(events).pipe(
    Effect.tap((event) =>
      tty ? draw : Effect.sync(() => console.log(`${elapsed()}  ${describeEvent(event) ?? event._tag}`))
    ),
    Effect.forever,
    Effect.fork
  )
  yield* fleet.reconcile(config.servers)
  yield* fleet.awaitReady({ servers: "settled", timeout: "60 seconds" })
  yield* fleet.awaitReady({ servers: ["everything", "memory", "filesystem"], timeout: "60 seconds" })
  yield* Fiber.interrupt(live)
  if (!tty) {
    console.log("")
    yield* draw
  }
  console.log(
    `\nUp after ${elapsed().trim()}: three servers ready; 'github' failed for good after 3 attempts, its stderr in the status.`
  )

  // 2. The merged catalog.
  const catalog = yield* SubscriptionRef.get(fleet.catalog)
  console.log(
    `\nTool catalog: ${catalog.tools.length} tools from ${new Set(catalog.tools.map((t) => t.server)).size} servers`
  )
  console.log(
    table([
      ["name", "server", "description"],
      ...catalog.tools.map((entry) => [entry.name, entry.server, clip(entry.tool.description)])
    ]).join("\n")
  )

  // 3. Calls on two servers, routed by qualified name.
  const text = (result: { content: ReadonlyArray<{ type: string }> }) =>
    result.content.map((block) => ("text" in block ? String(block.text) : `[${block.type}]`)).join(" ")
  const echo = yield* fleet.callTool("mcp__everything__echo", { message: "hello from mcp-fleet" })
  console.log(`\ncall mcp__everything__echo → ${clip(text(echo), 80)}`)
  const listing = yield* fleet.callTool("mcp__filesystem__list_directory", { path: here })
  console.log(`call mcp__filesystem__list_directory → ${clip(text(listing).replace(/\n/g, ", "), 80)}`)

  // 4. Reconcile: 'everything' leaves, 'notes' (a second memory server) joins; the rest stay untouched.
  const memoryPid = (yield* fleet.status).find((status) => status.name === "memory")?.connection?.pid
  const notes = { ...config.servers.find((spec) => spec.name === "memory")!, name: "notes" }
  const desired = [...config.servers.filter((spec) => spec.name !== "everything"), notes]
  yield* Queue.takeAll(events)
  const result = yield* fleet.reconcile(desired)
  console.log(
    `\nreconcile → added [${result.added}] removed [${result.removed}] restarted [${result.restarted}] unchanged [${result.unchanged}]`
  )
  yield* fleet.awaitReady({ servers: ["notes"], timeout: "60 seconds" })
  for (const event of yield* Queue.takeAll(events)) {
    const line = describeEvent(event)
    if (line !== undefined && !line.startsWith("github")) console.log(`  event  ${line}`)
  }
  const memoryAfter = (yield* fleet.status).find((status) => status.name === "memory")?.connection?.pid
  console.log(`  'memory' kept its process: pid ${memoryPid} → ${memoryAfter}`)
  const after = yield* SubscriptionRef.get(fleet.catalog)
  console.log(`  catalog now has ${after.tools.length} tools (was ${catalog.tools.length})`)
  console.log("\nClosing the fleet: every server's process tree is ended.")
}).pipe(
  Effect.scoped,
  // The fleet logs each failed start as a warning; here the status table shows them instead.
  Logger.withMinimumLogLevel(LogLevel.Error),
  Effect.provide(NodeFleet.layer)
)

NodeRuntime.runMain(program)
